"""What the databases' option parsers (databases/<name>/options.py) share: a property's bounded
integer, refused with the same message whichever database's property it is."""

from __future__ import annotations

from workbench.errors import ConfigError


def bounded_int(key: str, text: str, low: int, high: int) -> int:
    """`text` as an integer from low to high; ConfigError naming the key otherwise."""
    try:
        value = int(text.strip())
    except ValueError:
        value = low - 1
    if not low <= value <= high:
        raise ConfigError(f"{key}={text!r} is not an integer from {low} to {high}")
    return value
