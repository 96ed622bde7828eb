"""Kubernetes resource quantities (k8s.io/apimachinery/pkg/api/resource), exactly.

A quantity is kept as a Fraction, so that sums and differences are exact; ``value`` and
``milli_value`` round up to an integer as Quantity.Value and Quantity.MilliValue do.
"""

from __future__ import annotations

import math
import re
from fractions import Fraction

_SUFFIXES = {
    "": Fraction(1),
    "n": Fraction(1, 10**9),
    "u": Fraction(1, 10**6),
    "m": Fraction(1, 1000),
    "k": Fraction(10**3),
    "M": Fraction(10**6),
    "G": Fraction(10**9),
    "T": Fraction(10**12),
    "P": Fraction(10**15),
    "E": Fraction(10**18),
    "Ki": Fraction(2**10),
    "Mi": Fraction(2**20),
    "Gi": Fraction(2**30),
    "Ti": Fraction(2**40),
    "Pi": Fraction(2**50),
    "Ei": Fraction(2**60),
}
_QUANTITY = re.compile(r"([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:([eE][+-]?[0-9]+)|(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE])?)")
# resource.Quantity refuses what it cannot hold (int64 with a scale): a bound for what fleetrules accepts
_LIMIT = Fraction(2**63)


def parse_quantity(raw: object) -> Fraction:
    """``"500m"``, ``"4Gi"``, ``"1e3"``, ``2`` → an exact Fraction; raises ValueError with a message."""
    if isinstance(raw, bool) or raw is None:
        raise ValueError(f"expected a quantity such as 500m or 4Gi, found {raw!r}")
    if isinstance(raw, int):
        value = Fraction(raw)
    elif isinstance(raw, float):
        if not math.isfinite(raw):
            raise ValueError(f"expected a quantity such as 500m or 4Gi, found {raw!r}")
        value = Fraction(str(raw))
    elif isinstance(raw, str):
        match = _QUANTITY.fullmatch(raw.strip())
        if match is None or raw != raw.strip():
            raise ValueError(f"quantities must match the regular expression of resource.Quantity, found {raw!r}")
        sign, number, exponent, suffix = match.groups()
        if exponent is not None and abs(int(exponent[1:])) > 30:
            raise ValueError(f"{raw!r} is beyond the quantities Kubernetes holds")
        value = Fraction(number) * (Fraction(10) ** int(exponent[1:]) if exponent else _SUFFIXES[suffix or ""])
        if sign == "-":
            value = -value
    else:
        raise ValueError(f"expected a quantity such as 500m or 4Gi, found {raw!r}")
    if abs(value) >= _LIMIT:
        raise ValueError(f"{raw!r} is beyond the quantities Kubernetes holds")
    return value


def binary_si(raw: object) -> bool:
    """Whether resource.Quantity parses ``raw`` in the BinarySI format (a ``Ki`` … ``Ei`` suffix); a plain
    number, a decimal suffix or an exponent is DecimalSI / DecimalExponent."""
    return isinstance(raw, str) and raw.endswith(("Ki", "Mi", "Gi", "Ti", "Pi", "Ei"))


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
