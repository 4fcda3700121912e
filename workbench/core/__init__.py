"""The engine: spec -> per-lane operation stream -> async runner -> metrics. No UI, no drivers."""
