"""`fleetrules lsp` over a real stdio session, driven by pygls' language client: diagnostics as the text
changes, formatting, hover on a policy and a rule, go to definition on an include."""

from __future__ import annotations

import asyncio
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
    assert "Evaluated as an indexed join from each binding: placement by namespace, cluster by name" in (
        rule_hover.contents.value
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
    assert "PolicyPreemption gate only" in found.contents.value
    assert "Lazy activation: a change of this policy's placement" in found.contents.value
    plain = hover("file:///p.fr", "policy p {\n  select { kind Deployment }\n}\n", 0, 8)
    assert plain is not None and isinstance(plain.contents, types.MarkupContent)
    assert "Preemption" not in plain.contents.value and "Lazy" not in plain.contents.value
