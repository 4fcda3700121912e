"""Numbers printed the way YCSB's Java code prints them.

`java_double` mirrors `Double.toString` (shortest repr, scientific notation at 1e7 and above
and below 1e-3); `decimal_2` mirrors `new DecimalFormat("#.##")` used in status lines;
`java_long` and `java_divide` mirror a `(long)` cast and a double division.
"""

from __future__ import annotations

import math
from decimal import ROUND_HALF_EVEN, Decimal


def java_double(x: float) -> str:
    """Format a double exactly like Java's Double.toString for finite values in practice."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):
        return "Infinity" if x > 0 else "-Infinity"
    if x == 0:
        return "-0.0" if math.copysign(1.0, x) < 0 else "0.0"
    a = abs(x)
    if 1e-3 <= a < 1e7:
        r = repr(float(x))
        if "e" in r or "E" in r:  # repr switches to exponent form below 1e-4 only; be safe
            r = format(Decimal(r), "f")
        return r if "." in r else r + ".0"
    # Scientific: d.dddE<exp> with the shortest round-trip digits.
    sign = "-" if x < 0 else ""
    digits, exponent = _shortest_digits(a)
    mantissa = digits[0] + "." + (digits[1:] or "0")
    return f"{sign}{mantissa}E{exponent}"


def _shortest_digits(a: float) -> tuple[str, int]:
    """Digits of repr(a) without the dot, and the decimal exponent of the first digit."""
    d = Decimal(repr(a))
    sign, digit_tuple, exp = d.as_tuple()
    digits = "".join(map(str, digit_tuple)).rstrip("0") or "0"
    exponent = len(digit_tuple) + exp - 1
    return digits, exponent


def parse_java_number(text: str) -> int | float:
    """Read a value as YCSB printed it: an integer stays int, anything else is float."""
    text = text.strip()
    try:
        return int(text)
    except ValueError:
        return float(text)  # handles 1.2345678E7, NaN, Infinity


def decimal_2(x: float) -> str:
    """Java's DecimalFormat("#.##"): at most two decimals, half-even on the exact binary value."""
    if math.isnan(x):
        return "NaN"
    if math.isinf(x):  # DecimalFormatSymbols' infinity sign
        return "\u221e" if x > 0 else "-\u221e"
    q = Decimal(float(x)).quantize(Decimal("0.01"), rounding=ROUND_HALF_EVEN)
    text = format(q, "f")
    if "." in text:
        text = text.rstrip("0").rstrip(".")
    if text in ("-0", ""):
        text = "0"
    return text


JAVA_LONG_MIN = -(2**63)
JAVA_LONG_MAX = 2**63 - 1


def java_long(x: float) -> int:
    """Java's `(long) x`: NaN is 0, out-of-range values saturate, the rest truncate to zero."""
    if math.isnan(x):
        return 0
    if x >= JAVA_LONG_MAX:
        return JAVA_LONG_MAX
    if x <= JAVA_LONG_MIN:
        return JAVA_LONG_MIN
    return int(x)


def java_divide(a: float, b: float) -> float:
    """Java's double division, which yields NaN or an infinity where Python raises."""
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        negative = (a < 0) != (math.copysign(1.0, b) < 0)
        return -math.inf if negative else math.inf
    return a / b
