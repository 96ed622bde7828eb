"""--karmada-version: behaviour that differs between the Karmada versions fleetrules models, and
--strict-karmada: fleetrules' extensions reported as what Karmada would not do."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cli import main
from engine.review.testing import run_tests

POLICY = """policy p {
  select { kind Deployment }
  failover cluster {
    purge Immediately
  }
}
"""


@pytest.mark.parametrize(
    ("args", "exit_code", "said"),
    [
        ([], 1, 'purgeMode: Unsupported value: "Immediately": supported values: "Directly", "Gracefully", "Never"'),
        (["--karmada-version", "1.19"], 1, "removed in Karmada v1.19; use 'Directly', or --karmada-version 1.18"),
        (["--karmada-version", "v1.18.2"], 0, "warning: purge mode 'Immediately' is deprecated"),
    ],
)
def test_deprecated_purge_modes_by_version(tmp_path: Path, args: list[str], exit_code: int, said: str) -> None:
    """Removed in karmada commit 2aeae1ee (first in v1.19.0): accepted with a warning up to v1.18."""
    (tmp_path / "p.fr").write_text(POLICY)
    result = CliRunner().invoke(main, ["check", str(tmp_path / "p.fr"), *args])
    assert result.exit_code == exit_code and said in result.stdout


@pytest.mark.parametrize("version", ["1.5", "2", "v1.20.0", "latest"])
def test_versions_not_modelled_are_usage_errors(tmp_path: Path, version: str) -> None:
    (tmp_path / "p.fr").write_text(POLICY)
    result = CliRunner().invoke(main, ["eval", str(tmp_path / "p.fr"), "--facts", ".", "--karmada-version", version])
    assert result.exit_code == 2 and "not a Karmada version fleetrules models (1.18, 1.19" in result.stderr


def test_strict_karmada_reports_each_extension(tmp_path: Path) -> None:
    (tmp_path / "p.fr").write_text(
        "policy p {\n  select { kind Deployment }\n"
        "  prefer workload anti-affinity by app weight 10 within region\n}\n"
        'rule r {\n  when binding b and cluster c (c.name == "m1")\n  then reject c for b "no"\n}\n'
    )
    plain = CliRunner().invoke(main, ["check", str(tmp_path / "p.fr")])
    assert plain.exit_code == 0
    strict = CliRunner().invoke(main, ["check", str(tmp_path / "p.fr"), "--strict-karmada"])
    assert strict.exit_code == 1
    lines = [line for line in strict.stdout.splitlines() if "error: not Karmada" in line]
    assert [line.split("error: ")[1] for line in lines] == [
        "not Karmada: a preferred workload anti-affinity term is a fleetrules extension (--strict-karmada)",
        "not Karmada: 'within region' (a workload term's topology) is a fleetrules extension (--strict-karmada)",
        "not Karmada: a rule (Karmada has no user-written scheduler rules) is a fleetrules extension "
        "(--strict-karmada)",
    ]


def test_rule_tests_take_a_version_per_file_or_case(tmp_path: Path) -> None:
    (tmp_path / "p.fr").write_text(POLICY)
    (tmp_path / "f.yaml").write_text("apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: m1}\n")
    (tmp_path / "p_test.yaml").write_text(
        "rules: [p.fr]\nfacts: [f.yaml]\nkarmadaVersion: '1.18'\ncases:\n"
        "- name: old\n  expect: {placements: {}}\n"
        "- name: new\n  karmadaVersion: '1.19'\n  expect: {placements: {}}\n"
        "- name: unknown\n  karmadaVersion: '0.9'\n  expect: {placements: {}}\n"
    )
    outcomes = {o.name: o for o in run_tests([tmp_path]).outcomes}
    assert outcomes["old"].passed
    assert not outcomes["new"].passed and "Unsupported value" in outcomes["new"].error
    assert not outcomes["unknown"].passed and "not a Karmada version" in outcomes["unknown"].error
