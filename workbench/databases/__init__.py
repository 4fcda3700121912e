"""The databases: each described once (base.py's `Database`, one module each here for the
built-ins) and found through the `workbench.databases` entry point group (registry.py), the
built-ins as a third party's. The rest of the program asks these instead of naming a database."""

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
