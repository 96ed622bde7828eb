"""SARIF 2.1.0 from check, test, diff and resilience: valid logs (the SARIF 2.1.0 JSON schema, kept in
tests/data/sarif, and the invariants GitHub code scanning relies on), findings at their source, stable
fingerprints."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from jsonschema import Draft4Validator

from engine.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
SCHEMA = json.loads((ROOT / "tests" / "data" / "sarif" / "sarif-2.1.0-rtm.5.json").read_text())
VALIDATOR = Draft4Validator(SCHEMA)


def test_the_schema_is_the_sarif_schema_and_rejects_what_it_should() -> None:
    Draft4Validator.check_schema(SCHEMA)
    assert SCHEMA["title"].startswith("Static Analysis Results Format (SARIF) Version 2.1.0")
    run: dict[str, Any] = {"tool": {"driver": {"name": "x"}}, "results": []}
    assert VALIDATOR.is_valid({"version": "2.1.0", "runs": [run]})
    assert not VALIDATOR.is_valid({"version": "2.0.0", "runs": [run]})
    for result in ({"ruleId": "r", "level": "error"}, {"ruleId": "r", "level": "fatal", "message": {"text": "t"}}):
        assert not VALIDATOR.is_valid({"version": "2.1.0", "runs": [{**run, "results": [result]}]})


def _valid(text: str) -> dict[str, Any]:
    """A SARIF 2.1.0 log: the schema accepts it, and what the schema leaves open holds too."""
    log: dict[str, Any] = json.loads(text)
    errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in VALIDATOR.iter_errors(log)]
    assert not errors, errors
    assert log["version"] == "2.1.0" and len(log["runs"]) == 1
    run = log["runs"][0]
    rules = [r["id"] for r in run["tool"]["driver"]["rules"]]
    assert len(set(rules)) == len(rules)
    for result in run["results"]:
        assert result["level"] in ("error", "warning", "note", "none")
        assert rules[result["ruleIndex"]] == result["ruleId"]
        assert result["message"]["text"]
        for location in result.get("locations", []):
            physical = location["physicalLocation"]
            uri = physical["artifactLocation"]["uri"]
            assert uri and not uri.startswith(("../", "<")) and " " not in uri
            assert physical["artifactLocation"].get("uriBaseId", "%SRCROOT%") in run["originalUriBaseIds"]
            region = physical.get("region", {})
            assert region.get("startLine", 1) >= 1 and region.get("startColumn", 1) >= 1
    fingerprints = [r["partialFingerprints"]["fleetrules/v1"] for r in run["results"]]
    assert len(set(fingerprints)) == len(fingerprints)
    return log


def _run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, list(args))
    return result.exit_code, result.stdout


def test_check(tmp_path: Path) -> None:
    bad = tmp_path / "bad.fr"
    bad.write_text("policy p {\n  select { kind Deployment }\n  tolerat x\n}\n")
    code, out = _run("check", "--format", "sarif", str(bad))
    assert code == 1
    (result,) = _valid(out)["runs"][0]["results"]
    assert result["ruleId"] == "FR001" and result["message"]["text"].startswith("unknown keyword 'tolerat'")
    region = result["locations"][0]["physicalLocation"]["region"]
    assert (region["startLine"], region["startColumn"]) == (3, 3)
    # the fingerprint ignores where the problem moved to: a line added above keeps it
    bad.write_text("# a comment\n" + bad.read_text())
    moved = _valid(_run("check", "--format", "sarif", str(bad))[1])["runs"][0]["results"][0]
    assert moved["partialFingerprints"] == result["partialFingerprints"]
    clean = _valid(_run("check", "--format", "sarif", str(EXAMPLES / "flink-ha" / "policy.fr"))[1])
    assert clean["runs"][0]["results"] == []


def test_rule_tests(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "flink-ha"
    shutil.copytree(EXAMPLES / "flink-ha", folder)
    shutil.copy(ROOT / "tests" / "data" / "flink-ha-tightened.fr", folder / "policy.fr")
    monkeypatch.chdir(tmp_path)
    code, out = _run("test", "--format", "sarif", "flink-ha")
    assert code == 1
    results = _valid(out)["runs"][0]["results"]
    assert len(results) == 2 and {r["ruleId"] for r in results} == {"test/failed"}
    assert results[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith("flink-ha_test.yaml")


def test_diff() -> None:
    args = [
        "diff",
        "--base",
        str(EXAMPLES / "flink-ha" / "policy.fr"),
        "--head",
        str(ROOT / "tests/data/flink-ha-tightened.fr"),
    ]
    code, out = _run(
        *args, "--facts", str(EXAMPLES / "flink-ha" / "facts"), "-o", "sarif", "--fail-on", "unschedulable"
    )
    assert code == 1
    results = _valid(out)["runs"][0]["results"]
    gated = [r for r in results if r["ruleId"] == "diff/gated"]
    assert [r["properties"]["binding"] for r in gated] == ["streaming/orders-c-flinkdeployment"]
    assert gated[0]["level"] == "error" and "unschedulable" in gated[0]["message"]["text"]
    assert all(r["level"] == "note" for r in results if r["ruleId"] == "diff/changed")


def test_resilience() -> None:
    folder = EXAMPLES / "flink-ha"
    code, out = _run(
        "resilience", str(folder / "policy.fr"), "--facts", str(folder / "facts"), "--workers", "1", "-o", "sarif"
    )
    assert code == 0
    results = _valid(out)["runs"][0]["results"]
    assert {r["ruleId"] for r in results} == {"resilience/unschedulable", "resilience/spread-lost"}


def test_uris_are_encoded_relative_to_the_source_root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """RFC 3986 references against %SRCROOT% (the working directory) for files under it; a file elsewhere by its
    absolute file: URI, never ../; a built-in rule is no file of the repository (issue 28)."""
    from engine.render.sarif import artifact

    root = tmp_path / "repo"
    assert artifact("rules/my rules#1.fr", root) == {"uri": "rules/my%20rules%231.fr", "uriBaseId": "%SRCROOT%"}
    assert artifact("règles/p.fr", root) == {"uri": "r%C3%A8gles/p.fr", "uriBaseId": "%SRCROOT%"}
    assert artifact(str(root / "a" / ".." / "b.fr"), root) == {"uri": "b.fr", "uriBaseId": "%SRCROOT%"}
    assert artifact("../outside/p.fr", root) == {"uri": (tmp_path / "outside" / "p.fr").as_uri()}
    assert artifact("<builtin>/taint_toleration.fr", root) is None
    folder = tmp_path / "my rules"
    folder.mkdir()
    bad = folder / "bad %.fr"
    bad.write_text("policy p {\n  select { kind Deployment }\n  tolerat x\n}\n")
    monkeypatch.chdir(tmp_path)
    log = _valid(_run("check", "--format", "sarif", "my rules/bad %.fr")[1])
    run = log["runs"][0]
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == tmp_path.as_uri() + "/"
    location = run["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "my%20rules/bad%20%25.fr", "uriBaseId": "%SRCROOT%"}
    monkeypatch.chdir(folder)
    log = _valid(_run("check", "--format", "sarif", "../my rules/bad %.fr")[1])
    location = log["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]
    assert location == {"uri": "bad%20%25.fr", "uriBaseId": "%SRCROOT%"}


def test_a_built_in_rule_is_a_logical_location() -> None:
    from engine.render.sarif import Finding, log

    (result,) = json.loads(log({"r": "r"}, [Finding("r", "note", "m", ("<builtin>/taint_toleration.fr:5",))], "0"))[
        "runs"
    ][0]["results"]
    assert result["locations"] == [
        {"logicalLocations": [{"fullyQualifiedName": "<builtin>/taint_toleration.fr:5", "kind": "module"}]}
    ]
