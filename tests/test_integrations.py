"""The GitHub Actions workflow (examples/ci/fleetrules.yml) and pre-commit hooks: their commands run
here against a repository laid out as the workflow expects (not on GitHub itself)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = yaml.safe_load((ROOT / "examples" / "ci" / "fleetrules.yml").read_text())


def sh(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(["bash", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)


def policy_repo(tmp_path: Path) -> Path:
    """A repository with the Flink HA rules on origin/main and a change that tightens them."""
    repo = tmp_path / "repo"
    shutil.copytree(ROOT / "examples" / "flink-ha" / "facts", repo / "facts")
    (repo / "policies").mkdir()
    shutil.copy(ROOT / "examples" / "flink-ha" / "policy.fr", repo / "policies" / "flink-ha.fr")
    test = (ROOT / "examples" / "flink-ha" / "flink-ha_test.yaml").read_text()
    (repo / "policies" / "flink-ha_test.yaml").write_text(
        test.replace("[policy.fr]", "[flink-ha.fr]").replace("[facts]", "[../facts]")
    )
    git = "git -c user.name=t -c user.email=t@example.com"
    setup = f"git init -q -b main . && {git} add . && {git} commit -qm base"
    assert sh(f"{setup} && git update-ref refs/remotes/origin/main HEAD", repo).returncode == 0
    shutil.copy(ROOT / "tests" / "data" / "flink-ha-tightened.fr", repo / "policies" / "flink-ha.fr")
    return repo


def steps() -> dict[str, str]:
    job = WORKFLOW["jobs"]["review"]
    return {
        s["name"]: s["run"].replace("${{ github.base_ref }}", "main")
        for s in job["steps"]
        if "name" in s and "run" in s
    }


def test_workflow_shape() -> None:
    triggers = WORKFLOW.get("on", WORKFLOW.get(True))  # YAML 1.1 reads the key `on` as true
    assert triggers["pull_request"]["paths"] == ["policies/**", "facts/**"]
    assert set(steps()) == {"check", "test", "diff"}


def test_workflow_commands_on_a_pull_request(tmp_path: Path) -> None:
    repo = policy_repo(tmp_path)
    run = steps()
    check = sh(run["check"], repo)
    assert check.returncode == 0, check.stdout + check.stderr
    test = sh(run["test"], repo)
    assert test.returncode == 1  # the tightened rules break expectations of the old tests
    suite = ElementTree.parse(repo / "fleetrules-junit.xml").getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("3", "2")
    diff = sh(run["diff"], repo)
    assert diff.returncode == 1  # --fail-on unschedulable: orders-c loses its cluster
    comment = (repo / "placement-diff.md").read_text()
    assert comment.startswith("### fleetrules: placement changes\n\n**1 binding moved, 1 newly unschedulable")
    assert "`streaming/orders-c-flinkdeployment` | member3 | unschedulable ⚠️" in comment


def test_check_annotates_problems_for_github(tmp_path: Path) -> None:
    repo = policy_repo(tmp_path)
    (repo / "policies" / "flink-ha.fr").write_text("policy p {\n  select { kind A }\n  tolerat x\n}\n")
    check = sh(steps()["check"], repo)
    assert check.returncode == 1
    assert check.stdout.startswith(
        "::error file=policies/flink-ha.fr,line=3,col=3,endColumn=10::unknown keyword 'tolerat'"
    )


def test_pre_commit_hooks(tmp_path: Path) -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"fleetrules-check", "fleetrules-fmt"}
    messy = tmp_path / "messy.fr"
    shutil.copy(ROOT / "tests" / "golden" / "syntax" / "messy_layout.fr", messy)
    assert sh(f"{hooks['fleetrules-check']['entry']} {messy}", tmp_path).returncode == 0
    assert sh(f"{hooks['fleetrules-fmt']['entry']} {messy}", tmp_path).returncode == 0
    assert messy.read_text() == (ROOT / "tests" / "golden" / "syntax" / "messy_layout.fmt").read_text()
