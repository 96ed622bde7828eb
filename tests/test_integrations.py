"""The GitHub Actions workflow (examples/ci/fleetrules.yml) and pre-commit hooks: their commands run
here against a repository laid out as the workflow expects (not on GitHub itself)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import yaml

ROOT = Path(__file__).resolve().parent.parent
WORKFLOW = yaml.safe_load((ROOT / "examples" / "ci" / "fleetrules.yml").read_text())


def sh(command: str, cwd: Path, extra: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    env = os.environ | {"PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"} | (extra or {})
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


def test_multi_line_inputs_keep_every_path_and_the_controller_input_reaches_every_step(tmp_path: Path) -> None:
    """`read -r -a` kept the first line of a multi-line `rules:` (the check stayed green over the rest)."""
    repo = policy_repo(tmp_path)
    (repo / "more").mkdir()
    (repo / "more" / "broken.fr").write_text("policy p {\n")
    out = run_action(repo, rules="policies/\nmore/broken.fr\n", facts="facts/\n", controller="")
    assert out["check"]["code"] == "1" and "more/broken.fr" in out["check"]["stdout"]
    (repo / "more" / "broken.fr").unlink()
    flags = "feature-gates=Nope=true\nenable-no-execute-taint-eviction=true\n"
    refused = run_action(repo, rules="policies/\n", controller=flags)
    assert refused["diff"]["code"] == "2" and "unrecognized feature gate: Nope" in refused["diff"]["stderr"]
    assert refused["verdict"]["exit"] == "1"  # the verdict runs whatever failed


ACTION = yaml.safe_load((ROOT / "action.yml").read_text())
_EXPRESSION = re.compile(r"\$\{\{\s*([^}]*?)\s*\}\}")


def _uses() -> dict[str, str]:
    """The inputs the workflow gives the action (its `with:`)."""
    (step,) = [s for s in WORKFLOW["jobs"]["review"]["steps"] if s.get("uses", "").endswith("/fleetrules@main")]
    return {k: str(v) for k, v in step.get("with", {}).items()}


def run_action(repo: Path, **given: str) -> dict[str, dict[str, str]]:
    """The action's shell steps, run in order as GitHub runs a composite action (not the install step: the
    package is installed here already; not the steps that use other actions): expressions substituted,
    `if:` conditions on inputs honoured, step outputs collected from $GITHUB_OUTPUT. Returns each step's
    outputs, and its exit code as `exit`."""
    inputs = {name: str(spec.get("default", "")) for name, spec in ACTION["inputs"].items()} | given
    outputs: dict[str, dict[str, str]] = {}

    def value(expression: str) -> str:
        if expression.startswith("inputs."):
            return inputs[expression.removeprefix("inputs.")]
        if expression.startswith("steps."):
            _, step, _, name = expression.split(".")
            return outputs.get(step, {}).get(name, "")
        return {"github.base_ref": "main", "github.action_path": str(ROOT)}[expression]

    for step in ACTION["runs"]["steps"]:
        if "run" not in step or step["id"] == "install":
            continue
        condition = step.get("if")
        if condition and condition != "always()":  # always(): the verdict and the summary, whatever failed
            name, expected = re.fullmatch(r"inputs\.([\w-]+) == '(\w+)'", condition).groups()  # type: ignore[union-attr]
            if inputs[name] != expected:
                continue
        command = step["run"]  # inputs come through the environment only (test_no_input_is_pasted_into_a_script)
        output = repo / f".output-{step['id']}"
        output.write_text("")
        env = {"GITHUB_OUTPUT": str(output), "RUNNER_TEMP": str(repo)}
        env |= {k: _EXPRESSION.sub(lambda m: value(m.group(1)), str(v)) for k, v in step.get("env", {}).items()}
        done = sh(command, repo, env)
        outputs[step["id"]] = dict(line.split("=", 1) for line in output.read_text().splitlines() if "=" in line)
        outputs[step["id"]]["exit"] = str(done.returncode)
        outputs[step["id"]]["stdout"] = done.stdout
        outputs[step["id"]]["stderr"] = done.stderr
    return outputs


def test_no_input_is_pasted_into_a_script() -> None:
    """GitHub substitutes ${{ }} into a run script before the shell reads it: an input would run commands."""
    for step in ACTION["runs"]["steps"]:
        assert "${{" not in step.get("run", ""), step["id"]


def test_inputs_that_look_like_shell_are_only_paths(tmp_path: Path) -> None:
    repo = policy_repo(tmp_path)
    hostile = 'policies/ ; touch pwned-1 $(touch pwned-2) `touch pwned-3` "*"'
    out = run_action(repo, rules=hostile, facts="facts/ ;touch pwned-4", **{"fail-on": "x; touch pwned-5"})
    assert not list(repo.glob("pwned-*"))
    assert out["check"]["code"] == "2"  # `;` and the rest are paths that do not exist
    assert "no such file or directory: ;" in out["check"]["stderr"]


def test_workflow_shape() -> None:
    triggers = WORKFLOW.get("on", WORKFLOW.get(True))  # YAML 1.1 reads the key `on` as true
    assert triggers["pull_request"]["paths"] == ["policies/**", "facts/**"]
    assert set(_uses()) <= set(ACTION["inputs"])  # the workflow gives the action only inputs it has
    assert ACTION["runs"]["using"] == "composite"
    (install,) = [s for s in ACTION["runs"]["steps"] if s.get("id") == "install"]
    # what this repository provides, not PyPI
    assert install["env"]["FLEETRULES_ACTION_PATH"] == "${{ github.action_path }}"
    assert '"$FLEETRULES_ACTION_PATH"' in install["run"]
    assert '-c "$FLEETRULES_ACTION_PATH/constraints.txt"' in install["run"]  # the versions it is tested with
    steps = {s.get("id"): s for s in ACTION["runs"]["steps"]}
    assert steps["verdict"]["if"] == "always()" and steps["summary"]["if"] == "always()"
    assert "!github.event.pull_request.head.repo.fork" in steps["comment"]["if"]  # a fork's token cannot comment
    constraints = (ROOT / "constraints.txt").read_text()
    assert "durable-rules==2.0.28" in constraints and "lark==" in constraints


def test_workflow_commands_on_a_pull_request(tmp_path: Path) -> None:
    repo = policy_repo(tmp_path)
    out = run_action(repo, **_uses())
    assert out["check"]["code"] == "0", out["check"]
    assert out["test"]["code"] == "1"  # the tightened rules break expectations of the old tests
    suite = ElementTree.parse(out["test"]["junit"]).getroot()
    assert (suite.get("tests"), suite.get("failures")) == ("3", "2")
    assert out["diff"]["code"] == "1"  # --fail-on unschedulable: orders-c loses its cluster
    comment = Path(out["diff"]["review"]).read_text()
    assert comment.startswith("### fleetrules: placement changes\n\n**1 binding moved, 1 newly unschedulable")
    assert "`streaming/orders-c-flinkdeployment` | member3 | unschedulable ⚠️" in comment
    assert out["resilience"]["code"] == "1"  # the workflow asks for resilience: a failure now strands orders-c
    assert "**Resilience**:" in comment and "more workload unschedulable" in comment
    assert out["verdict"]["failed"] == "test,diff,resilience" and out["verdict"]["exit"] == "1"
    quiet = run_action(policy_repo(tmp_path / "again"), resilience="false")
    assert "resilience" not in quiet and quiet["verdict"]["failed"] == "test,diff"


def test_check_annotates_problems_for_github(tmp_path: Path) -> None:
    repo = policy_repo(tmp_path)
    (repo / "policies" / "flink-ha.fr").write_text("policy p {\n  select { kind A }\n  tolerat x\n}\n")
    check = run_action(repo)["check"]
    assert check["code"] == "1"
    assert check["stdout"].startswith(
        "::error file=policies/flink-ha.fr,line=3,col=3,endColumn=10,title=FR001 syntax::unknown keyword 'tolerat'"
    )


def test_pre_commit_hooks(tmp_path: Path) -> None:
    hooks = {h["id"]: h for h in yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())}
    assert set(hooks) == {"fleetrules-check", "fleetrules-fmt"}
    messy = tmp_path / "messy.fr"
    shutil.copy(ROOT / "tests" / "golden" / "syntax" / "messy_layout.fr", messy)
    assert sh(f"{hooks['fleetrules-check']['entry']} {messy}", tmp_path).returncode == 0
    assert sh(f"{hooks['fleetrules-fmt']['entry']} {messy}", tmp_path).returncode == 0
    assert messy.read_text() == (ROOT / "tests" / "golden" / "syntax" / "messy_layout.fmt").read_text()
