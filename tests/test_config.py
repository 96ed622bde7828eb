"""The control plane declared once (issue 46): .fleetrules.yaml, found from the working directory up to the
repository's root or named with --config; its precedence under FLEETRULES_CONTROLLER and --controller; `config`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cli import main
from engine.karmada.config import find

ROOT = Path(__file__).resolve().parent.parent
HA = ROOT / "examples" / "flink-ha"
FILE = """karmadaVersion: "1.18"
controller:
- feature-gates=AllAlpha=true,AllBeta=true
- enable-no-execute-taint-eviction=true
"""


def _repository(tmp_path: Path) -> Path:
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    shutil.copytree(HA, repo / "team" / "ha")
    (repo / ".fleetrules.yaml").write_text(FILE)
    return repo


def test_the_file_is_found_up_to_the_repositorys_root_and_no_further(tmp_path: Path) -> None:
    repo = _repository(tmp_path)
    assert find(repo / "team" / "ha" / "facts") == repo / ".fleetrules.yaml"
    (tmp_path / ".fleetrules.yaml").write_text("controller: []\n")  # above the repository: another's
    (repo / ".fleetrules.yaml").unlink()
    assert find(repo / "team") is None
    assert find(tmp_path / "elsewhere") == tmp_path / ".fleetrules.yaml"  # no repository: any directory above


def test_settings_come_from_the_file_the_environment_and_the_command_line_in_that_order(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = _repository(tmp_path)
    monkeypatch.chdir(repo / "team")
    monkeypatch.setenv("FLEETRULES_CONTROLLER", "enable-no-execute-taint-eviction=false graceful-eviction-timeout=5m")
    result = CliRunner().invoke(main, ["config", "-o", "json", "--controller", "feature-gates=WorkloadAffinity=false"])
    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    file = str(repo / ".fleetrules.yaml")  # above the working directory: shown whole
    assert data["configFile"] == file
    assert data["karmadaVersion"] == {"value": "1.18", "from": f"{file}:1:17"}
    assert [f["from"] for f in data["flags"]] == [
        f"{file}:3:3",
        f"{file}:4:3",
        "FLEETRULES_CONTROLLER",
        "FLEETRULES_CONTROLLER",
        "--controller",
    ]
    assert data["inForce"]["enable-no-execute-taint-eviction"] == {"value": "false", "from": "FLEETRULES_CONTROLLER"}
    assert data["inForce"]["no-execute-taint-eviction-purge-mode"]["from"] == "Karmada's default"
    gates = data["featureGates"]
    assert gates["WorkloadAffinity"] == {
        "value": False,
        "from": "--controller",
        "stage": "alpha, default false",
        "modelled": True,
    }
    assert gates["Failover"]["value"] is True and gates["Failover"]["from"] == f"{file}:3:3"
    text = CliRunner().invoke(main, ["config", "--karmada-version", "1.19"]).stdout
    assert "karmada version: 1.19  (--karmada-version)" in text


def test_every_evaluating_verb_runs_with_the_files_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLEETRULES_CONTROLLER")  # the tests' own control plane (conftest) aside: the file's alone
    repo = _repository(tmp_path)
    monkeypatch.chdir(repo / "team" / "ha")
    on = CliRunner().invoke(main, ["eval", "policy.fr", "--facts", "facts"])
    assert on.exit_code == 0 and "WorkloadAffinity feature gate" not in on.stderr
    assert "SchedulingOvercommitProtection" in on.stderr  # AllAlpha: an unmodelled gate on, said
    off = CliRunner().invoke(
        main, ["eval", "policy.fr", "--facts", "facts", "--controller", "feature-gates=WorkloadAffinity=false"]
    )
    assert "WorkloadAffinity feature gate (alpha) is off" in off.stderr
    (repo / "plain.yaml").write_text("controller: []\n")
    named = CliRunner().invoke(main, ["--config", str(repo / "plain.yaml"), "eval", "policy.fr", "--facts", "facts"])
    assert "WorkloadAffinity feature gate (alpha) is off" in named.stderr
    tests = CliRunner().invoke(main, ["test", "."])  # the test's own controllers on top of the file's
    assert tests.exit_code == 0, tests.output


@pytest.mark.parametrize(
    ("text", "said"),
    [
        (
            "extra: 1\n",
            ".fleetrules.yaml:1:1: error: unknown key 'extra'; a config file has karmadaVersion, controller",
        ),
        ("karmadaVersion: 2.0\n", ".fleetrules.yaml:1:17: error: karmadaVersion: '2.0' is not a Karmada version"),
        ("controller: feature-gates=Failover=true\n", ".fleetrules.yaml:1:13: error: controller: expected a list"),
        (
            "controller:\n- feature-gates=Nope=true\n",
            '.fleetrules.yaml:2:3: error: controller: invalid argument "Nope=true" for "--feature-gates" flag: '
            "unrecognized feature gate: Nope",
        ),
        ("- a\n", ".fleetrules.yaml:1:1: error: expected one mapping of karmadaVersion, controller"),
    ],
)
def test_a_file_the_control_plane_would_refuse_is_an_error_where_it_is_written(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str, said: str
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".fleetrules.yaml").write_text(text)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, ["eval", str(HA / "policy.fr"), "--facts", str(HA / "facts")])
    assert result.exit_code == 2 and said in result.stderr, result.output
    assert CliRunner().invoke(main, ["--version"]).exit_code == 0  # nothing that reads no config fails
    missing = CliRunner().invoke(main, ["--config", "nowhere.yaml", "config"])
    assert missing.exit_code == 2 and "--config: no such file: nowhere.yaml" in missing.stderr
