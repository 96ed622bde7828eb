"""The one YAML loader of fleetrules: facts, policies, events and rule tests all come through it.

Safe by construction: only the standard tags, duplicate keys refused (as Kubernetes' decoder
refuses them), nesting and alias expansion bounded, and the values a Kubernetes API server would
hold (timestamps and binary stay the strings they are in JSON; map keys are strings, ``1`` and
``true`` written "1" and "true" as sigs.k8s.io/yaml converts them). Every mapping and list remembers
where it and each of its entries stood, so that a problem found later in a field is reported at
``file:line:col``.

A text that is one JSON value (``kubectl get -o json``) is read by the json module, about ten times
faster than PyYAML reads the same objects, with JSON's own meaning (as the API server decodes JSON:
``1e3`` is a number); its positions are found only when a problem needs one, by reading the text again
as YAML (JSON is YAML) and pairing the two readings' mappings and lists. Text that is not strictly JSON
(comments, duplicate keys, NaN, nesting deeper than the YAML bound) is read as YAML, as before.

"""

from __future__ import annotations

import json
import json.scanner
import re
from collections.abc import Callable, Hashable
from pathlib import Path
from typing import Any

import yaml

from engine.codes import Code
from engine.errors import Diagnostic, Span, error
from engine.inputs.marks import Document, Marks, pack, unpack
from engine.kube import gojson

MAX_DEPTH = 200  # nested mappings and lists in one document


MAX_VALUES = 1_000_000  # values of a document with every alias expanded: a "billion laughs" stays small


MAX_BYTES = 64 * 1024 * 1024


_Base: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


_KINDS: dict[type, str] = {yaml.SequenceNode: "list", yaml.MappingNode: "mapping"}


_MERGE = "tag:yaml.org,2002:merge"


_STR, _MAP, _SEQ = "tag:yaml.org,2002:str", "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq"


class _Loader(_Base):  # type: ignore[misc]
    """libyaml composes the nodes; values are built from them here, directly: a string (most of a snapshot)
    is its node's text, mappings and lists are built once per node (an alias shares the object, as PyYAML
    does) with their positions recorded; other tags go through PyYAML's constructors."""

    def __init__(self, stream: str, marks: Marks) -> None:
        super().__init__(stream)
        self.marks = marks
        self.depth = 0
        self.start: tuple[int, int] | None = None  # where the last document's value begins
        self.built: dict[int, Any] = {}  # node id → its value, for aliases (one document's)
        self.aliased = False  # the document reuses a value (an alias)
        self._resolved: dict[tuple[Any, str, tuple[bool, bool]], str] = {}

    def resolve(self, kind: Any, value: Any, implicit: Any) -> Any:
        """The tag of a node without one (Resolver.resolve), remembered for each plain scalar text: a
        snapshot repeats its values (kinds, API versions, label values)."""
        if kind is not yaml.ScalarNode or type(value) is not str:
            return super().resolve(kind, value, implicit)
        key = (kind, value, tuple(implicit))
        found = self._resolved.get(key)
        if found is None:
            found = self._resolved[key] = super().resolve(kind, value, implicit)
        return found

    def document(self) -> Any:
        """The next document's value (check_node first)."""
        self.built, self.aliased = {}, False
        node = self.get_node()
        self.start = (node.start_mark.line + 1, node.start_mark.column + 1)
        return self._value(node)

    def _value(self, node: yaml.Node) -> Any:
        tag = node.tag
        if tag == _STR and type(node) is yaml.ScalarNode:
            return node.value
        found = self.built.get(id(node), self)
        if found is not self:
            self.aliased = True
            return found  # an alias (or, inside its own anchor, the container being built)
        if tag == _MAP and isinstance(node, yaml.MappingNode):
            return self.construct_mapping(node)
        if tag == _SEQ and isinstance(node, yaml.SequenceNode):
            return self.construct_sequence(node)
        constructor = self.yaml_constructors.get(tag)
        try:
            if isinstance(node, yaml.ScalarNode) and constructor is not None:
                value = constructor(self, node)
            else:  # other tags and collections of them (sets, omaps, pairs; unknown tags are refused)
                self.aliased = True  # PyYAML's own memo may share values here: the expanded size is checked
                value = self.construct_object(node, deep=True)
        except (TypeError, ValueError, KeyError, AttributeError):  # a tag its value cannot have: !!int x
            if isinstance(node, yaml.ScalarNode):
                shown = node.value if len(node.value) <= 40 else f"{node.value[:20]}…{node.value[-5:]}"
                what = repr(shown) + (f" ({len(node.value):,} characters)" if shown != node.value else "")
            else:
                what = f"a {_KINDS.get(type(node), 'mapping')}"
            message = f"cannot read {what} as !!{tag.removeprefix('tag:yaml.org,2002:')}"
            raise yaml.constructor.ConstructorError(None, None, message, node.start_mark) from None
        self.built[id(node)] = value
        return value

    def _enter(self, node: yaml.Node) -> None:
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise yaml.constructor.ConstructorError(
                None, None, f"nested more than {MAX_DEPTH} levels deep", node.start_mark
            )

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        self._enter(node)
        merges = any(k.tag == _MERGE for k, _ in node.value)
        own = {id(k) for k, _ in node.value} if merges else set()
        if merges:
            self.flatten_mapping(node)  # merge keys (<<): merged entries come first, own keys override them
        mapping: dict[Any, Any] = {}
        self.built[id(node)] = mapping
        entries: dict[Any, int] = {}
        first: dict[Any, Any] = {}
        for key_node, value_node in node.value:
            key = self._value(key_node)
            if type(key) is not str:
                if not isinstance(key, Hashable):
                    raise yaml.constructor.ConstructorError(
                        "while constructing a mapping", node.start_mark, "found an unhashable key", key_node.start_mark
                    )
                try:  # as sigs.k8s.io/yaml makes JSON of it: 1 → "1", true → "true"
                    key = gojson.map_key(key)
                except gojson.NotJson as exc:
                    raise yaml.constructor.ConstructorError(None, None, str(exc), key_node.start_mark) from None
            if key in first and (not merges or (id(key_node) in own and id(first[key]) in own)):
                line = first[key].start_mark.line + 1
                raise yaml.constructor.ConstructorError(
                    None, None, f"duplicate key {key!r} (first at line {line})", key_node.start_mark
                )
            first[key] = key_node
            mapping[key] = self._value(value_node)
            k, v = key_node.start_mark, value_node.start_mark
            entries[key] = pack(k.line, k.column, v.line, v.column)
        self.marks.record(mapping, (node.start_mark.line, node.start_mark.column), entries)
        self.depth -= 1
        return mapping

    def construct_sequence(self, node: yaml.SequenceNode, deep: bool = False) -> list[Any]:
        self._enter(node)
        items: list[Any] = []
        self.built[id(node)] = items
        items.extend(self._value(child) for child in node.value)
        marks = {i: pack(-1, -1, c.start_mark.line, c.start_mark.column) for i, c in enumerate(node.value)}
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
        return error(f"invalid YAML: {problem}", Span(file, 1, 1, 1, 2), code=Code.YAML)
    line, column = mark.line + 1, mark.column + 1
    return error(f"invalid YAML: {problem}", Span(file, line, column, line, column + 1), code=Code.YAML)


class _NotJson(Exception):
    """The text is not plain JSON for fleetrules: read it as YAML, which says what is wrong and where."""


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    mapping = dict(pairs)
    if len(mapping) != len(pairs):
        raise _NotJson("a duplicate key")
    return mapping


def _constant(name: str) -> Any:
    raise _NotJson(f"{name} is not JSON")


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether mappings and lists nest more than ``limit`` levels deep in ``value``."""
    level: list[Any] = [value]
    for _ in range(limit):
        level = [c for v in level for c in (v.values() if isinstance(v, dict) else v) if isinstance(c, (dict, list))]
        if not level:
            return False
    return True


def _load_json(text: str, file: str) -> list[Document] | None:
    """The one JSON value of ``text`` as a document, or None when the text is not plain JSON. Where the
    value and the items of a top-level ``items`` list begin is found while reading (each object's
    ``file:line``); the positions inside them when first asked for (``_pair_positions``)."""
    marks = Marks(file)
    reader = _JsonReader(text, marks)
    try:
        value = reader.read()
    except (ValueError, StopIteration, _NotJson, RecursionError):
        return None
    if not isinstance(value, (dict, list)) or _deeper_than(value, MAX_DEPTH):
        return None
    marks.pending = _JsonPositions(text, value, reader.items).find  # no cycle through marks
    return [Document(value, 1, marks)]


class _JsonReader:
    """JSON read by the json module's own scanner, a value at a time at the top: the document and each
    item of its ``items`` list (a kubectl List) are read on their own, so that where each begins is known
    without reading the text as YAML."""

    _SPACE = re.compile(r"[ \t\n\r]*")

    def __init__(self, text: str, marks: Marks) -> None:
        self.text, self.marks = text, marks
        decoder = json.JSONDecoder(object_pairs_hook=_pairs, parse_constant=_constant)
        # (text, offset) → (value, its end); StopIteration where no value begins (typeshed misnames the argument)
        self.scan: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(decoder)  # type: ignore[arg-type]
        self.line, self.counted = 0, 0  # the line at offset ``counted``
        # each container of the top-level ``items`` list: (it, its offsets, where it begins)
        self.items: list[tuple[Any, int, int, tuple[int, int]]] = []

    def _skip(self, at: int) -> int:
        found = self._SPACE.match(self.text, at)
        return found.end() if found is not None else at

    def _expect(self, at: int, *chars: str) -> str:
        if at >= len(self.text) or self.text[at] not in chars:
            raise _NotJson(f"expected one of {chars} at {at}")
        return self.text[at]

    def _where(self, at: int) -> tuple[int, int]:
        """(line, column) of offset ``at``, 0-based; offsets are asked for in increasing order."""
        self.line += self.text.count("\n", self.counted, at)
        self.counted = at
        return self.line, at - (self.text.rfind("\n", 0, at) + 1)

    def read(self) -> Any:
        at = self._skip(0)
        where = self._where(at)  # before the items, which move the line counted on
        if self._expect(at, "{", "[") == "[":
            value, at = self.scan(self.text, at)
        else:
            value, at = self._object(at)
        if self._skip(at) != len(self.text):
            raise _NotJson("text after the value")
        self.marks.begins(value, where)
        return value

    def _object(self, at: int) -> tuple[dict[str, Any], int]:
        pairs: list[tuple[str, Any]] = []
        at = self._skip(at + 1)
        if self._expect(at, "}", '"') == "}":
            return _pairs(pairs), at + 1
        while True:
            self._expect(at, '"')
            key, at = self.scan(self.text, at)
            at = self._skip(at)
            self._expect(at, ":")
            at = self._skip(at + 1)
            if key == "items" and self.text.startswith("[", at):
                value, at = self._items(at)
            else:
                value, at = self.scan(self.text, at)
            pairs.append((key, value))
            at = self._skip(at)
            if self._expect(at, ",", "}") == "}":
                return _pairs(pairs), at + 1
            at = self._skip(at + 1)

    def _items(self, at: int) -> tuple[list[Any], int]:
        items: list[Any] = []
        at = self._skip(at + 1)
        if self.text.startswith("]", at):
            return items, at + 1
        while True:
            item, end = self.scan(self.text, at)
            if isinstance(item, (dict, list)):
                where = self._where(at)
                self.marks.begins(item, where)
                self.items.append((item, at, end, where))
            items.append(item)
            at = self._skip(end)
            if self._expect(at, ",", "]") == "]":
                return items, at + 1
            at = self._skip(at + 1)


class _JsonPositions:
    """The positions of a text read as JSON, found when first asked for: the text (or only the ``items`` entry
    holding the container asked about: a kubectl List's object) read again as YAML has the same mappings, keys
    and lists, each with its positions. A policy's 2,000 rules name their lines: reading a 37 MB List again
    whole took 6 of its 7 seconds; one object of it takes a millisecond."""

    def __init__(self, text: str, value: Any, items: list[tuple[Any, int, int, tuple[int, int]]]) -> None:
        self.text, self.value, self.items = text, value, items
        self.item_of: dict[int, int] | None = None  # container id → its item's index, made when first needed
        self.done: set[int] = set()  # the items whose positions are recorded

    def find(self, marks: Marks, container: Any) -> bool:
        """Record the positions of the item holding ``container`` (of everything, when no item does); True
        when every position is recorded."""
        if self.item_of is None:
            self.item_of = {}
            for index, (item, *_) in enumerate(self.items):
                stack = [item]
                while stack:
                    each = stack.pop()
                    self.item_of[id(each)] = index
                    stack += [
                        c for c in (each.values() if isinstance(each, dict) else each) if isinstance(c, (dict, list))
                    ]
        holder = self.item_of.get(id(container))
        if holder is None:
            outside = [self.value, *(self.value.values() if isinstance(self.value, dict) else self.value)]
            if self.items and not any(container is c for c in outside):
                return False  # not of this text (a copy): reading it again would not find it
            _pair_positions(self.text, self.value, marks, 0, 0)
            return True
        if holder not in self.done:
            self.done.add(holder)
            item, start, end, (line, column) = self.items[holder]
            _pair_positions(self.text[start:end], item, marks, line, column)
        return len(self.done) == len(self.items)


def _pair_positions(text: str, value: Any, marks: Marks, line: int, column: int) -> None:
    """Record in ``marks`` the positions of ``value``'s mappings and lists (read as JSON from ``text``, which
    begins at ``line`` and ``column`` of the file): the text read as YAML has the same mappings, keys and lists,
    each with its positions."""
    documents, problems = _load_yaml(text, marks.file)
    if problems or len(documents) != 1:
        return  # positions unknown: problems are then reported at the file's start

    def moved(at_line: int, at_column: int) -> tuple[int, int]:
        return (at_line + line, at_column + column) if at_line == 0 else (at_line + line, at_column)

    yaml_marks = documents[0].marks
    pairs: list[tuple[Any, Any]] = [(value, documents[0].value)]
    while pairs:
        mine, theirs = pairs.pop()
        if isinstance(mine, dict) and isinstance(theirs, dict) and mine.keys() == theirs.keys():
            children = [(mine[k], theirs[k]) for k in mine]
        elif isinstance(mine, list) and isinstance(theirs, list) and len(mine) == len(theirs):
            children = list(zip(mine, theirs, strict=True))
        else:
            continue
        found = yaml_marks._at.get(id(theirs))
        if found is not None:
            where, entries = found
            if line or column:
                where = moved(*where)
                shifted = {}
                for k, packed in entries.items():
                    kl, kc, vl, vc = unpack(packed)
                    shifted[k] = pack(*(moved(kl, kc) if kl >= 0 else (kl, kc)), *moved(vl, vc))
                entries = shifted
            marks.record(mine, where, entries)
        pairs += [(a, b) for a, b in children if isinstance(a, (dict, list))]


_JSON_START = re.compile(r"[ \t\n\r]*[{\[]")  # a mapping or list first: perhaps JSON (no copy of the text)


def load_text(text: str, file: str) -> tuple[list[Document], list[Diagnostic]]:
    """Every document of ``text``; on a problem, the documents before it and the problem."""
    if _JSON_START.match(text):
        documents = _load_json(text, file)
        if documents is not None:
            return documents, []
    return _load_yaml(text, file)


class _Unusual(Exception):
    """Something the event reader leaves to the loader: an anchor, alias, tag, merge key or duplicate key, a
    key that is no string, nesting past the bound, or invalid YAML (the loader says what is wrong and where)."""


_SCALAR, _START_MAP, _START_SEQ = yaml.ScalarEvent, yaml.MappingStartEvent, yaml.SequenceStartEvent


_END = (yaml.MappingEndEvent, yaml.SequenceEndEvent)


def _read_events(text: str, file: str) -> list[Document] | None:
    """Every document of ``text`` built straight from libyaml's events, without its node tree (which holds
    a node and two marks per value: most of the memory of reading a fleet's snapshot, and a third of the
    time); None when the text holds something only the loader reads (``_Unusual``). The values and marks
    are those the loader gives."""
    marks = Marks(file)
    reader = _Loader(text, marks)
    try:
        return _EventBuilder(reader, marks).documents()
    except (_Unusual, yaml.YAMLError):
        return None
    finally:
        reader.dispose()


class _EventBuilder:
    def __init__(self, reader: _Loader, marks: Marks) -> None:
        self.reader, self.marks = reader, marks
        self.next: Callable[[], Any] = reader.get_event  # libyaml's events (loosely typed by the stubs)
        self.plain: dict[str, Any] = {}  # a plain scalar's text → its value

    def documents(self) -> list[Document]:
        out: list[Document] = []
        self.next()  # the stream's start
        while True:
            event = self.next()
            if isinstance(event, yaml.StreamEndEvent):
                return out
            first = self.next()
            value = self.value(first, 1)
            self.next()  # the document's end
            start = (first.start_mark.line + 1, first.start_mark.column + 1)
            out.append(Document(value, len(out) + 1, self.marks, start))

    def scalar(self, event: Any) -> Any:
        if event.anchor is not None or event.tag is not None:
            raise _Unusual("an anchor or a tag")
        text = event.value
        if not event.implicit[0]:  # quoted, or a block scalar: a string (Resolver.resolve)
            return text
        found = self.plain.get(text, self)
        if found is not self:
            return found
        tag = self.reader.resolve(yaml.ScalarNode, text, event.implicit)
        if tag == _STR:
            value = text
        elif tag == _MERGE:
            raise _Unusual("a merge key")
        else:
            constructor = self.reader.yaml_constructors.get(tag)
            if constructor is None:
                raise _Unusual(tag)
            try:
                value = constructor(
                    self.reader, yaml.ScalarNode(tag, text, event.start_mark, event.end_mark, event.style)
                )
            except ValueError:  # an integer past Python's 4,300 digits: the loader says so where it is
                raise _Unusual("a scalar its tag cannot have") from None
        self.plain[text] = value  # scalars are immutable: one object for each text (a snapshot repeats them)
        return value

    def value(self, event: Any, depth: int) -> Any:
        if type(event) is _SCALAR:
            return self.scalar(event)
        if getattr(event, "anchor", None) is not None or getattr(event, "tag", None) is not None:
            raise _Unusual("an anchor, alias or tag")
        if depth > MAX_DEPTH:
            raise _Unusual("nesting")
        where = (event.start_mark.line, event.start_mark.column)
        if type(event) is _START_MAP:
            mapping: dict[Any, Any] = {}
            entries: dict[Any, int] = {}
            while True:
                key_event: Any = self.next()
                if isinstance(key_event, _END):
                    break
                if type(key_event) is not _SCALAR:
                    raise _Unusual("a key that is a mapping or a list")
                key = self.scalar(key_event)
                if type(key) is not str:
                    try:
                        key = gojson.map_key(key)
                    except gojson.NotJson as exc:
                        raise _Unusual(str(exc)) from None
                if key in mapping:
                    raise _Unusual("a duplicate key")
                value_event: Any = self.next()
                mapping[key] = self.value(value_event, depth + 1)
                k: Any = key_event.start_mark
                v: Any = value_event.start_mark
                entries[key] = pack(k.line, k.column, v.line, v.column)
            self.marks.record(mapping, where, entries)
            return mapping
        if type(event) is _START_SEQ:
            items: list[Any] = []
            positions: dict[Any, int] = {}
            while True:
                item_event = self.next()
                if isinstance(item_event, _END):
                    break
                positions[len(items)] = pack(-1, -1, item_event.start_mark.line, item_event.start_mark.column)
                items.append(self.value(item_event, depth + 1))
            self.marks.record(items, where, positions)
            return items
        raise _Unusual(type(event).__name__)  # an alias


def _load_yaml(text: str, file: str) -> tuple[list[Document], list[Diagnostic]]:
    read = _read_events(text, file)
    if read is not None:
        return read, []
    marks = Marks(file)
    loader = _Loader(text, marks)
    documents: list[Document] = []
    try:
        while loader.check_node():
            value = loader.document()
            index = len(documents) + 1
            if loader.aliased and expanded_size(value, MAX_VALUES) > MAX_VALUES:
                where = marks.span(value)
                message = f"document {index}: YAML aliases expand to more than {MAX_VALUES:,} values"
                return documents, [error(message, where, code=Code.TOO_LARGE)]
            documents.append(Document(value, index, marks, loader.start))
    except yaml.YAMLError as exc:
        return documents, [_yaml_error(exc, file)]
    except RecursionError:  # the depth bound keeps construction shallow; this is the last guard
        return documents, [
            error(
                f"invalid YAML: nested more than {MAX_DEPTH} levels deep", Span(file, 1, 1, 1, 2), code=Code.TOO_LARGE
            )
        ]
    finally:
        loader.dispose()
    return documents, []


def read_text(path: Path, shown: str, what: str, max_bytes: int = MAX_BYTES) -> tuple[str | None, list[Diagnostic]]:
    """A file's UTF-8 text (a BOM dropped), or None and why not."""
    where = Span(shown, 0, 0, 0, 0)
    try:
        size = path.stat().st_size
        if size > max_bytes:
            return None, [
                error(f"{size} bytes; {what} are limited to {max_bytes}", where, subject=shown, code=Code.TOO_LARGE)
            ]
        data = path.read_bytes()
    except OSError as exc:
        return None, [error(f"cannot read: {exc.strerror or exc}", subject=shown, code=Code.UNREADABLE)]
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        return None, [error(f"not UTF-8 text (byte {exc.start})", Span(shown, line, 1, line, 2), code=Code.UNREADABLE)]


def load_file(path: Path, shown: str, what: str = "YAML files") -> tuple[list[Document], list[Diagnostic]]:
    text, problems = read_text(path, shown, what)
    if text is None:
        return [], problems
    return load_text(text, shown)
