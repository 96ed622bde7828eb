"""The benchmark runs, and fleetrules makes the baseline's decisions (figures live in docs, not here)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import run as bench


def test_small_fleet_matches_the_baseline() -> None:
    result = bench.measure(12, 60)
    assert result["same_placements"] is True


def test_the_divided_fleet_evaluates() -> None:
    duplicated, by_available = bench.divided(12, 60)
    assert duplicated > 0 and by_available > 0
