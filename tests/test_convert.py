"""convert in both directions: PropagationPolicy YAML → rule language → YAML again gives the same
policies, and a rule-language policy → YAML → rule language is the policy it was."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cli import main

ROOT = Path(__file__).resolve().parent.parent
YAML_POLICIES = [
    ROOT / "examples" / "karmada-policy" / "propagationpolicy.yaml",
    ROOT / "examples" / "divided-replicas" / "snapshot.yaml",
    ROOT / "tests" / "data" / "kubectl" / "snapshot.yaml",
    ROOT / "tests" / "data" / "kubectl" / "cluster-scoped.yaml",
]
EVERYTHING = """policy shop/web {
  priority 5
  select {
    kind Deployment, StatefulSet
    name web
    labels { tier = frontend, track in (a, b), !legacy }
  }
  clusters primary {
    labels { env = prod }
    fields { region in (eu-west-1) }
    exclude member9
  }
  clusters backup {
    names member4
  }
  tolerate cluster.karmada.io/not-ready : NoExecute for 5m
  tolerate * : NoSchedule
  spread by region min 2 max 2
  spread by cluster min 2 max 4
  replicas divided by available
  workload affinity by app.group
  failover application {
    toleration 2m
    purge Gracefully
    grace 10m
    preserve example.com/offset = "{.status.offset}"
  }
}
"""
WEIGHTS = """policy shop/weighted {
  select { kind Deployment }
  replicas divided by weight {
    member1 2,
    clusters { labels { env = prod } } 1
  }
}
"""
DSL_POLICIES = [ROOT / "examples" / "flink-checkpoint" / "policy.fr", Path("everything.fr"), Path("weights.fr")]


def convert(path: Path, *args: str) -> str:
    result = CliRunner().invoke(main, ["convert", str(path), *args])
    assert result.exit_code == 0, result.output
    return result.stdout


@pytest.mark.parametrize("path", YAML_POLICIES, ids=lambda p: p.parent.name + "/" + p.name)
def test_yaml_to_dsl_and_back(tmp_path: Path, path: Path) -> None:
    dsl = convert(path)
    (tmp_path / "policies.fr").write_text(dsl)
    again = convert(tmp_path / "policies.fr", "--to", "yaml")
    (tmp_path / "again.yaml").write_text(again)
    assert convert(tmp_path / "again.yaml") == dsl


@pytest.mark.parametrize("path", DSL_POLICIES, ids=lambda p: p.name)
def test_dsl_to_yaml_and_back(tmp_path: Path, path: Path) -> None:
    if not path.is_absolute():
        path = tmp_path / path
        path.write_text(EVERYTHING if path.name == "everything.fr" else WEIGHTS)
        assert CliRunner().invoke(main, ["check", str(path)]).exit_code == 0
    as_yaml = convert(path, "--to", "yaml")
    (tmp_path / "p.yaml").write_text(as_yaml)
    back = convert(tmp_path / "p.yaml")
    (tmp_path / "back.fr").write_text(back)
    assert convert(tmp_path / "back.fr", "--to", "yaml") == as_yaml


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("prefer workload affinity by app weight 5", "a preferred workload affinity term (a fleetrules extension)"),
        ("workload affinity by app within region", "'within region' (a fleetrules extension)"),
    ],
)
def test_what_karmada_cannot_say_is_refused_where_it_is_written(tmp_path: Path, text: str, message: str) -> None:
    (tmp_path / "p.fr").write_text(f"policy ns/p {{\n  select {{ kind Deployment }}\n  {text}\n}}\n")
    result = CliRunner().invoke(main, ["convert", str(tmp_path / "p.fr"), "--to", "yaml"])
    assert result.exit_code == 2 and "p.fr:3:" in result.stderr and message in result.stderr
    assert result.stdout == ""


def test_rules_and_unknown_kinds_are_refused(tmp_path: Path) -> None:
    (tmp_path / "p.fr").write_text(
        "policy p {\n  select { kind Widget }\n}\n"
        'rule r {\n  when binding b and cluster c (c.name == "m")\n  then reject c for b "no"\n}\n'
    )
    result = CliRunner().invoke(main, ["convert", str(tmp_path / "p.fr"), "--to", "yaml"])
    assert result.exit_code == 2
    assert "kind Widget: fleetrules does not know its apiVersion" in result.stderr
    assert "rule 'r' (Karmada has no user-written scheduler rules)" in result.stderr
