"""Diagnostic codes (issue 47): every kind of problem a stable code, used as SARIF's ruleId, the language server's
code and `check -o json`'s, documented in one table; the checker's problems carry theirs."""

from __future__ import annotations

import ast as python
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine import parse
from engine.checker.semantic import check
from engine.cli import main
from engine.codes import BY_ID, Code
from engine.lsp import diagnostics

ROOT = Path(__file__).resolve().parent.parent


def test_codes_are_unique_and_shaped() -> None:
    assert len(BY_ID) == len(Code) and len({c.slug for c in Code}) == len(Code)
    assert all(re.fullmatch(r"FR\d{3}", c.id) and re.fullmatch(r"[a-z-]+", c.slug) for c in Code)


def test_the_docs_table_is_the_codes() -> None:
    table = [line for line in (ROOT / "docs" / "diagnostics.md").read_text().splitlines() if line.startswith("| `FR")]
    assert table == [f"| `{c.id}` | `{c.slug}` | {c.summary} |" for c in Code]


def test_every_diagnostic_made_names_its_code() -> None:
    """error() and warning() take the code as a required keyword (mypy holds every call); a Diagnostic made
    directly names one too, so no problem falls back to usage unnoticed."""
    missing = []
    for path in sorted((ROOT / "engine").rglob("*.py")):
        tree = python.parse(path.read_text())
        for node in python.walk(tree):
            if not (isinstance(node, python.Call) and isinstance(node.func, python.Name)):
                continue
            if node.func.id == "Diagnostic" and not any(k.arg == "code" for k in node.keywords):
                missing.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert missing == []


CASES = [
    ("policy p { select { kind Deployment } tolerat x }\n", "FR001"),
    ('rule r { when cluster c (c.nope == "a") then reject c for c "x" }\n', "FR104"),
    ('rule r { when cluster c (q.name == "a") then reject c for c "x" }\n', "FR103"),
    ('rule r { when clusterz c then reject c for c "x" }\n', "FR102"),
    ("policy p { select { kind Deployment } spread by cluster min 3 max 2 }\n", "FR108"),
    ("policy p { select { kind Deployment } priority 99999999999 }\n", "FR107"),
    ("policy p { select { kind Deployment } priority 1 priority 2 }\n", "FR101"),
    ('rule r { when cluster c (c.ready == "yes") then reject c for c "x" }\n', "FR105"),
    ("condition c(x) { c(x) }\n", "FR113"),
    ("policy p { select { kind Deployment } failover application { purge Never grace 10s } }\n", "FR108"),
]


@pytest.mark.parametrize(("text", "code"), CASES, ids=[c for _, c in CASES])
def test_the_checkers_problems_carry_their_codes(text: str, code: str, tmp_path: Path) -> None:
    (tmp_path / "r.fr").write_text(text)
    result = CliRunner().invoke(main, ["check", str(tmp_path / "r.fr"), "-o", "json"])
    found = [d["code"] for d in json.loads(result.stdout)["diagnostics"]]
    assert code in found, found
    sarif = json.loads(CliRunner().invoke(main, ["check", str(tmp_path / "r.fr"), "-o", "sarif"]).stdout)
    run = sarif["runs"][0]
    assert code in [r["ruleId"] for r in run["results"]]
    assert {r["id"] for r in run["tool"]["driver"]["rules"]} == {r["ruleId"] for r in run["results"]}
    served = diagnostics((tmp_path / "r.fr").as_uri(), text)
    assert code in [d.code for d in served]


def test_a_warning_has_its_code_too() -> None:
    text = "policy p { select { kind Deployment } clusters { names a exclude a } }\n"
    (warned,) = [d for d in check([parse(text, "w.fr")]) if not d.is_error]
    assert warned.code is Code.MATCHES_NOTHING
