"""Resource quantities as the API server decodes them (engine/kube/quantity.py): tests/data/quantity holds
800 quantities as an object carries them (JSON strings and numbers) and what Kubernetes' own
resource.Quantity made of each (UnmarshalJSON, then Value and MilliValue; apimachinery at eed236ce)."""

from __future__ import annotations

import json
from collections import Counter
from fractions import Fraction
from pathlib import Path
from typing import Any

import pytest

from engine.kube.quantity import FORMAT_WRONG, SUFFIX_WRONG, binary_si, milli_value, parse_quantity, value

DATA = Path(__file__).parent / "data" / "quantity"
INT64_MAX = 2**63 - 1


def test_quantities_decode_as_kubernetes_decodes_them() -> None:
    """The same error, in Kubernetes' words, or the same Value, MilliValue and format. Where fleetrules departs
    (each counted): a decimal quantity of 2^63 or more is refused, as its Value overflows an int64 in
    Kubernetes; a MilliValue past an int64 is exact here, wrapped there; a negative quantity rounds up here,
    and there towards or away from zero depending on how it was parsed (no object Kubernetes validates
    holds one)."""
    cases, decoded = json.loads((DATA / "cases.json").read_text()), json.loads((DATA / "out.json").read_text())
    assert len(cases) == len(decoded) == 800
    departures: Counter[str] = Counter()
    for raw, go in zip(cases, decoded, strict=True):
        try:
            q = parse_quantity(raw)
        except ValueError as exc:
            if "error" in go:
                assert str(exc).startswith(f"{go['error']}, found "), raw
            else:
                assert "beyond what Kubernetes' Quantity.Value computes (an int64)" in str(exc), raw
                departures["refused"] += 1
            continue
        assert "error" not in go, (raw, go)
        assert binary_si(raw) is (go.get("format") == "BinarySI"), raw
        if q < 0:
            departures["negative"] += 1
            continue
        assert value(q) == go["value"], raw
        if milli_value(q) > INT64_MAX:
            departures["milli past int64"] += 1
            continue
        assert milli_value(q) == go["milli"], raw
    assert set(departures) == {"refused", "negative", "milli past int64"}


@pytest.mark.parametrize(
    ("raw", "quantity"),
    [
        ("500m", Fraction(1, 2)),
        ("4Gi", Fraction(4 * 2**30)),
        ("1e3", Fraction(1000)),
        ("1.5Gi", Fraction(3 * 2**29)),
        (2, Fraction(2)),
        (0.25, Fraction(1, 4)),
        (None, Fraction(0)),  # JSON null: a zero quantity
        (" 500m ", Fraction(1, 2)),  # UnmarshalJSON trims white space
        ("\u00a02", Fraction(2)),
        ("+", Fraction(0)),  # no digits: zero
        (".", Fraction(0)),
        ("1.G", Fraction(10**9)),
        ("0.5n", Fraction(1, 10**9)),  # rounded up to a whole nano
        ("1e-40", Fraction(1, 10**9)),
        ("0e99", Fraction(0)),
        ("16Ei", Fraction(INT64_MAX)),  # binary SI is capped
    ],
)
def test_quantities(raw: Any, quantity: Fraction) -> None:
    assert parse_quantity(raw) == quantity


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        ("", FORMAT_WRONG),
        ("\t2", FORMAT_WRONG),  # JSON carries a tab escaped, and UnmarshalJSON does not unescape
        ("1 Gi", FORMAT_WRONG),
        ("abc", FORMAT_WRONG),
        (True, FORMAT_WRONG),
        (float("nan"), FORMAT_WRONG),
        ([1], FORMAT_WRONG),
        ("1K", SUFFIX_WRONG),
        ("1KB", FORMAT_WRONG),
        ("1e", SUFFIX_WRONG),
        (".e-10", "unable to parse numeric part of quantity"),
        ("10E", "'10E' is beyond what Kubernetes' Quantity.Value computes (an int64)"),
    ],
)
def test_quantities_refused(raw: Any, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        parse_quantity(raw)
    assert str(caught.value).startswith(message)


@pytest.mark.parametrize(
    ("raw", "binary"),
    [
        ("4Gi", True),
        (" 4Gi ", True),
        ("0Ki", True),
        ("0.0001Ki", False),
        ("1.5Ki", True),
        ("Gi", True),  # no digits: a zero, binary
        ("4G", False),
        ("4", False),
        ("1e3", False),
        ("x", False),
        (4, False),
    ],
)
def test_the_binary_si_format(raw: Any, binary: bool) -> None:
    """ParseQuantity's format: BinarySI for a binary suffix, but DecimalSI for a value strictly between 0
    and 1 ("This avoids rounding"); Karmada's estimator reads a decimal one's MilliValue, a binary one's
    Value (general.go quantityAsInt64)."""
    assert binary_si(raw) is binary
