"""`check DIR` sees a YAML policy repository (issue 46): the PropagationPolicy, ClusterPropagationPolicy and
ClusterTaintPolicy objects of its YAML and JSON files are checked; files without a policy are passed over."""

from __future__ import annotations

import shutil
from pathlib import Path

from click.testing import CliRunner

from engine.cli import main

ROOT = Path(__file__).resolve().parent.parent


def test_check_of_a_directory_reads_its_policy_yaml(tmp_path: Path) -> None:
    """`check DIR` of a YAML repository said "0 files", exit 0, whatever its policies held."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "examples" / "karmada-policy", repo)
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / ".github" / "workflows" / "ci.yml").write_text("on: [push]\njobs: {}\n")  # no policy: passed over
    result = CliRunner().invoke(main, ["check", str(repo)])
    assert result.exit_code == 0 and result.stderr.endswith("0 errors, 0 warnings in 1 file\n"), result.output
    policy = repo / "propagationpolicy.yaml"
    broken = "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: broken, namespace: x}\n"
    policy.write_text(policy.read_text() + "---\n" + broken + "spec:\n  resourceSelectors: []\n")
    (repo / "taints.yaml").write_text(
        "apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterTaintPolicy\nmetadata: {name: t}\n"
        "spec:\n  taints: [{key: k, effect: Sometimes}]\n"
    )
    (repo / "rules.fr").write_text("policy p {\n")
    result = CliRunner().invoke(main, ["check", str(repo)])
    assert result.exit_code == 1, result.output
    assert "propagationpolicy.yaml" in result.stdout and "resourceSelectors" in result.stdout
    assert "taints.yaml:5:12: warning: spec.taints[0]: a Cluster refuses this taint" in result.stdout
    assert "rules.fr:" in result.stdout
    assert result.stderr.endswith("in 3 files\n"), result.stderr


def test_check_of_several_paths_counts_each_file_once(tmp_path: Path) -> None:
    (tmp_path / "a.fr").write_text("policy a {\n  select { kind Job }\n}\n")
    (tmp_path / "b.fr").write_text("policy b {\n")
    result = CliRunner().invoke(main, ["check", str(tmp_path / "a.fr"), str(tmp_path / "b.fr"), str(tmp_path)])
    assert result.exit_code == 1 and result.stderr.endswith("1 error, 0 warnings in 2 files\n"), result.output
