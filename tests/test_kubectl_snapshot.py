"""A snapshot exactly as kubectl prints it (tests/data/kubectl/snapshot.yaml): every field Karmada and
Kubernetes write is accepted without a warning, and a binding whose applied placement matches its
policy is settled, as Karmada's scheduler leaves it."""

from __future__ import annotations

import json
from pathlib import Path

import yaml
from click.testing import CliRunner

from engine.cli import main

SNAPSHOT = Path(__file__).parent / "data" / "kubectl" / "snapshot.yaml"


def test_a_kubectl_snapshot_evaluates_quietly() -> None:
    result = CliRunner().invoke(main, ["eval", str(SNAPSHOT)])
    assert result.exit_code == 0 and result.stderr == ""
    assert result.stdout.splitlines()[:3] == [
        "default/web-deployment  (policy default/web)",
        "  settled: kept on its clusters: placement as applied (policy.karmada.io/applied-placement), replicas "
        "as assigned, no reschedule triggered, no target cluster being deleted",
        "  clusters: member1 (2 replicas)",
    ]


def test_the_same_snapshot_as_json_gives_the_same_answer(tmp_path: Path) -> None:
    (tmp_path / "snapshot.json").write_text(json.dumps(yaml.safe_load(SNAPSHOT.read_text())))
    as_yaml = CliRunner().invoke(main, ["eval", str(SNAPSHOT), "-o", "json"])
    as_json = CliRunner().invoke(main, ["eval", str(tmp_path / "snapshot.json"), "-o", "json"])
    assert as_json.exit_code == 0 and as_json.stdout == as_yaml.stdout


def test_at_now_a_healthy_workload_stays() -> None:
    result = CliRunner().invoke(main, ["eval", str(SNAPSHOT), "--now", "2026-12-03T00:00:00Z", "-o", "json"])
    data = json.loads(result.stdout)
    assert result.exit_code == 0 and data["evictions"] == []
    assert data["placements"][0]["atNow"] == {"tasks": [], "works": {"member1": {}}}
