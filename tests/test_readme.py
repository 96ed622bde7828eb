"""README.md stays true: its Python snippet runs, its commands are what CI runs."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cli import main

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


@pytest.fixture(autouse=True)
def newcomer(monkeypatch: pytest.MonkeyPatch) -> None:
    """A newcomer's shell: no FLEETRULES_CONTROLLER (Karmada's defaults), as the README's commands meet it."""
    monkeypatch.delenv("FLEETRULES_CONTROLLER", raising=False)


def test_python_snippet_runs(in_root: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (snippet,) = re.findall(r"```python\n(.*?)```", README, re.S)
    exec(compile(snippet, "README.md", "exec"), {})
    assert "streaming/pipeline-a-flinkdeployment ('member2',)" in capsys.readouterr().out


def test_first_command_evaluates_an_example(in_root: Path) -> None:
    first = re.findall(r"```sh\n(.*?)\n```", README, re.S)[0]
    fleetrules = first.split("&&")[-1].strip()
    args = shlex.split(fleetrules)[1:]
    assert args[0] == "eval"
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0 and "streaming/orders-d-flinkdeployment" in result.stdout
    assert "workload-anti-affinity" in result.stdout and "feature gate" not in result.stderr  # at work


def test_ci_runs_the_readme_test_command() -> None:
    second = re.findall(r"```sh\n(.*?)\n```", README, re.S)[1]
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert second.strip() in ci


def test_explain_command(in_root: Path) -> None:
    args = ["explain", "examples/flink-ha/policy.fr", "--facts", "examples/flink-ha/facts"]
    args += ["--controller", "feature-gates=WorkloadAffinity=true"]
    result = CliRunner().invoke(
        main, [*args, "--binding", "streaming/orders-b-flinkdeployment", "--cluster", "member1"]
    )
    assert result.exit_code == 0
    assert result.stdout.startswith("streaming/orders-b-flinkdeployment on member1: rejected\n")
    assert "p: placement anti_affinity_group=karmada.io/group=orders binding=orders-a-flinkdeployment" in result.stdout
    missing = CliRunner().invoke(main, [*args, "--binding", "streaming/orders-x", "--cluster", "member1"])
    assert missing.exit_code == 2 and "did you mean" in missing.stderr


@pytest.mark.parametrize(
    ("args", "code", "text"),
    [
        (["eval", "examples/flink-ha/policy.fr", "--facts", "nope/"], 2, "no such file or directory: nope/"),
        (
            ["eval", "examples/flink-ha/policy.fr", "--facts", "examples/flink-ha/facts", "--now", "noon"],
            2,
            "not an RFC 3339 time",
        ),
        (
            ["eval", "tests/golden/errors/three_errors.fr", "--facts", "examples/flink-ha/facts"],
            2,
            "unknown keyword 'tolerat'",
        ),
        (["eval", "examples/flink-ha/policy.fr"], 2, "no facts: give --facts"),
    ],
)
def test_eval_errors(in_root: Path, args: list[str], code: int, text: str) -> None:
    result = CliRunner().invoke(main, args)
    assert result.exit_code == code and text in result.stderr
