"""An external MongoDB-protocol server (clusters/external.py, kind = "mongodb"): the check that it
answers and accepts the login, and its honest name and version."""

from __future__ import annotations

from workbench.clusters.external import ExternalSpec, reason
from workbench.databases.mongodb.server_name import mongodb_server_name
from workbench.errors import ClusterError


def check_mongodb(spec: ExternalSpec) -> tuple[str, int]:
    from pymongo import MongoClient
    from pymongo.errors import ConfigurationError, OperationFailure, PyMongoError

    try:
        client = MongoClient(spec.mongodb_url(), serverSelectionTimeoutMS=10000, connectTimeoutMS=10000)
    except (ConfigurationError, ValueError) as exc:
        raise ClusterError(f"{spec.name}: cannot use its MongoDB URL: {reason(exc)}",
                           hint="check url, tls and ca_file in the cluster file") from None
    try:
        client.admin.command("ping")
        # A login is only checked by a command that needs it: list this database's collections.
        client.get_default_database("ycsb").list_collection_names()
        return mongodb_server_name(client.admin.command("buildInfo")), len(client.nodes) or len(spec.hosts)
    except OperationFailure as exc:
        raise ClusterError(f"{spec.name}: the MongoDB server refused the login or a command: {reason(exc)}",
                           hint="check username, password (or password_env) and authSource") from None
    except PyMongoError as exc:
        where = ", ".join(f"{h}:{spec.client_port}" for h in spec.hosts)
        raise ClusterError(f"{spec.name}: no MongoDB-protocol server answers at {where}: {reason(exc)}",
                           hint="check url, tls and ca_file in the cluster file") from None
    finally:
        client.close()
