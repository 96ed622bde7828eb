"""A feature gate off, said once and in the same words by every verb that reads the policies (issue 46): `diff`
said "0 bindings moved" of an anti-affinity that does nothing, with nothing on stderr; `check`, `resilience` and
the language server said nothing of it."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from engine.cli import main
from engine.lsp import diagnostics

ROOT = Path(__file__).resolve().parent.parent
HA = ROOT / "examples" / "flink-ha"
NOTE = (
    "policy flink-ha: workload affinity and anti-affinity do nothing (the detector records no groups, the scheduler "
    "has no affinity plugin); preferred workload terms, a fleetrules extension, act whatever the gate: the "
    "WorkloadAffinity feature gate (alpha) is off"
)


@pytest.mark.parametrize(
    "args",
    [
        ["check", "policy.fr"],
        ["eval", "policy.fr", "--facts", "facts"],
        ["diff", "--base", "policy.fr", "--head", "policy.fr", "--facts", "facts"],
        ["resilience", "policy.fr", "--facts", "facts", "--workers", "1"],
    ],
)
def test_every_verb_says_the_gate_note_once_in_the_same_words(args: list[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLEETRULES_CONTROLLER")  # Karmada's defaults: WorkloadAffinity off
    monkeypatch.chdir(HA)
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    said = result.stdout if args[0] == "check" else result.stderr
    assert said.count(NOTE) == 1, said
    on = CliRunner().invoke(main, [*args, "--controller", "feature-gates=WorkloadAffinity=true"])
    assert NOTE not in on.output


def test_the_language_server_says_it_where_the_policy_uses_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLEETRULES_CONTROLLER")
    path = HA / "policy.fr"
    (note,) = [d for d in diagnostics(path.as_uri(), path.read_text()) if NOTE in d.message]
    assert note.range.start.line == 20  # line 21, the anti-affinity term
    monkeypatch.setenv("FLEETRULES_CONTROLLER", "feature-gates=WorkloadAffinity=true")
    assert not [d for d in diagnostics(path.as_uri(), path.read_text()) if NOTE in d.message]
