"""The terminal app (Textual): clusters, workload composer, live run dashboard, comparison.

The only package that imports textual. It renders and takes keys; runs go through
`workbench.drive.background.BackgroundRun` (a Controller on its own thread, lanes in worker
processes) and clusters through the providers, both from `session.Session`.
"""
