"""Latency recording (HdrHistogram, microseconds, 3 significant digits) and interval snapshots."""
