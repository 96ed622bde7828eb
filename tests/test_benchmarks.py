"""The benchmark runs, and fleetrules makes the baseline's decisions (figures live in docs, not here)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))

import e2e
import fleets
import run as bench

from tests.gates import ON


def test_small_fleet_matches_the_baseline() -> None:
    result = bench.measure(12, 60)
    assert result["same_placements"] is True


def test_the_divided_fleet_evaluates() -> None:
    duplicated, by_available = bench.divided(12, 60)
    assert duplicated > 0 and by_available > 0


def test_shared_selections_choose_as_each_binding_alone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The select stage's choice, shared by fresh bindings alike in pods and replicas, is the choice each
    would make alone: the Divided fleet places identically with the sharing turned off."""
    import yaml

    from engine import evaluate, load_facts, load_rules
    from engine.schedule import scheduler
    from engine.schedule.spread import select

    (tmp_path / "f.fr").write_text(bench.DIVIDED_RULES)
    (tmp_path / "f.yaml").write_text(yaml.safe_dump_all(bench.divided_fleet(bench.fleet(40, 300))))
    rules, facts = load_rules([tmp_path / "f.fr"]), load_facts([tmp_path / "f.yaml"])

    def answer() -> list[tuple[str, tuple[str, ...], dict[str, int], str]]:
        return [
            (p.binding, p.clusters, dict(p.replicas), p.message)
            for p in evaluate(rules, facts, controllers=ON).placements
        ]

    shared = answer()

    def alone(self: Any, binding: Any, plan: Any, _shared: Any, feasible: Any, scores: Any, tiers: Any = None) -> Any:
        candidates = self._candidates(binding, feasible, scores, plan, tiers)
        return select(candidates, plan.spreads, binding.replicas, plan.duplicated, plan.ignore_spread)

    monkeypatch.setattr(scheduler.Scheduler, "_choose", alone)
    assert answer() == shared
    assert sum(1 for _, clusters, _, _ in shared if len(clusters) >= 2) > 200  # Divided over several clusters


def _row(size: str, **figures: float) -> dict[str, Any]:
    bindings = int(size.split("x")[1])
    row: dict[str, Any] = {"size": size, "bindings": bindings, "floor_ratio": 8.0, "peak_rss_mib": 400.0}
    row |= {"decisions_per_s": 10_000.0, "ratio": 30.0, "incremental_ms": 3.0, "load_s": 0.7, "load_json_s": 0.3}
    return row | {"eval_s": 1.0, "us_per_binding": 70.0} | figures


def test_the_targets_are_judged_on_the_runs_figures() -> None:
    lines = bench.targets(
        {
            "100x1000": _row("100x1000", us_per_binding=60.0),
            "1000x10000": _row("1000x10000"),
            "5000x50000": _row("5000x50000", eval_s=3.8, us_per_binding=80.0),
        }
    )
    verdicts = {line.split(":")[0]: line.rsplit(": ", 1)[-1] for line in lines}
    assert verdicts["1000x10000"] == "NOT MET"  # 30x the baseline
    assert verdicts["incremental re-evaluation <= 5 ms"] == "met"
    assert "YAML 0.70 s: NOT MET; JSON 0.30 s: met" in lines[2]
    assert "evaluation <= 1.5 s: 3.80 s: NOT MET; peak RSS <= 600 MiB: 400 MiB: met" in lines[3]
    assert lines[4].endswith("60 to 80 us (+33 %): NOT MET")
    fast = bench.targets({"1000x10000": _row("1000x10000", decisions_per_s=160_000.0, ratio=2.5)})
    assert fast[0].endswith(": met") and len(fast) == 3  # one size: no per-binding line, no 50k line


@pytest.mark.parametrize("shape", sorted(e2e.REFERENCE_SHAPES))
def test_the_plain_reference_decides_as_fleetrules_on_every_shape(shape: str, tmp_path: Path) -> None:
    """benchmarks/e2e.py compares fleetrules with benchmarks/reference.py end to end: on each shape they place
    every binding alike (so the ratio compares equal work), and some bindings of each are placed."""
    import json

    snapshot = tmp_path / "fleet.yaml"
    with snapshot.open("w") as handle:
        fleets.write(fleets.SHAPES[shape](60, 600), handle)
    ours, theirs = tmp_path / "ours.json", tmp_path / "theirs.json"
    e2e.timed([*e2e.FLEETRULES, "eval", str(snapshot), "-o", "json"], ours)
    e2e.timed([sys.executable, str(e2e.HERE / "reference.py"), str(snapshot)], theirs)
    placed = e2e.clusters_of(ours)
    assert placed == e2e.clusters_of(theirs)
    assert len(placed) == 600 and sum(1 for c in placed.values() if c) > 100
    assert json.loads(theirs.read_text())["placements"][0]["binding"] == min(placed)
