"""The toy's properties: toy.store (the store's name) and toy.preload (a run on an empty store
writes the records a load would have first). Any other toy.* key is refused in one line."""

from __future__ import annotations

from dataclasses import dataclass

from workbench.errors import ConfigError

PROPERTIES = ("toy.store", "toy.preload")


@dataclass(frozen=True)
class ToyOptions:
    store: str = "default"
    preload: bool = True


def parse(properties: dict[str, str]) -> ToyOptions:
    unknown = sorted(k for k in properties if k.startswith("toy.") and k not in PROPERTIES)
    if unknown:
        raise ConfigError(f"unknown toy property {unknown[0]!r}", f"valid ones: {', '.join(PROPERTIES)}")
    preload = properties.get("toy.preload", "true").strip().lower()
    if preload not in ("true", "false"):
        raise ConfigError(f"toy.preload={preload!r} is not true or false", "write true or false")
    return ToyOptions(properties.get("toy.store", "default"), preload == "true")


def client_name(properties: dict[str, str]) -> str:
    """What a run records as its client (runs show's 'client')."""
    return f"toy store {parse(properties).store!r} (in-process)"
