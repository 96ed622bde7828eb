"""The layering of engine/ (docs/architecture.md): each stage imports only the stages below it, nothing
but the backend touches durable-rules, and no two modules import each other, even through others.

Imports are read from the source (every import statement, inside functions too), not from running it."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest

ENGINE = Path(__file__).resolve().parent.parent / "engine"

# Lowest first. A stage may import itself and anything listed before it.
LAYERS = (
    ("engine.codes",),
    ("engine.errors", "engine.grammar", "engine.rules", "engine.collector"),
    ("engine.kube",),
    ("engine.syntax",),
    ("engine.inputs",),
    ("engine.compile",),
    ("engine.backend",),
    ("engine.checker",),
    ("engine.results",),
    ("engine.detector",),
    ("engine.schedule",),
    ("engine.karmada",),
    ("engine.failover",),
    ("engine.pipeline",),
    ("engine.review",),
    ("engine.render",),
    ("engine",),  # the public API, engine/__init__.py
    ("engine.lsp",),  # the language server, started by `fleetrules lsp`
    ("engine.cli",),
    ("engine.__main__",),
)
RULE_ENGINE = ("durable", "durable_rules")
BACKEND = "engine.backend.durable"


def module_name(path: Path) -> str:
    parts = path.relative_to(ENGINE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(ENGINE.rglob("*.py"))}


def imports(path: Path) -> Iterator[str]:
    """Every module ``path`` imports; ``from engine.x import y`` counts as engine.x.y when that is a module."""
    known = modules()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module is not None and node.level == 0:
            for alias in node.names:
                candidate = f"{node.module}.{alias.name}"
                yield candidate if candidate in known else node.module


def stage(module: str) -> str:
    """The layer entry a module belongs to: its longest matching prefix."""
    names = [name for layer in LAYERS for name in layer]
    matches = [n for n in names if module == n or (n != "engine" and module.startswith(n + "."))]
    return max(matches, key=len) if matches else "engine"


def rank(module: str) -> int:
    found = stage(module)
    return next(i for i, layer in enumerate(LAYERS) if found in layer)


def test_every_module_has_a_layer() -> None:
    unplaced = [m for m in modules() if stage(m) == "engine" and m != "engine"]
    assert not unplaced, f"add these to LAYERS: {unplaced}"


def upward(module: str, targets: Iterator[str] | list[str]) -> list[str]:
    """The engine modules among ``targets`` that ``module`` may not import."""
    return [t for t in targets if t.startswith("engine") and stage(t) != stage(module) and rank(t) >= rank(module)]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        state[node] = 1
        path.append(node)
        for target in sorted(graph.get(node, ())):
            if state.get(target) == 1:
                found.append([*path[path.index(target) :], target])
            elif target not in state:
                visit(target)
        path.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return found


@pytest.mark.parametrize("module", sorted(modules()))
def test_imports_run_downward(module: str) -> None:
    wrong = upward(module, list(imports(modules()[module])))
    assert not wrong, f"{module} (layer {stage(module)}) imports a stage above or beside it: {wrong}"


def test_only_the_backend_imports_durable_rules() -> None:
    users = sorted(m for m, path in modules().items() if any(t.split(".")[0] in RULE_ENGINE for t in imports(path)))
    assert users == [BACKEND]


def test_no_import_cycles() -> None:
    graph = {m: {t for t in imports(p) if t in modules() and t != m} for m, p in modules().items()}
    found = cycles(graph)
    assert not found, "import cycles: " + "; ".join(" -> ".join(c) for c in found)


def test_the_checks_can_fail(tmp_path: Path) -> None:
    """An upward import, an import inside a function, a cycle through a third module: each is seen."""
    source = tmp_path / "x.py"
    source.write_text("def f():\n    from engine.cli import main\nimport durable.engine\n")
    assert sorted(imports(source)) == ["durable.engine", "engine.cli"]
    assert upward("engine.schedule.scheduler", ["engine.cli", "engine.backend", "engine.schedule.views"]) == [
        "engine.cli"
    ]
    assert upward("engine.inputs.facts", ["engine.checker.rule_set"]) == ["engine.checker.rule_set"]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == [["a", "b", "c", "a"]]
    assert cycles({"a": {"b"}, "b": {"c"}, "c": set()}) == []


# the Session methods that change facts (engine.backend.protocol)
FACT_CHANGES = ("assert_fact", "retract", "place")
FACT_STORE = "engine.schedule.store"


def fact_changes(path: Path) -> list[str]:
    """The calls in ``path`` that change a session's facts: ``assert_fact`` or ``retract`` on anything, ``place``
    on a session (``x.session.place``, ``session.place``), each as LINE: SOURCE."""
    source = path.read_text(encoding="utf-8")
    out = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in FACT_CHANGES:
            receiver = ast.get_source_segment(source, node.func.value) or ""
            if node.func.attr != "place" or "session" in receiver:
                out.append(f"{node.lineno}: {receiver}.{node.func.attr}")
    return out


def test_only_the_store_changes_a_sessions_facts() -> None:
    """The scheduler in parts (issue 29): facts are asserted and retracted in engine/schedule/store.py alone;
    the scheduler and the failover controllers go through it."""
    found = {
        m: calls
        for m, path in modules().items()
        if stage(m) != "engine.backend" and m != FACT_STORE and (calls := fact_changes(path))
    }
    assert not found, f"facts changed outside {FACT_STORE}: {found}"
    assert fact_changes(modules()[FACT_STORE])  # the check sees the store's own


def test_the_fact_check_can_fail(tmp_path: Path) -> None:
    source = tmp_path / "x.py"
    source.write_text(
        "self.session.retract(i)\ns.assert_fact('t', {})\nself.session.place(None, 't', {}, [])\nstore.place('k', [])\n"
    )
    assert fact_changes(source) == ["1: self.session.retract", "2: s.assert_fact", "3: self.session.place"]


# A reader of the repository has no copy of the spec the project was started from: sources are cited
# as Karmada's own files and functions (issue 47).
SPEC_CITATION = re.compile(r"shared/spec|karmada-reference\.md|semantics\.md|durable-rules-notes|§\d|\bS[1-9]\b")
CITING = ("engine", "tests", "docs", "rules", "grammar", "benchmarks", "examples", "editors")


def spec_citations(root: Path) -> list[str]:
    found = []
    for top in CITING:
        for path in sorted((root / top).rglob("*")):
            if path.is_symlink() or not path.is_file() or path.suffix not in (".py", ".md", ".fr", ".lark", ".yaml"):
                continue
            if path == Path(__file__).resolve():  # the pattern itself
                continue
            for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if SPEC_CITATION.search(line):
                    found.append(f"{path.relative_to(root)}:{number}: {line.strip()}")
    readme = root / "README.md"
    found += [
        f"README.md:{n}" for n, line in enumerate(readme.read_text().splitlines(), 1) if SPEC_CITATION.search(line)
    ]
    return found


def test_sources_are_cited_as_karmadas_files() -> None:
    assert spec_citations(ENGINE.parent) == []


def test_the_citation_check_can_fail(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "x.md").write_text("as karmada-reference.md §4.3 says\n")
    (tmp_path / "README.md").write_text("see shared/spec\n")
    assert spec_citations(tmp_path) == ["docs/x.md:1: as karmada-reference.md §4.3 says", "README.md:1"]


def test_every_module_is_in_the_architecture_doc() -> None:
    """docs/architecture.md lists every module of the package, by its path (issue 47: it says what is)."""
    doc = (ENGINE.parent / "docs" / "architecture.md").read_text()
    listed = set(re.findall(r"`(engine/[\w/]+\.py)`", doc))
    modules = {
        p.relative_to(ENGINE.parent).as_posix()
        for p in ENGINE.rglob("*.py")
        if p.relative_to(ENGINE).parts[0] not in ("grammar", "rules")
    }
    assert sorted(modules - listed) == [], "add these to docs/architecture.md's table"
    assert sorted(listed - modules) == [], "no longer modules of the package"


MAX_MODULE_LINES = 600  # a module says one part of Karmada or of fleetrules (issue 47)


def test_no_module_is_over_600_lines() -> None:
    long = {
        p.relative_to(ENGINE.parent).as_posix(): n
        for p in ENGINE.rglob("*.py")
        if p.relative_to(ENGINE).parts[0] not in ("grammar", "rules")
        and (n := len(p.read_text().splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}, "split these by what they model"
