"""Fuzzing every verb (issue 28): an example's inputs with a few random edits (a slice dropped or repeated, a
token of the languages inserted, a number of any size written, a byte replaced), run through the command line;
whatever the edits, the answer is an exit code of 0, 1 or 2 with a message, never a traceback. The same for a
rule test's ``expect:`` replaced by any YAML value (issue 45), and for the language server's framing: a session's
bytes edited, headers and bodies alike, are answered or dropped, never the end of the server. Bounded here; for a
longer run:

    FLEETRULES_FUZZ_VERB_EXAMPLES=2000 .venv/bin/python -m pytest tests/test_fuzz_cli.py

(200 examples a verb; the slow mark runs ten times as many as part of `pytest -m slow`).
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
COUNT = int(os.environ.get("FLEETRULES_FUZZ_VERB_EXAMPLES", "200"))

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
            numbers = st.integers(1, 6000).map(lambda n: "9" * n)  # past int64, past Python's 4,300 digits
            text = text[:at] + draw(st.sampled_from(TOKENS) | st.text(max_size=4) | numbers) + text[at:]
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


# any value YAML can hold, as a rule test's expect may be written
_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=12), inner, max_size=3),
    max_leaves=12,
)
_EXPECTS = _VALUES | st.fixed_dictionaries(
    {},
    optional={
        "placements": _VALUES | st.dictionaries(st.just("streaming/fraud-detector-flinkdeployment"), _VALUES),
        "rejected": _VALUES | st.dictionaries(st.just("streaming/fraud-detector-flinkdeployment"), _VALUES),
        "evictions": _VALUES | st.lists(_VALUES, max_size=2),
    },
)


@settings(max_examples=max(COUNT // 3, 20), deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(expect=_EXPECTS, output=st.sampled_from(["text", "junit", "sarif"]))
def test_a_rule_tests_expect_of_any_shape_fails_its_case_alone(expect: object, output: str) -> None:
    import tempfile

    import yaml

    with tempfile.TemporaryDirectory() as tmp:
        paths = _scenario(Path(tmp))
        test = yaml.safe_load(paths["test"].read_text())
        test["cases"] = [test["cases"][0], {"name": "fuzzed", "expect": expect}]
        paths["test"].write_text(yaml.safe_dump(test))
        result = CliRunner().invoke(main, ["test", str(paths["test"].parent), "--format", output])
        assert result.exit_code in (0, 1), (expect, result.exit_code, result.output)
        assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
        assert result.stdout and "Traceback" not in result.output


def _session() -> bytes:
    """A short editor session: initialize, open a rule file, hover, format, shut down, exit."""
    import json

    text = (EXAMPLES / "flink-checkpoint" / "policy.fr").read_text()
    uri = "untitled:policy.fr"
    document = {"textDocument": {"uri": uri}}
    messages = [
        {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}},
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": {
            "uri": uri, "languageId": "fleetrules", "version": 1, "text": text}}},
        {"jsonrpc": "2.0", "id": 2, "method": "textDocument/hover",
         "params": {**document, "position": {"line": 4, "character": 3}}},
        {"jsonrpc": "2.0", "id": 3, "method": "textDocument/formatting",
         "params": {**document, "options": {"tabSize": 2, "insertSpaces": True}}},
        {"jsonrpc": "2.0", "id": 4, "method": "shutdown"},
        {"jsonrpc": "2.0", "method": "exit"},
    ]  # fmt: skip
    out = b""
    for message in messages:
        body = json.dumps(message).encode()
        out += b"Content-Length: %d\r\n\r\n" % len(body) + body
    return out


@st.composite
def _framing(draw: st.DrawFn, session: bytes) -> bytes:
    """The session's bytes with a few edits, headers favoured: a length changed to any number of digits."""
    import re

    for _ in range(draw(st.integers(1, 3))):
        headers = [m.span(1) for m in re.finditer(rb"Content-Length: (\d+)", session)]
        header: bool = draw(st.booleans())
        if headers and header:
            start, end = draw(st.sampled_from(headers))
            digits = draw(st.sampled_from([b"0", b"1", b"99999999999", b"9" * 5000, b"-1", b"abc", b""]))
            session = session[:start] + digits + session[end:]
        else:
            at = draw(st.integers(0, len(session)))
            end = min(len(session), at + draw(st.integers(0, 40)))
            edit = draw(st.sampled_from([b"", session[at:end] * 2, b"[" * 3000, b"\r\n\r\n", b"\xff", b"{"]))
            session = session[:at] + edit + session[end:]
    return session


@settings(max_examples=max(COUNT // 3, 20), deadline=None, suppress_health_check=list(HealthCheck), database=None)
@given(data=st.data())
def test_the_language_server_survives_any_framing(data: st.DataObject) -> None:
    import asyncio
    import io
    import threading

    from pygls.io_ import StdoutWriter

    from engine import lsp

    class Kept(io.BytesIO):
        def close(self) -> None:  # the exit notification closes the writer: what it wrote is read after
            pass

    given_bytes = data.draw(_framing(_session()))
    out = Kept()
    server = lsp.server()
    server._stop_event = threading.Event()
    server.protocol.set_writer(StdoutWriter(out))
    try:
        asyncio.run(asyncio.wait_for(lsp._serve(server, lsp._Reader(io.BytesIO(given_bytes))), 60))
    except SystemExit:
        pass  # the exit notification, as pygls ends the process
    finally:
        server.shutdown()  # type: ignore[no-untyped-call]
    written = out.getvalue()
    assert b"Traceback" not in written
    while written:  # every message the server wrote is framed whole
        head, _, rest = written.partition(b"\r\n\r\n")
        length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        assert len(rest) >= length
        written = rest[length:]
