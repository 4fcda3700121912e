"""The headless layer every front end drives runs, clusters and faults through.

The app (`ui/`), the command line (`commands/`) and lessons (`lessons/`) all stand on it: a
`Session` (session.py) runs requests and scripted tasks on a thread of its own, each phase as a
`BackgroundRun` (background.py: a Controller on its own thread and loop, newest `LiveState` for a
viewer); demo.py is the demo's script. Nothing here imports textual or anything from `ui/`.
"""
