"""A MongoDB-protocol server's settings that change a run's figures, for its manifest
(results/server_settings.py asks the descriptor): the write concern the binding's properties ask
for, and FerretDB's storage from the cluster's spec."""

from __future__ import annotations

from typing import Any
from urllib.parse import parse_qs, urlsplit


def mongodb_settings(props: dict[str, str], spec: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"write_concern": write_concern(props)}
    if spec is not None and hasattr(spec, "backend"):  # FerretDB on its storage
        out["backend"] = spec.backend
        if spec.backend == "postgresql":
            out["shared_buffers"] = spec.shared_buffers
            out["postgres_fsync"] = spec.postgres_fsync
    return out


def write_concern(props: dict[str, str]) -> str:
    """mongodb.writeConcern when set, else the URL's w, journal and wtimeoutMS, else the server's
    default (the URL sets none)."""
    from workbench.databases.mongodb.options import DEFAULT_URL  # noqa: PLC0415

    legacy = props.get("mongodb.writeConcern", "").strip()
    if legacy:
        return f"{legacy} (mongodb.writeConcern)"
    query = parse_qs(urlsplit(props.get("mongodb.url", DEFAULT_URL).strip()).query)
    options = {k.lower(): v[-1] for k, v in query.items()}
    parts = [f"{name}={options[name.lower()]}" for name in ("w", "journal", "j", "wtimeoutMS")
             if name.lower() in options]
    return ", ".join(parts) if parts else "the server's default (the URL sets no w)"
