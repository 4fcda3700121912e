"""The test suite's own helpers (servers, tiers, lifetimes, the fast tier alongside, ...),
imported by this package's name: `from tests.support import servers`. They used to sit loose at
the top of tests/, where `wheel` shadowed PyPI's package of that name."""
