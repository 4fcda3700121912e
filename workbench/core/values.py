"""Field values: random printable ASCII, or YCSB's deterministic values for dataintegrity.

Deterministic values follow CoreWorkload.buildDeterministicValue: start from "key:field", then
append ':' and the Java String.hashCode of everything so far until the length is reached.
"""

from __future__ import annotations

import random

# Map any byte onto printable ASCII ' '..'~' (YCSB's RandomByteIterator uses codes 32-127).
_PRINTABLE = bytes(32 + (b % 95) for b in range(256))


def random_value(rng: random.Random, length: int) -> str:
    return rng.randbytes(length).translate(_PRINTABLE).decode("ascii")


def _java_hash_extend(h: int, text: str) -> int:
    for ch in text:
        h = (31 * h + ord(ch)) & 0xFFFFFFFF
    return h


def _signed32(h: int) -> int:
    return h - (1 << 32) if h >= (1 << 31) else h


def deterministic_value(key: str, field: str, size: int) -> str:
    """CoreWorkload.buildDeterministicValue(key, field) truncated to size characters."""
    text = key + ":" + field
    h = _java_hash_extend(0, text)
    parts = [text]
    length = len(text)
    while length < size:
        h = _java_hash_extend(h, ":")
        piece = str(_signed32(h))
        h = _java_hash_extend(h, piece)
        parts.append(":")
        parts.append(piece)
        length += 1 + len(piece)
    return "".join(parts)[:size]


class ValueMaker:
    """Builds the values of inserts and updates for one lane."""

    def __init__(self, rng: random.Random, spec, length_gen) -> None:
        self.rng = rng
        self.fields = spec.field_names
        self.integrity = spec.dataintegrity
        self.length_gen = length_gen
        self.longest = getattr(length_gen, "longest", spec.fieldlength)  # an upper bound per field
        self._constant = length_gen.next() if spec.fieldlengthdistribution == "constant" else None
        # The usual case, on the hot path: every value random_value(rng, random_length).
        self.random_length = self._constant if not self.integrity else None
        if self.random_length is not None:
            randbytes, n = rng.randbytes, self.random_length
            self.one_field = lambda key, field: {field: randbytes(n).translate(_PRINTABLE).decode("ascii")}

    def _value(self, key: str, field: str) -> str:
        if self.integrity:
            return deterministic_value(key, field, self.length_gen.next())
        n = self._constant if self._constant is not None else self.length_gen.next()
        return self.rng.randbytes(n).translate(_PRINTABLE).decode("ascii")

    def all_fields(self, key: str) -> dict[str, str]:
        if self._constant is not None and not self.integrity:
            n = self._constant
            blob = self.rng.randbytes(n * len(self.fields)).translate(_PRINTABLE).decode("ascii")
            return {f: blob[i * n : (i + 1) * n] for i, f in enumerate(self.fields)}
        return {f: self._value(key, f) for f in self.fields}

    def one_field(self, key: str, field: str) -> dict[str, str]:
        return {field: self._value(key, field)}


def verify_row(key: str, row: dict[str, str] | None, size: int) -> bool:
    """True when every returned field holds the value dataintegrity expects (and there is one)."""
    if not row:
        return False
    return all(value == deterministic_value(key, f, size) for f, value in row.items())
