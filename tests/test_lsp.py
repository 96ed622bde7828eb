"""`fleetrules lsp` over a real stdio session, driven by pygls' language client: diagnostics as the text
changes, formatting, hover on a policy and a rule, go to definition on an include."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from lsprotocol import types
from pygls.lsp.client import LanguageClient

BROKEN = """policy p {
  select { kind Deployment }
  tolerat x
}
"""
GOOD = """include "shared.fr"

policy web {
  select { kind Deployment }
  clusters { labels { env = prod } }
  tolerate dedicated = batch : NoSchedule
  workload anti-affinity by app
}

rule crowded {
  when binding b and placement q (q.binding != b.name and q.namespace == b.namespace)
   and cluster c (c.name == q.cluster)
  then reject c for b "crowded by {q.binding}"
}
"""
MESSY = "policy   m {select{kind Job}}\n"


async def _session(folder: Path) -> dict[str, object]:
    client = LanguageClient("fleetrules-test", "1")
    published: dict[str, list[types.Diagnostic]] = {}
    arrived = asyncio.Event()

    @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)  # type: ignore[untyped-decorator]
    def on_diagnostics(params: types.PublishDiagnosticsParams) -> None:
        published[params.uri] = list(params.diagnostics)
        arrived.set()

    async def diagnostics_for(uri: str) -> list[types.Diagnostic]:
        await asyncio.wait_for(arrived.wait(), 30)
        arrived.clear()
        return published[uri]

    await client.start_io(sys.executable, "-m", "engine", "lsp")
    out: dict[str, object] = {}
    try:
        await client.initialize_async(
            types.InitializeParams(capabilities=types.ClientCapabilities(), root_uri=folder.as_uri())
        )
        client.initialized(types.InitializedParams())
        policy = folder / "policy.fr"
        uri = policy.as_uri()
        item = types.TextDocumentItem(uri=uri, language_id="fleetrules", version=1, text=BROKEN)
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        out["broken"] = await diagnostics_for(uri)
        change = types.TextDocumentContentChangeWholeDocument(text=GOOD)
        client.text_document_did_change(
            types.DidChangeTextDocumentParams(types.VersionedTextDocumentIdentifier(uri=uri, version=2), [change])
        )
        out["fixed"] = await diagnostics_for(uri)
        document = types.TextDocumentIdentifier(uri=uri)
        out["policy hover"] = await client.text_document_hover_async(
            types.HoverParams(document, types.Position(line=2, character=8))
        )
        out["rule hover"] = await client.text_document_hover_async(
            types.HoverParams(document, types.Position(line=9, character=6))
        )
        out["definition"] = await client.text_document_definition_async(
            types.DefinitionParams(document, types.Position(line=0, character=12))
        )
        messy = folder / "messy.fr"
        item = types.TextDocumentItem(uri=messy.as_uri(), language_id="fleetrules", version=1, text=MESSY)
        client.text_document_did_open(types.DidOpenTextDocumentParams(text_document=item))
        await diagnostics_for(messy.as_uri())
        options = types.FormattingOptions(tab_size=2, insert_spaces=True)
        out["formatting"] = await client.text_document_formatting_async(
            types.DocumentFormattingParams(types.TextDocumentIdentifier(uri=messy.as_uri()), options)
        )
        await client.shutdown_async(None)
        client.exit(None)
    finally:
        await client.stop()  # type: ignore[no-untyped-call]
    return out


def test_a_stdio_session(tmp_path: Path) -> None:
    (tmp_path / "policy.fr").write_text(GOOD)  # on disk: includes are read relative to it
    (tmp_path / "shared.fr").write_text("policy shared {\n  select { kind ConfigMap }\n}\n")
    (tmp_path / "messy.fr").write_text(MESSY)
    out = asyncio.run(_session(tmp_path))

    found = out["broken"]
    assert isinstance(found, list)
    (broken,) = found
    assert broken.message.startswith("unknown keyword 'tolerat'")
    assert (broken.range.start.line, broken.range.start.character) == (2, 2)
    assert broken.severity == types.DiagnosticSeverity.Error and broken.source == "fleetrules"
    assert out["fixed"] == []

    policy_hover = out["policy hover"]
    assert isinstance(policy_hover, types.Hover) and isinstance(policy_hover.contents, types.MarkupContent)
    text = policy_hover.contents.value
    assert "**policy web**" in text and "`web/clusters.labels` (line 5)" in text
    assert "`workload-anti-affinity`" in text and "`taint-toleration`" in text

    rule_hover = out["rule hover"]
    assert isinstance(rule_hover, types.Hover) and isinstance(rule_hover.contents, types.MarkupContent)
    assert (
        "Evaluated as an indexed join once per group of bindings alike in b.namespace (its own placements and"
        " clusters checked per binding): placement by namespace, cluster by name" in rule_hover.contents.value
    )

    definition = out["definition"]
    assert isinstance(definition, types.Location) and definition.uri == (tmp_path / "shared.fr").resolve().as_uri()

    edits = out["formatting"]
    assert isinstance(edits, (list, tuple)), repr(edits)
    (edit,) = edits
    assert edit.new_text == "policy m {\n  select {\n    kind Job\n  }\n}\n"


def test_a_policy_hover_says_what_preemption_and_lazy_activation_do() -> None:
    from engine.lsp import hover

    text = "policy p {\n  select { kind Deployment name web }\n  preemption always\n  activation lazy\n}\n"
    found = hover("file:///p.fr", text, 0, 8)
    assert found is not None and isinstance(found.contents, types.MarkupContent)
    assert "PropagationPolicyPreemption gate only" in found.contents.value
    assert "Lazy activation: a change of this policy's placement" in found.contents.value
    plain = hover("file:///p.fr", "policy p {\n  select { kind Deployment }\n}\n", 0, 8)
    assert plain is not None and isinstance(plain.contents, types.MarkupContent)
    assert "Preemption" not in plain.contents.value and "Lazy" not in plain.contents.value


def _raw_session(*messages: bytes) -> list[dict[str, object]]:
    """Bytes to `fleetrules lsp` as they are, then a shutdown and exit; the JSON messages it wrote back."""
    import subprocess

    def framed(message: dict[str, object]) -> bytes:
        body = json.dumps(message).encode()
        return b"Content-Length: %d\r\n\r\n" % len(body) + body

    init = framed({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}})
    end = framed({"jsonrpc": "2.0", "id": 99, "method": "shutdown"}) + framed({"jsonrpc": "2.0", "method": "exit"})
    done = subprocess.run(
        [sys.executable, "-m", "engine", "lsp"], input=init + b"".join(messages) + end, capture_output=True, timeout=60
    )
    out, replies = done.stdout, []
    while out:
        head, _, rest = out.partition(b"\r\n\r\n")
        length = int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0])
        replies.append(json.loads(rest[:length]))
        out = rest[length:]
    return replies


def test_the_server_answers_what_it_cannot_take_and_keeps_going() -> None:
    """A request with invalid params went unanswered, and after a malformed header the server never answered
    again (issue 28)."""
    hover = b'{"jsonrpc": "2.0", "id": 3, "method": "textDocument/hover", "params": {"bogus": 1}}'
    replies = _raw_session(
        b"Content-Length: %d\r\n\r\n" % len(hover) + hover,
        b"Content-Length: abc\r\n\r\n{}",
        b"Content-Length: 7\r\n\r\nnotjson",
        b'Content-Length: 19\r\n\r\n{"jsonrpc": "2.0"}\n',
    )
    by_id = {r.get("id"): r for r in replies if "id" in r}
    assert by_id[3]["error"] == {"code": -32602, "message": "Invalid Params for textDocument/hover"}
    errors = [r["error"] for r in replies if r.get("id") is None and "error" in r]
    assert {e["code"] for e in errors} >= {-32700}  # type: ignore[index]
    assert 99 in by_id and "error" not in by_id[99]  # still answering after all of it
    assert "Traceback" not in json.dumps(replies)


def test_no_traceback_goes_to_the_client() -> None:
    from pygls.exceptions import JsonRpcInternalError

    from engine.lsp import _Protocol

    sent: list[object] = []
    protocol = _Protocol.__new__(_Protocol)
    protocol._send_data = sent.append  # type: ignore[method-assign,assignment]
    try:
        raise ValueError("boom")
    except ValueError:
        error = JsonRpcInternalError.of(sys.exc_info()).to_response_error()  # type: ignore[no-untyped-call]
    assert error.data is not None
    protocol._send_response(1, error=error)
    (message,) = sent
    assert message.error.data is None and "boom" not in message.error.message  # type: ignore[attr-defined]
    assert "its log on stderr says more" in message.error.message  # type: ignore[attr-defined]


def test_a_document_past_the_limit_is_not_checked() -> None:
    from engine.lsp import MAX_DOCUMENT, diagnostics

    (found,) = diagnostics("untitled:big", "policy p {\n" * (MAX_DOCUMENT // 10))
    assert found.severity == types.DiagnosticSeverity.Warning and "checks documents up to" in found.message


def test_go_to_definition_goes_only_where_the_cli_reads(tmp_path: Path) -> None:
    from engine.lsp import definition

    (tmp_path / "rules").mkdir()
    (tmp_path / "common").mkdir()
    (tmp_path / "common" / "base.fr").write_text("policy base {\n  select { kind Job }\n}\n")
    (tmp_path / "rules" / "notes.txt").write_text("x\n")
    uri = (tmp_path / "rules" / "p.fr").as_uri()
    for target in ("/etc/passwd", "../common/base.fr", "notes.txt"):
        assert definition(uri, f'include "{target}"\n', 0, 10) is None, target
    found = definition(uri, 'include "../common/base.fr"\n', 0, 10, [tmp_path])
    assert found is not None and found.uri == (tmp_path / "common" / "base.fr").as_uri()


def _framed(message: dict[str, object]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def test_absurd_framing_is_answered_and_the_session_goes_on() -> None:
    """A length of 5,000 digits ended the server (int()'s digit limit); a body of arrays nested 100,000 deep
    ended it (RecursionError); a length of 99,999,999,999 wedged it, reading the next messages as that body."""
    nested = b"[" * 100_000 + b"]" * 100_000
    replies = _raw_session(
        b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n",
        b"Content-Length: %d\r\n\r\n" % len(nested) + nested,
        b"Content-Length: 99999999999\r\n\r\n",
        _framed({"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover", "params": {"bogus": 1}}),
    )
    errors = [r["error"]["code"] for r in replies if r.get("id") is None and "error" in r]  # type: ignore[index]
    assert errors == [-32600, -32700, -32600]
    by_id = {r.get("id"): r for r in replies if "id" in r}
    assert by_id[7]["error"]["code"] == -32602 and "error" not in by_id[99]  # type: ignore[index]


def test_a_request_after_shutdown_is_an_invalid_request() -> None:
    hover = {"textDocument": {"uri": "file:///x.fr"}, "position": {"line": 0, "character": 0}}
    replies = _raw_session(
        _framed({"jsonrpc": "2.0", "id": 50, "method": "shutdown"}),
        _framed({"jsonrpc": "2.0", "id": 51, "method": "textDocument/hover", "params": hover}),
    )
    by_id = {r.get("id"): r for r in replies if "id" in r}
    assert by_id[50].get("result") is None and "error" not in by_id[50]
    assert by_id[51]["error"] == {"code": -32600, "message": "the server is shut down"}


def test_no_exception_text_and_no_file_the_editor_did_not_open(tmp_path: Path) -> None:
    """A didChange of an unopened document showed the client "KeyError"; formatting, hover and definition read
    any file:// URI from disk, outside the workspace too (formatting returned the file's text)."""
    secret = tmp_path / "secret.fr"
    secret.write_text("policy   secret {select{kind Job}}\n")
    uri = secret.as_uri()
    position = {"line": 0, "character": 10}
    replies = _raw_session(
        _framed(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didChange",
                "params": {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [{"text": "x"}]},
            }
        ),
        _framed(
            {
                "jsonrpc": "2.0",
                "id": 5,
                "method": "textDocument/formatting",
                "params": {"textDocument": {"uri": uri}, "options": {"tabSize": 2, "insertSpaces": True}},
            }
        ),
        _framed(
            {
                "jsonrpc": "2.0",
                "id": 6,
                "method": "textDocument/hover",
                "params": {"textDocument": {"uri": uri}, "position": position},
            }
        ),
        _framed(
            {
                "jsonrpc": "2.0",
                "id": 7,
                "method": "textDocument/definition",
                "params": {"textDocument": {"uri": uri}, "position": position},
            }
        ),
    )
    by_id = {r.get("id"): r for r in replies if "id" in r}
    assert [by_id[i].get("result", "missing") for i in (5, 6, 7)] == [None, None, None]
    assert "secret" not in json.dumps(replies) and "KeyError" not in json.dumps(replies)
    assert not [r for r in replies if r.get("method") == "window/showMessage"]


def test_sigterm_and_sigint_end_the_server_at_once_while_it_checks(tmp_path: Path) -> None:
    """SIGTERM in the middle of a check printed a traceback; SIGINT waited for the check to end."""
    import signal
    import subprocess
    import time

    from engine.lsp import MAX_DOCUMENT

    one = "policy p%d {\n  select { kind Deployment name web%d }\n  clusters { labels { env = prod } }\n}\n"
    text = "".join(one % (i, i) for i in range(MAX_DOCUMENT // len(one % (99999, 99999))))
    item = {"uri": (tmp_path / "big.fr").as_uri(), "languageId": "fleetrules", "version": 1, "text": text}
    for signum in (signal.SIGTERM, signal.SIGINT):
        server = subprocess.Popen(
            [sys.executable, "-m", "engine", "lsp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        assert server.stdin is not None
        server.stdin.write(_framed({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}}}))
        server.stdin.write(
            _framed({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": item}})
        )
        server.stdin.flush()
        time.sleep(3)  # started, and checking the document
        server.send_signal(signum)
        sent = time.monotonic()
        _, err = server.communicate(timeout=60)
        took = time.monotonic() - sent
        assert server.returncode == 128 + signum and b"Traceback" not in err, err[-2000:]
        assert took < 2.5, took
