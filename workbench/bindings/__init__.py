"""Database bindings behind one small async protocol (see base.py); found by name in registry.py."""
