"""The one YAML loader of fleetrules: facts, policies, events and rule tests all come through it.

Safe by construction: only the standard tags, duplicate keys refused (as Kubernetes' decoder
refuses them), nesting and alias expansion bounded, and the values a Kubernetes API server would
hold (timestamps and binary stay the strings they are in JSON; map keys are strings, ``1`` and
``true`` written "1" and "true" as sigs.k8s.io/yaml converts them). Every mapping and list remembers
where it and each of its entries stood, so that a problem found later in a field is reported at
``file:line:col``.
"""

from __future__ import annotations

from collections.abc import Hashable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from engine.errors import Diagnostic, Span, error
from engine.kube import gojson

MAX_DEPTH = 200  # nested mappings and lists in one document
MAX_VALUES = 1_000_000  # values of a document with every alias expanded: a "billion laughs" stays small
MAX_BYTES = 64 * 1024 * 1024

_Base: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


@dataclass(frozen=True)
class Position:
    line: int  # 1-based
    column: int  # 1-based


@dataclass
class Marks:
    """Where the containers of one file's documents stand: the container, and each key or index."""

    file: str
    # container id → ((line, column) of it, each entry's (key line, key column, value line, value column)),
    # 0-based as the parser counts; plain tuples, as a fleet's snapshot has a few hundred thousand
    _at: dict[int, tuple[tuple[int, int], dict[Any, tuple[int, int, int, int]]]] = field(default_factory=dict)
    _keep: list[Any] = field(default_factory=list)  # the containers, so that their ids stay theirs

    def record(self, container: Any, where: tuple[int, int], entries: dict[Any, tuple[int, int, int, int]]) -> None:
        self._at[id(container)] = (where, entries)
        self._keep.append(container)

    def position(self, container: Any, key: Any = None, of_key: bool = False) -> Position | None:
        """Where ``container[key]`` stands (with ``of_key``, where the key itself is written; the container
        when ``key`` is None), if known."""
        found = self._at.get(id(container))
        if found is None:
            return None
        (line, column), entries = found
        if key is None or not isinstance(key, Hashable) or key not in entries:
            return Position(line + 1, column + 1)
        key_line, key_column, value_line, value_column = entries[key]
        if of_key and key_line >= 0:
            return Position(key_line + 1, key_column + 1)
        return Position(value_line + 1, value_column + 1)

    def span(self, container: Any, key: Any = None, of_key: bool = False) -> Span:
        where = self.position(container, key, of_key) or Position(1, 1)
        return Span(self.file, where.line, where.column, where.line, where.column + 1)


@dataclass(frozen=True)
class Document:
    value: Any
    index: int  # 1-based, counting empty documents too
    marks: Marks

    def span(self, container: Any = None, key: Any = None, of_key: bool = False) -> Span:
        return self.marks.span(self.value if container is None else container, key, of_key)


class _Loader(_Base):  # type: ignore[misc]
    def __init__(self, stream: str, marks: Marks) -> None:
        super().__init__(stream)
        self.marks = marks
        self.depth = 0

    def _enter(self, node: yaml.Node) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise yaml.constructor.ConstructorError(
                None, None, f"nested more than {MAX_DEPTH} levels deep", node.start_mark
            )

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        self._enter(node)
        own = {id(k) for k, _ in node.value}
        self.flatten_mapping(node)  # merge keys (<<): merged entries come first, own keys override them
        mapping: dict[Any, Any] = {}
        entries: dict[Any, tuple[int, int, int, int]] = {}
        first: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, Hashable):
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark, "found an unhashable key", key_node.start_mark
                )
            if not isinstance(key, str):  # as sigs.k8s.io/yaml makes JSON of it: 1 → "1", true → "true"
                try:
                    key = gojson.map_key(key)
                except gojson.NotJson as exc:
                    raise yaml.constructor.ConstructorError(None, None, str(exc), key_node.start_mark) from None
            if key in first and id(key_node) in own and id(first[key]) in own:
                line = first[key].start_mark.line + 1
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first at line {line})", key_node.start_mark
                )
            first[key] = key_node
            mapping[key] = self.construct_object(value_node, deep=True)
            k, v = key_node.start_mark, value_node.start_mark
            entries[key] = (k.line, k.column, v.line, v.column)
        self.marks.record(mapping, (node.start_mark.line, node.start_mark.column), entries)
        self.depth -= 1
        return mapping

    def construct_sequence(self, node: yaml.SequenceNode, deep: bool = False) -> list[Any]:
        self._enter(node)
        items = [self.construct_object(child, deep=True) for child in node.value]
        marks = {i: (-1, -1, c.start_mark.line, c.start_mark.column) for i, c in enumerate(node.value)}
        self.marks.record(items, (node.start_mark.line, node.start_mark.column), marks)
        self.depth -= 1
        return items

    def construct_text(self, node: yaml.ScalarNode) -> str:
        """Timestamps and binary as JSON holds them: the text itself."""
        return "".join(str(node.value).split()) if node.tag.endswith(":binary") else str(node.value)


_Loader.add_constructor("tag:yaml.org,2002:map", _Loader.construct_mapping)
_Loader.add_constructor("tag:yaml.org,2002:omap", _Loader.construct_mapping)
_Loader.add_constructor("tag:yaml.org,2002:seq", _Loader.construct_sequence)
_Loader.add_constructor("tag:yaml.org,2002:timestamp", _Loader.construct_text)
_Loader.add_constructor("tag:yaml.org,2002:binary", _Loader.construct_text)


def expanded_size(value: Any, limit: int) -> int:
    """Values in ``value`` with every alias expanded, counted once per distinct object; stops past ``limit``."""
    sizes: dict[int, int] = {}

    def size(item: Any) -> int:
        if not isinstance(item, (dict, list)):
            return 1
        known = sizes.get(id(item))
        if known is not None:
            return known
        sizes[id(item)] = limit + 1  # a cycle (recursive alias) counts as unbounded
        children = (*item.keys(), *item.values()) if isinstance(item, dict) else item
        total = 1
        for child in children:
            total += size(child)
            if total > limit:
                break
        sizes[id(item)] = total
        return total

    return size(value)


def _yaml_error(exc: yaml.YAMLError, file: str) -> Diagnostic:
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is None:
        return error(f"invalid YAML: {problem}", Span(file, 1, 1, 1, 2))
    line, column = mark.line + 1, mark.column + 1
    return error(f"invalid YAML: {problem}", Span(file, line, column, line, column + 1))


def load_text(text: str, file: str) -> tuple[list[Document], list[Diagnostic]]:
    """Every document of ``text``; on a problem, the documents before it and the problem."""
    marks = Marks(file)
    loader = _Loader(text, marks)
    documents: list[Document] = []
    try:
        while loader.check_data():
            value = loader.get_data()
            index = len(documents) + 1
            if expanded_size(value, MAX_VALUES) > MAX_VALUES:
                where = marks.span(value)
                message = f"document {index}: YAML aliases expand to more than {MAX_VALUES:,} values"
                return documents, [error(message, where)]
            documents.append(Document(value, index, marks))
    except yaml.YAMLError as exc:
        return documents, [_yaml_error(exc, file)]
    except RecursionError:  # the depth bound keeps construction shallow; this is the last guard
        return documents, [error(f"invalid YAML: nested more than {MAX_DEPTH} levels deep", Span(file, 1, 1, 1, 2))]
    finally:
        loader.dispose()
    return documents, []


def read_text(path: Path, shown: str, what: str, max_bytes: int = MAX_BYTES) -> tuple[str | None, list[Diagnostic]]:
    """A file's UTF-8 text (a BOM dropped), or None and why not."""
    where = Span(shown, 0, 0, 0, 0)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            return None, [error(f"{size} bytes; {what} are limited to {max_bytes}", where, subject=shown)]
        data = path.read_bytes()
    except OSError as exc:
        return None, [error(f"cannot read: {exc.strerror or exc}", subject=shown)]
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, [error(f"not UTF-8 text (byte {exc.start})", Span(shown, line, 1, line, 2))]


def load_file(path: Path, shown: str, what: str = "YAML files") -> tuple[list[Document], list[Diagnostic]]:
    text, problems = read_text(path, shown, what)
    if text is None:
        return [], problems
    return load_text(text, shown)
