"""Lessons for a class: guided live experiments whose checks read the student's own figures.

model.py reads and checks a lesson file (TOML steps, Markdown text), checks.py the check
expressions, figures.py what a measured step offers them, runner.py runs a lesson through the
headless layer (drive/) and keeps each student's progress in the run store. No textual here: the
app's Lessons screen stands on the same runner.
"""
