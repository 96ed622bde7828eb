"""The unschedulable message is the scheduler's FitError text: karmada
pkg/scheduler/framework/types_test.go TestFitError_Error, and the built-in filters' own words."""

from __future__ import annotations

from engine.results import Reason
from engine.schedule.feasibility import fit_error


def reason(summary: str, detail: str = "") -> tuple[Reason, ...]:
    return (Reason("rule", "f.fr:1", detail or summary, summary),)


def test_no_clusters_available() -> None:
    assert fit_error(0, {}) == "0/0 clusters are available: no cluster exists."


def test_reasons_are_counted_and_sorted_as_strings() -> None:
    rejected = {f"m{i}": reason("taint mismatch") for i in range(10)} | {"x": reason("insufficient CPU")}
    rejected |= {"y": reason("insufficient CPU")}
    # Go sorts "count reason" strings: "10 …" before "2 …"
    assert fit_error(12, rejected) == "0/12 clusters are available: 10 taint mismatch, 2 insufficient CPU."


def test_the_summary_is_counted_and_the_detail_is_kept() -> None:
    rejected = {
        c: reason("cluster already has workload with the same anti-affinity group", f"… group=g {c}") for c in "ab"
    }
    assert (
        fit_error(2, rejected)
        == "0/2 clusters are available: 2 cluster already has workload with the same anti-affinity group."
    )
