"""Conventions users bring from kubectl and conftest (issue 46): -o on every verb with formats, eval --fail-on,
shell completion, colour on a terminal only, examples in --help."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cli import main
from engine.cli.app import colour, coloured

ROOT = Path(__file__).resolve().parent.parent
HA = ROOT / "examples" / "flink-ha"


@pytest.mark.parametrize("flag", ["-o", "--output", "--format"])
def test_check_and_test_take_o_as_eval_does(flag: str) -> None:
    checked = CliRunner().invoke(main, ["check", flag, "sarif", str(HA / "policy.fr")])
    assert checked.exit_code == 0 and json.loads(checked.stdout)["version"] == "2.1.0"
    tested = CliRunner().invoke(main, ["test", str(HA), flag, "junit"])
    assert tested.exit_code == 0 and tested.stdout.startswith("<?xml")


def test_eval_fails_on_what_it_is_told_to() -> None:
    args = ["eval", str(HA / "policy.fr"), "--facts", str(HA / "facts")]  # the tests' gates: one left unplaced
    assert CliRunner().invoke(main, args).exit_code == 0
    failed = CliRunner().invoke(main, [*args, "--fail-on", "unschedulable"])
    assert failed.exit_code == 1 and "orders-d-flinkdeployment" in failed.stdout  # the answer is still printed
    assert CliRunner().invoke(main, [*args, "--fail-on", "evicted,not-propagated"]).exit_code == 0
    unknown = CliRunner().invoke(main, [*args, "--fail-on", "nope"])
    assert unknown.exit_code == 2 and "choose from unschedulable, not-propagated, evicted" in unknown.stderr


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_completion_scripts_complete_the_verbs(shell: str) -> None:
    script = CliRunner().invoke(main, ["completion", shell])
    assert script.exit_code == 0 and "_FLEETRULES_COMPLETE" in script.stdout
    env = {**os.environ, "COMP_WORDS": "fleetrules ev", "COMP_CWORD": "1", "_FLEETRULES_COMPLETE": "bash_complete"}
    done = subprocess.run([sys.executable, "-m", "engine"], env=env, capture_output=True, text=True, check=False)
    assert "plain,eval" in done.stdout.splitlines()


class _Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_only_on_a_terminal_and_never_with_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    assert colour(_Terminal()) and not colour(io.StringIO())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not colour(_Terminal())
    painted = coloured("p.fr:1:2: error: x\nclusters: warning: y")
    assert "\x1b[31m\x1b[1merror\x1b[0m: x" in painted and "\x1b[33m\x1b[1mwarning\x1b[0m: y" in painted
    result = CliRunner().invoke(main, ["check", str(ROOT / "tests" / "data")])  # piped: plain
    assert "\x1b[" not in result.output


def test_the_verbs_users_start_with_show_examples_in_their_help() -> None:
    for verb in ("eval", "completion"):
        assert "Examples:" in CliRunner().invoke(main, [verb, "--help"]).stdout, verb
