"""Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource), exactly.

A quantity is kept as a Fraction, so that sums and differences are exact; ``value`` and
``milli_value`` round up to an integer as Quantity.Value and Quantity.MilliValue do.
"""

from __future__ import annotations

import math
from fractions import Fraction

# the suffixes of quantitySuffixer (suffix.go): decimal SI and binary SI
_DECIMAL = {"n": -9, "u": -6, "m": -3, "": 0, "k": 3, "M": 6, "G": 9, "T": 12, "P": 15, "E": 18}
_BINARY = {"Ki": 10, "Mi": 20, "Gi": 30, "Ti": 40, "Pi": 50, "Ei": 60}
_SUFFIX_CHARS = frozenset("eEinumkKMGTP")
_DIGITS = frozenset("0123456789")
# what strings.TrimSpace trims of a quantity in an object as the API server receives it: Go's
# unicode.IsSpace less the characters JSON carries escaped (\t, \n, \v, \f, \r, U+2028, U+2029 arrive as
# "\t" and the like, which UnmarshalJSON does not unescape: no quantity then)
_GO_SPACE = " \x85\xa0\u1680" + "".join(map(chr, range(0x2000, 0x200B))) + "\u202f\u205f\u3000"
_INT64_MAX = 2**63 - 1
_NANO = Fraction(1, 10**9)

# Kubernetes' words (quantity.go ErrFormatWrong, ErrSuffix)
FORMAT_WRONG = "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
SUFFIX_WRONG = "unable to parse quantity's suffix"
NUMERIC_WRONG = "unable to parse numeric part of quantity"


def parse_quantity(raw: object) -> Fraction:
    """A quantity as the API server decodes it (Quantity.UnmarshalJSON, ParseQuantity): ``"500m"``,
    ``"4Gi"``, ``"1e3"``, ``2``, ``null`` (zero), surrounding white space trimmed; an exact Fraction, rounded
    up (away from zero) to a whole nano as Kubernetes keeps it, a binary-SI one capped at 2^63-1 as Kubernetes
    caps it. A decimal one of 2^63 or more is refused: Kubernetes keeps it, but its Value overflows an int64.
    Raises ValueError with Kubernetes' words and what was found."""
    if raw is None:
        return Fraction(0)
    if isinstance(raw, bool) or not isinstance(raw, int | float | str):
        raise ValueError(f"{FORMAT_WRONG}, found {raw!r}")
    if isinstance(raw, float) and not math.isfinite(raw):
        raise ValueError(f"{FORMAT_WRONG}, found {raw!r}")
    text = raw.strip(_GO_SPACE) if isinstance(raw, str) else repr(raw)
    if not text:
        raise ValueError(f"{FORMAT_WRONG}, found {raw!r}")
    try:
        value, binary = _parse(text)
    except ValueError as exc:
        raise ValueError(f"{exc}, found {raw!r}") from None
    if abs(value) > _INT64_MAX:
        if not binary:
            raise ValueError(f"{raw!r} is beyond what Kubernetes' Quantity.Value computes (an int64)")
        value = Fraction(_INT64_MAX if value > 0 else -_INT64_MAX)
    return value


def _parse(text: str) -> tuple[Fraction, bool]:
    """ParseQuantity: the value, and whether it is binary SI."""
    negative, digits, num, denom, suffix = _split(text)
    if suffix in _DECIMAL:
        base, exponent, binary = 10, _DECIMAL[suffix], False
    elif suffix in _BINARY:
        base, exponent, binary = 2, _BINARY[suffix], True
    elif len(suffix) > 1 and suffix[0] in "eE":
        try:
            parsed = int(suffix[1:], 10)  # strconv.ParseInt (the suffix is a sign and ASCII digits here)
        except ValueError:
            raise ValueError(SUFFIX_WRONG) from None
        if not -(2**63) <= parsed <= _INT64_MAX:
            raise ValueError(SUFFIX_WRONG)
        base, exponent, binary = 10, (parsed + 2**31) % 2**32 - 2**31, False  # int32(parsed)
    else:
        raise ValueError(SUFFIX_WRONG)
    if not digits and base == 10 and exponent - len(denom) < -9:
        raise ValueError(NUMERIC_WRONG)  # past the int64 fast path, inf.Dec reads no number in "." or "+."
    if not num.strip("0") and not denom.strip("0"):
        return Fraction(0), binary
    magnitude = Fraction(int(num + denom), 10 ** len(denom))
    if base == 2:
        magnitude *= 2**exponent
    elif exponent > 40:  # at least 10^22 (a mantissa of nanos): beyond int64 whatever the digits
        magnitude = Fraction(2**64)
    elif exponent < -40:  # below a nano: rounded up to one
        magnitude = _NANO
    else:
        magnitude *= Fraction(10) ** exponent
    magnitude = math.ceil(magnitude / _NANO) * _NANO  # round up to a nano, away from zero
    return (-magnitude if negative else magnitude), binary


def _split(text: str) -> tuple[bool, bool, str, str, str]:
    """parseQuantityString: (negative, whether the number has a digit, numerator digits, denominator
    digits, suffix); ValueError (ErrFormatWrong) for what does not match."""
    pos, end = 0, len(text)
    negative = text[0] == "-"
    if text[0] in "+-":
        pos = 1
    first = pos
    while pos < end and text[pos] == "0":
        pos += 1
    if pos >= end:
        return negative, True, "0", "", ""
    start = pos
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    num = text[start:pos] or "0"
    denom = ""
    if pos < end and text[pos] == ".":
        pos += 1
        start = pos
        while pos < end and text[pos] in _DIGITS:
            pos += 1
        denom = text[start:pos]
    suffix_start = pos
    while pos < end and text[pos] in _SUFFIX_CHARS:
        pos += 1
    if pos < end and text[pos] in "+-":
        pos += 1
    while pos < end and text[pos] in _DIGITS:
        pos += 1
    if pos < end:
        raise ValueError(FORMAT_WRONG)
    digits = any(c in _DIGITS for c in text[first:suffix_start])
    return negative, digits, num, denom, text[suffix_start:]


def binary_si(raw: object) -> bool:
    """Whether resource.Quantity parses ``raw`` in the BinarySI format: a ``Ki`` … ``Ei`` suffix, unless the
    value lies strictly between 0 and 1 in magnitude (ParseQuantity makes that DecimalSI); a plain number,
    a decimal suffix or an exponent is DecimalSI / DecimalExponent. False for what is no quantity."""
    if not isinstance(raw, str) or not raw.strip(_GO_SPACE):
        return False
    try:
        value, binary = _parse(raw.strip(_GO_SPACE))
    except ValueError:
        return False
    return binary and not 0 < abs(value) < 1


def as_int64(q: Fraction, binary: bool) -> int:
    """quantityAsInt64 of Karmada's general estimator (pkg/estimator/client/general.go): MilliValue for a
    decimal quantity, Value for a binary one, whatever the resource."""
    return value(q) if binary else milli_value(q)


def value(q: Fraction) -> int:
    """Quantity.Value: rounded up to an integer."""
    return math.ceil(q)


def milli_value(q: Fraction) -> int:
    """Quantity.MilliValue: thousandths, rounded up."""
    return math.ceil(q * 1000)
