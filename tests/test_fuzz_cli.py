"""Fuzzing every verb (issue 28): an example's inputs with a few random edits (a slice dropped or repeated, a
token of the languages inserted, a byte replaced), run through the command line; whatever the edits, the
answer is an exit code of 0, 1 or 2 with a message, never a traceback. Bounded here; for a longer run:

    FLEETRULES_FUZZ_VERB_EXAMPLES=2000 .venv/bin/python -m pytest tests/test_fuzz_cli.py

(the slow mark runs ten times the default as part of `pytest -m slow`).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.cli import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
COUNT = int(os.environ.get("FLEETRULES_FUZZ_VERB_EXAMPLES", "300"))

# what an edit may insert: the words, brackets and tricks of the DSL and of YAML
TOKENS = [
    "{", "}", "(", ")", "[", "]", '"', "'", ":", ",", "-", "\n", "\t", " ", "\x00", "\ufeff", "é", "\u202e",
    "policy p {", "rule r {", "when", "then", "reject", "prefer", "evict", "derive", "not", "and", "or", "in",
    "include \"x.fr\"", "select", "clusters", "labels", "tolerate", "spread", "workload", "anti-affinity",
    "weight 500", "within", "failover", "purge", "grace", "99999999999999999999", "-1", "0", "1.5", "1e400",
    "!!int x", "!!binary", "&a", "*a", "<<: *a", "? ", "--- ", "...", "%YAML 1.1", "null", "~", "true",
    "kind: Cluster", "apiVersion: v1", "metadata:", "name:", "spec:", "status:", "replicas: -3", "{{", "}}",
    "2026-02-30T25:61:00Z", "NoExecute", "Unhealthy", "at:", "type: health", "cluster:", "binding:",
]  # fmt: skip


@st.composite
def _edited(draw: st.DrawFn, text: str) -> str:
    for _ in range(draw(st.integers(1, 3))):
        at = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["drop", "repeat", "insert", "replace"]))
        end = min(len(text), at + draw(st.integers(0, 40)))
        if kind == "drop":
            text = text[:at] + text[end:]
        elif kind == "repeat":
            text = text[:end] + text[at:end] + text[end:]
        elif kind == "insert":
            text = text[:at] + draw(st.sampled_from(TOKENS) | st.text(max_size=4)) + text[at:]
        elif at < len(text):
            text = text[:at] + draw(st.characters()) + text[at + 1 :]
    return text


def _scenario(tmp: Path) -> dict[str, Path]:
    """The flink-checkpoint example (rules, facts, events, a rule test) copied to ``tmp``."""
    source = EXAMPLES / "flink-checkpoint"
    for name in ("policy.fr", "failover_test.yaml"):
        shutil.copy(source / name, tmp / name)
    shutil.copytree(source / "facts", tmp / "facts")
    shutil.copy(source / "events" / "job-fails.yaml", tmp / "events.yaml")
    return {
        "rules": tmp / "policy.fr",
        "facts": tmp / "facts" / "fraud-detector.yaml",
        "clusters": tmp / "facts" / "clusters.yaml",
        "events": tmp / "events.yaml",
        "test": tmp / "failover_test.yaml",
    }


def _verbs(p: dict[str, Path]) -> dict[str, list[str]]:
    rules, facts = str(p["rules"]), str(p["facts"].parent)
    return {
        "check": ["check", rules],
        "fmt": ["fmt", "--diff", rules],
        "eval": ["eval", rules, "--facts", facts, "-o", "json"],
        "explain": ["explain", rules, "--facts", facts, "--binding", "streaming/fraud-detector-flinkdeployment",
                    "--cluster", "member1"],
        "simulate": ["simulate", rules, "--facts", facts, "--events", str(p["events"])],
        "diff": ["diff", "--base", str(EXAMPLES / "flink-checkpoint" / "policy.fr"), "--head", rules,
                 "--facts", facts, "-o", "json"],
        "resilience": ["resilience", rules, "--facts", facts, "--workers", "1"],
        "test": ["test", str(p["test"].parent)],
        "convert": ["convert", rules],
    }  # fmt: skip


# the inputs each verb reads, any of which an edit may hit
READS = {
    "check": ["rules"],
    "fmt": ["rules"],
    "eval": ["rules", "facts", "clusters"],
    "explain": ["rules", "facts", "clusters"],
    "simulate": ["rules", "facts", "clusters", "events"],
    "diff": ["rules", "facts"],
    "resilience": ["rules", "facts", "clusters"],
    "test": ["rules", "test", "clusters"],
    "convert": ["rules"],
}


def _fuzz(verb: str, examples: int) -> Callable[[], None]:
    @settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck), database=None)
    @given(st.data())
    def run(data: st.DataObject) -> None:
        import tempfile

        with tempfile.TemporaryDirectory() as tmp:
            paths = _scenario(Path(tmp))
            target = paths[data.draw(st.sampled_from(READS[verb]))]
            edited = data.draw(_edited(target.read_text(encoding="utf-8")))
            target.write_bytes(edited.encode("utf-8", "surrogatepass"))  # a lone surrogate: bytes that are not UTF-8
            args = _verbs(paths)[verb]
            result = CliRunner().invoke(main, args, catch_exceptions=True)
            output = result.output
            assert result.exit_code in (0, 1, 2), (args, result.exit_code, output)
            assert result.exception is None or isinstance(result.exception, SystemExit), (
                args,
                repr(result.exception),
            )
            assert "Traceback" not in output, output

    return run


@pytest.mark.parametrize("verb", sorted(READS))
def test_no_verb_gives_a_traceback_on_edited_inputs(verb: str) -> None:
    _fuzz(verb, COUNT)()


@pytest.mark.slow
@pytest.mark.parametrize("verb", sorted(READS))
def test_no_verb_gives_a_traceback_on_edited_inputs_longer(verb: str) -> None:
    _fuzz(verb, COUNT * 10)()
