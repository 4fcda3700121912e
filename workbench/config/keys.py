"""Key names exactly as YCSB's Java client builds them.

`fnvhash64` is FNV-1a 64-bit over the 8 bytes of the number, least significant byte first,
then the absolute value of the result read as a signed 64-bit integer (Utils.fnvhash64).
Where workbench._speedups is built (workbench/speedups.py), `fnvhash64` and the key
builder are its compiled versions of the Python below, which they match exactly.
"""

from __future__ import annotations

from workbench import speedups

_OFFSET = 0xCBF29CE484222325
_PRIME = 1099511628211
_MASK = 0xFFFFFFFFFFFFFFFF
_SIGN = 1 << 63


# After the first byte the state is one of 256 values; after three zero bytes it is the
# state times PRIME**3. Key numbers and zipfian draws (< 10^10) are below 2^40, so their top
# three bytes are zero: those take five steps instead of eight.
_FIRST = tuple(((_OFFSET ^ b) * _PRIME) & _MASK for b in range(256))
_PRIME_4 = pow(_PRIME, 4, 1 << 64)
_SMALL = 1 << 40


def fnvhash64_python(value: int) -> int:
    """YCSB's Utils.fnvhash64 for a non-negative long (unrolled: this is on the hot path)."""
    if value < _SMALL:
        h = _FIRST[value & 0xFF]
        h = ((h ^ ((value >> 8) & 0xFF)) * _PRIME) & _MASK
        h = ((h ^ ((value >> 16) & 0xFF)) * _PRIME) & _MASK
        h = ((h ^ ((value >> 24) & 0xFF)) * _PRIME) & _MASK
        h = ((h ^ (value >> 32)) * _PRIME_4) & _MASK
        return (1 << 64) - h if h >= _SIGN else h
    h = _OFFSET
    h = ((h ^ (value & 0xFF)) * _PRIME) & _MASK
    h = ((h ^ ((value >> 8) & 0xFF)) * _PRIME) & _MASK
    h = ((h ^ ((value >> 16) & 0xFF)) * _PRIME) & _MASK
    h = ((h ^ ((value >> 24) & 0xFF)) * _PRIME) & _MASK
    h = ((h ^ ((value >> 32) & 0xFF)) * _PRIME) & _MASK
    h = ((h ^ ((value >> 40) & 0xFF)) * _PRIME) & _MASK
    h = ((h ^ ((value >> 48) & 0xFF)) * _PRIME) & _MASK
    h = ((h ^ ((value >> 56) & 0xFF)) * _PRIME) & _MASK
    # Java: Math.abs((long) h). Long.MIN_VALUE stays negative there; it cannot be a key.
    return (1 << 64) - h if h >= _SIGN else h


fnvhash64 = speedups.C.fnvhash64 if speedups.C is not None else fnvhash64_python


def build_key_name(keynum: int, zeropadding: int = 1, ordered: bool = False) -> str:
    """CoreWorkload.buildKeyName: "user" + zero padding + (hashed or plain) key number."""
    if not ordered:
        keynum = fnvhash64(keynum)
    digits = str(keynum)
    fill = zeropadding - len(digits)
    if fill > 0:
        return "user" + "0" * fill + digits
    return "user" + digits


def key_builder(zeropadding: int, ordered: bool, cache: dict[int, str] | None = None,
                cache_limit: int = 0):
    """A fast one-argument key-name function for a lane's hot loop.

    With the compiled builder (workbench._speedups), a name is built each time: that costs less
    than a Python function looking it up. Otherwise, with a cache (shared by the lanes of a
    worker), names of keys drawn again, which skewed distributions do all the time, are looked
    up instead of rebuilt; it stops growing at cache_limit entries, so memory stays bounded
    whatever the key space."""
    if speedups.C is not None:
        return speedups.C.KeyNamer(zeropadding, ordered)
    if zeropadding <= 1:
        if ordered:
            build = lambda keynum: "user" + str(keynum)  # noqa: E731
        else:
            hashed = fnvhash64_python
            build = lambda keynum: "user" + str(hashed(keynum))  # noqa: E731
    else:
        build = lambda keynum: build_key_name(keynum, zeropadding, ordered)  # noqa: E731
    if cache is None or cache_limit <= 0:
        return build
    get = cache.get

    def cached(keynum: int) -> str:
        name = get(keynum)
        if name is None:
            name = build(keynum)
            if len(cache) < cache_limit:
                cache[keynum] = name
        return name

    return cached
