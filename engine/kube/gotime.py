"""Go's time.ParseDuration, as the controller manager's duration flags read their values (pflag)."""

from __future__ import annotations

from fractions import Fraction

# nanoseconds per unit (time.unitMap)
_UNITS = {
    "ns": 1,
    "us": 1_000,
    "\u00b5s": 1_000,  # U+00B5 micro sign
    "\u03bcs": 1_000,  # U+03BC Greek small letter mu
    "ms": 1_000_000,
    "s": 1_000_000_000,
    "m": 60_000_000_000,
    "h": 3_600_000_000_000,
}
_LIMIT = 2**63  # a Duration is an int64 of nanoseconds


def _quote(text: str) -> str:
    """time's own quote: control and non-ASCII characters as \\x bytes, quotes and backslashes escaped."""
    out = []
    for c in text:
        if ord(c) < 0x20 or ord(c) >= 0x80:
            out += [f"\\x{b:02x}" for b in c.encode("utf-8", "surrogatepass")]
        else:
            out.append("\\" + c if c in '"\\' else c)
    return '"' + "".join(out) + '"'


def _leading_int(s: str) -> tuple[int, str] | None:
    """leadingInt: the leading ASCII digits as a uint64 up to 2^63; None on overflow."""
    x, i = 0, 0
    while i < len(s) and "0" <= s[i] <= "9":
        if x > _LIMIT // 10:
            return None
        x = x * 10 + ord(s[i]) - 48
        if x > _LIMIT:
            return None
        i += 1
    return x, s[i:]


def _leading_fraction(s: str) -> tuple[int, float, str]:
    """leadingFraction: the leading digits, and the float scale of those kept (precision stops growing
    where the integer would overflow)."""
    x, scale, i, overflow = 0, 1.0, 0, False
    while i < len(s) and "0" <= s[i] <= "9":
        if not overflow:
            if x > (_LIMIT - 1) // 10:
                overflow = True
            else:
                y = x * 10 + ord(s[i]) - 48
                if y > _LIMIT:
                    overflow = True
                else:
                    x, scale = y, scale * 10
        i += 1
    return x, scale, s[i:]


def parse_duration(text: str) -> Fraction:
    """time.ParseDuration ``[-+]?([0-9]*(\\.[0-9]*)?[a-z]+)+``, step for step (a fraction of a unit goes
    through a float64 as in Go): seconds, exactly; ValueError in Go's words (``time: unknown unit "d" in
    duration "2d"``)."""
    invalid = ValueError(f"time: invalid duration {_quote(text)}")
    s, negative = text, False
    if s[:1] in ("-", "+"):
        negative, s = s[0] == "-", s[1:]
    if s == "0":
        return Fraction(0)
    if not s:
        raise invalid
    d = 0
    while s:
        if not (s[0] == "." or "0" <= s[0] <= "9"):
            raise invalid
        before = len(s)
        leading = _leading_int(s)
        if leading is None:
            raise invalid
        v, s = leading
        pre = before != len(s)
        f, scale, post = 0, 1.0, False
        if s[:1] == ".":
            s = s[1:]
            before = len(s)
            f, scale, s = _leading_fraction(s)
            post = before != len(s)
        if not pre and not post:
            raise invalid
        i = 0
        while i < len(s) and not (s[i] == "." or "0" <= s[i] <= "9"):
            i += 1
        if i == 0:
            raise ValueError(f"time: missing unit in duration {_quote(text)}")
        name, s = s[:i], s[i:]
        unit = _UNITS.get(name)
        if unit is None:
            raise ValueError(f"time: unknown unit {_quote(name)} in duration {_quote(text)}")
        if v > _LIMIT // unit:
            raise invalid
        v *= unit
        if f > 0:
            v += int(float(f) * (float(unit) / scale))
            if v > _LIMIT:
                raise invalid
        d += v
        if d > _LIMIT:
            raise invalid
    if not negative and d > _LIMIT - 1:
        raise invalid
    return Fraction(-d if negative else d, 1_000_000_000)


def duration_of_seconds(seconds: int) -> int:
    """time.Duration(seconds) * time.Second as Go computes it: nanoseconds, the product wrapped around int64 (so a
    tolerationSeconds beyond 9,223,372,036, 292 years, lands in the past or the far future)."""
    return (seconds * 1_000_000_000 + _LIMIT) % (2 * _LIMIT) - _LIMIT
