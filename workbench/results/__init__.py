"""Run results: the result model, its exporters and importers.

Formats: YCSB text and status lines, CSV, HdrHistogram interval log, JSON.
"""
