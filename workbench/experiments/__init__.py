"""Experiments: the published YCSB studies as files (plan.py) and one resumable command (runner.py)."""
