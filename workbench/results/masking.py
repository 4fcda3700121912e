"""Secrets kept out of what a run records: the run store, every export, the app.

A property whose name says password is shown as ***; a connection string (mongodb.url) keeps
everything but the password in its user information: mongodb://bench:***@host/ycsb?w=1.
"""

from __future__ import annotations

import re

MASK = "***"
_URL_PASSWORD = re.compile(r"^([a-z][a-z0-9+.-]*://[^:/?#@]*:)([^@/?#]*)(@)", re.IGNORECASE)


def masked(properties: dict[str, str]) -> dict[str, str]:
    """The properties as they may be recorded and shown."""
    return {k: mask(k, v) for k, v in properties.items()}


def mask(key: str, value: str) -> str:
    if "password" in key.lower():
        return MASK
    if "://" in value and "@" in value:
        return _URL_PASSWORD.sub(rf"\g<1>{MASK}\g<3>", value)
    return value
