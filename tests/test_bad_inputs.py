"""The bad-input catalog (tests/bad_inputs/cases.yaml): exact messages and exit codes, no traceback,
nothing left behind. Set FLEETRULES_UPDATE_GOLDEN=1 to rewrite the expectations, then read the diff."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from engine.cli import main

CATALOG = Path(__file__).parent / "bad_inputs" / "cases.yaml"
CASES: list[dict[str, Any]] = yaml.safe_load(CATALOG.read_text(encoding="utf-8"))
UPDATE = bool(os.environ.get("FLEETRULES_UPDATE_GOLDEN"))
BASE = {
    "ok.fr": "policy web {\n  select { kind Deployment }\n}\n",
    "ok.yaml": (
        "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: a}\n---\n"
        "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\n"
    ),
    "events.yaml": "start: 2026-12-02T10:00:00Z\nevents: []\n",
}
_results: dict[str, dict[str, Any]] = {}


def _content(spec: dict[str, Any]) -> bytes:
    if "hex" in spec:
        return bytes.fromhex(str(spec["hex"]))
    if "repeat" in spec:
        unit, times = str(spec["repeat"]), int(spec["times"])
        body = "".join(unit.replace("{n}", str(i)) for i in range(times)) if "{n}" in unit else unit * times
        return f"{spec.get('head', '')}{body}{spec.get('tail', '')}".encode()
    return str(spec["text"]).encode()


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_the_catalog_is_large_enough() -> None:
    assert len(CASES) >= 40
    assert len({c["name"] for c in CASES}) == len(CASES)


@pytest.mark.parametrize("case", CASES, ids=[c["name"] for c in CASES])
def test_bad_input(case: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for name, text in BASE.items():
        (tmp_path / name).write_text(text)
    for name, spec in case.get("files", {}).items():
        (tmp_path / name).write_bytes(_content(spec))
    before = _snapshot(tmp_path)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(main, [str(a) for a in case["args"]], prog_name="fleetrules")
    assert result.exception is None or isinstance(result.exception, SystemExit), "a traceback, not a message"
    assert _snapshot(tmp_path) == before, "the command changed or left files behind"
    stdout, stderr = (text.replace(str(tmp_path), "<dir>") for text in (result.stdout, result.stderr))
    if UPDATE:
        _results[case["name"]] = {"exit": result.exit_code, "stdout": stdout, "stderr": stderr}
        return
    assert result.exit_code != 0 or "warning" in stdout + stderr, "a bad input must fail or warn"
    assert (result.exit_code, stdout, stderr) == (case["exit"], case["stdout"], case["stderr"])


def teardown_module() -> None:
    if UPDATE and _results:
        for case in CASES:
            case.update(_results.get(case["name"], {}))
        header = "".join(line + "\n" for line in CATALOG.read_text().splitlines() if line.startswith("#"))
        body = yaml.safe_dump(CASES, sort_keys=False, allow_unicode=True, width=120)
        CATALOG.write_text(header + body, encoding="utf-8")
