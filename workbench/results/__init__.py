"""Run results: the result model, exporters and importers (YCSB text, CSV, HdrHistogram log, JSON)."""
