"""workbench: an interactive terminal workbench for YCSB-style NoSQL benchmarks."""

__version__ = "0.1.0"
