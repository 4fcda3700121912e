"""workbench: an interactive terminal workbench for YCSB-style NoSQL benchmarks."""

# The one place the version is written: pyproject.toml reads it (tool.setuptools.dynamic).
__version__ = "0.2.0"
