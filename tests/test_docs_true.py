"""The docs say what the commands print (issue 46): every fenced block of README.md and docs/*.md that begins with
`$ fleetrules …` is run, from the repository's root at Karmada's defaults and the flags the command itself states,
and its lines are what the command prints: all of them, or, where the block leaves lines out (a line `…`), the
lines it shows, in that order. Several blocks matched only with every gate on."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cli import main

ROOT = Path(__file__).resolve().parent.parent
_BLOCK = re.compile(r"^```[a-z]*\n\$ (fleetrules [^\n]*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def _blocks() -> list[tuple[str, str, str]]:
    found = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        for match in _BLOCK.finditer(doc.read_text(encoding="utf-8")):
            found.append((doc.relative_to(ROOT).as_posix(), match[1], match[2]))
    return found


BLOCKS = _blocks()


def test_there_are_documented_commands() -> None:
    assert len(BLOCKS) >= 3


@pytest.mark.parametrize(("doc", "command", "shown"), BLOCKS, ids=[f"{d}: {c[:60]}" for d, c, _ in BLOCKS])
def test_a_documented_command_prints_what_the_docs_show(
    doc: str, command: str, shown: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FLEETRULES_CONTROLLER")  # Karmada's defaults, and what the command states
    words = shlex.split(command)[1:]
    cwd = ROOT
    if words[0] == "test" and not Path(words[1]).exists():  # `fleetrules test flink-ha`, run from examples/
        cwd = ROOT / "examples"
    monkeypatch.chdir(cwd)
    printed = CliRunner().invoke(main, words).stdout.splitlines()
    expected = [line.rstrip() for line in shown.splitlines()]
    if "…" not in [line.strip() for line in expected]:
        assert [line.rstrip() for line in printed] == expected, f"{doc}: {command}"
        return
    at = 0
    for line in (e for e in expected if e.strip() != "…"):
        while at < len(printed) and printed[at].rstrip() != line:
            at += 1
        assert at < len(printed), f"{doc}: `{command}` does not print, in this order: {line!r}"
        at += 1
