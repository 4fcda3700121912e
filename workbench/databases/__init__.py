"""The databases: each described once (base.py's `Database`; a built-in is one folder here, its
descriptor in its __init__.py and every module of its own beside it) and found through the
`workbench.databases` entry point group (registry.py), the built-ins as a third party's.
The rest of the program asks these instead of naming a database."""

from workbench.databases.base import Database, Server, resolve
from workbench.databases.registry import (
    database,
    databases,
    find,
    in_process,
    names,
    server,
    servers,
    serving,
)

__all__ = ["Database", "Server", "database", "databases", "find", "in_process", "names", "resolve",
           "server", "servers", "serving"]
