"""The honest name of a MongoDB-protocol server from its buildInfo, which the binding, the
external cluster's check and the Docker planner all say. Imports nothing: the descriptor's floor."""

from __future__ import annotations

from typing import Any


def mongodb_server_name(info: dict[str, Any]) -> str:
    """An honest name for the server behind a buildInfo / server_info() answer: "FerretDB 1.24.2
    (MongoDB protocol, reports 7.0.42)", "MongoDB 7.0.14".

    FerretDB reports a MongoDB version (7.0.42 for v1.24) for drivers' feature checks, and names
    itself only in `ferretdbVersion`: a report must not call it MongoDB 7.0."""
    version = str(info.get("version") or "").strip()
    ferret = str(info.get("ferretdbVersion") or "").strip().removeprefix("v")
    if ferret:
        return f"FerretDB {ferret} (MongoDB protocol, reports {version or 'no version'})"
    if not version:
        return "a MongoDB-protocol server that reports no version"
    edition = " Enterprise" if "enterprise" in (info.get("modules") or ()) else ""
    return f"MongoDB{edition} {version}"
