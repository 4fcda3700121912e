"""Java .properties parsing and YCSB's -P/-p merge order.

YCSB reads each -P file in order into one Properties object (later files override earlier
ones), then applies every -p key=value on top. We keep where each value came from
(file and line, or the command line) so that an error can point at it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from workbench.config import catalog
from workbench.errors import ConfigError


@dataclass(frozen=True)
class Origin:
    """Where a property value was set."""

    source: str  # a file path, or "-p" for the command line
    line: int = 0

    def __str__(self) -> str:
        return f"{self.source}:{self.line}" if self.line else self.source


class Properties:
    """An ordered key -> value map that remembers the origin of each value."""

    def __init__(self) -> None:
        self._values: dict[str, str] = {}
        self._origins: dict[str, Origin] = {}

    def set(self, key: str, value: str, origin: Origin) -> None:
        self._values[key] = value
        self._origins[key] = origin

    def get(self, key: str, default: str | None = None) -> str | None:
        return self._values.get(key, default)

    def origin(self, key: str) -> Origin | None:
        return self._origins.get(key)

    def __contains__(self, key: object) -> bool:
        return key in self._values

    def keys(self) -> list[str]:
        return list(self._values)

    def as_dict(self) -> dict[str, str]:
        return dict(self._values)

    def copy(self) -> Properties:
        other = Properties()
        other._values = dict(self._values)
        other._origins = dict(self._origins)
        return other


# Java ends lines at \r, \n and \r\n only; str.splitlines would also split at \f (a separator in
# .properties), \x0b and \x85 ("..." in cp1252 files, which we read as latin-1).
_LINE_END = re.compile(r"\r\n|\r|\n")


def _logical_lines(text: str):
    """Yield (line_number, logical_line) joining backslash continuations, as Java does."""
    pending: list[str] = []
    start = 0
    for number, raw in enumerate(_LINE_END.split(text), start=1):
        line = raw.lstrip(" \t\f") if pending else raw
        if not pending:
            stripped = line.lstrip(" \t\f")
            if not stripped or stripped[0] in "#!":
                continue
            line = stripped
            start = number
        # An odd number of trailing backslashes means a continuation.
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:
            pending.append(line[:-1])
            continue
        pending.append(line)
        yield start, "".join(pending)
        pending = []
    if pending:
        yield start, "".join(pending)


_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}


def _unescape(text: str, origin: Origin) -> str:
    out: list[str] = []
    i = 0
    while i < len(text):
        ch = text[i]
        if ch != "\\" or i + 1 >= len(text):
            out.append(ch)
            i += 1
            continue
        nxt = text[i + 1]
        if nxt == "u":
            hexdigits = text[i + 2 : i + 6]
            try:
                out.append(chr(int(hexdigits, 16)))
            except ValueError:
                raise ConfigError(
                    f"{origin}: malformed \\u escape '\\u{hexdigits}'",
                    "write \\u followed by four hex digits",
                ) from None
            i += 6
            continue
        out.append(_ESCAPES.get(nxt, nxt))
        i += 2
    return "".join(out)


def _split_key_value(line: str) -> tuple[str, str]:
    """Split at the first unescaped '=', ':' or whitespace, per java.util.Properties.load."""
    i = 0
    while i < len(line):
        ch = line[i]
        if ch == "\\":
            i += 2
            continue
        if ch in "=: \t\f":
            break
        i += 1
    key = line[:i]
    rest = line[i:].lstrip(" \t\f")
    if rest[:1] in ("=", ":"):
        rest = rest[1:].lstrip(" \t\f")
    return key, rest


def parse_properties(text: str, source: str) -> list[tuple[str, str, Origin]]:
    """Parse the text of a .properties file into (key, value, origin) in file order."""
    entries = []
    for number, line in _logical_lines(text):
        origin = Origin(source, number)
        raw_key, raw_value = _split_key_value(line)
        key = _unescape(raw_key, origin)
        if not key:
            raise ConfigError(f"{origin}: line has a value but no property name", "write key=value")
        entries.append((key, _unescape(raw_value, origin), origin))
    return entries


def load_file(props: Properties, path: str | Path) -> None:
    """Read one -P file into props (later values override earlier ones)."""
    p = catalog.workload_file(path)
    try:
        text = p.read_text(encoding="latin-1")
    except FileNotFoundError:
        names = ", ".join(catalog.available("workloads"))
        raise ConfigError(
            f"workload file not found: {p}", f"check the path given to -P, or give a name: {names}"
        ) from None
    except IsADirectoryError:
        raise ConfigError(f"workload file is a directory: {p}", "give -P a .properties file") from None
    for key, value, origin in parse_properties(text, str(p)):
        props.set(key, value, origin)


def parse_override(text: str) -> tuple[str, str]:
    """Split one -p argument 'key=value'."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise ConfigError(f"-p {text!r} is not key=value", "write -p name=value, e.g. -p recordcount=1000")
    return key.strip(), value.strip()


def merge(files: list[str | Path], overrides: list[str]) -> Properties:
    """YCSB's order: every -P file in turn, then every -p on top."""
    props = Properties()
    for path in files:
        load_file(props, path)
    for item in overrides:
        key, value = parse_override(item)
        props.set(key, value, Origin("-p"))
    return props
