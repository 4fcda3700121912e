"""The workbench's own CQL client, with no YCSB in it: cql.py (frames, values, rows, statements),
connection.py, session.py, settings.py, metadata.py, routing.py, reconnect.py; blocking.py (one
blocking connection for the servers' figures)."""
