"""Where things stood in a YAML or JSON text: each mapping's and list's position and its entries' (``Marks``, packed
four numbers to an int), kept with every document read (``Document``), so that a problem found later in a field
is reported at ``file:line:col``.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from engine.errors import Span


@dataclass(frozen=True)
class Position:
    line: int  # 1-based
    column: int  # 1-based


_BITS = 27  # a line or column (and one more) of a 64 MiB text fits


_MASK = (1 << _BITS) - 1


def pack(key_line: int, key_column: int, value_line: int, value_column: int) -> int:
    """An entry's positions (0-based; -1: a list's entry has no key) as one int: a snapshot has a million entries,
    and a tuple of four held 65 MB of a 10 MB one's 172."""
    return ((((key_line + 1) << _BITS | (key_column + 1)) << _BITS | value_line) << _BITS) | value_column


def unpack(packed: int) -> tuple[int, int, int, int]:
    value_column, packed = packed & _MASK, packed >> _BITS
    value_line, packed = packed & _MASK, packed >> _BITS
    return (packed >> _BITS) - 1, (packed & _MASK) - 1, value_line, value_column


@dataclass
class Marks:
    """Where the containers of one file's documents stand: the container, and each key or index."""

    file: str
    # container id → ((line, column) of it, each entry's (key line, key column, value line, value column) packed in
    # one int: ``pack``), 0-based as the parser counts; a fleet's snapshot has a few hundred thousand
    _at: dict[int, tuple[tuple[int, int], dict[Any, int]]] = field(default_factory=dict)
    _keep: list[Any] = field(default_factory=list)  # the containers, so that their ids stay theirs
    # finds the positions of a container when first asked for one (a text read as JSON) and records them here
    # (those of the list item holding it, or of everything); True when nothing is left to find
    pending: Callable[[Marks, Any], bool] | None = None
    # where some containers begin (0-based), known before ``pending`` ran (a text read as JSON)
    _begins: dict[int, tuple[int, int]] = field(default_factory=dict)

    def begins(self, container: Any, where: tuple[int, int]) -> None:
        self._begins[id(container)] = where
        self._keep.append(container)

    def alias(self, copy: Any, original: Any) -> None:
        """``copy`` (a mapping made from ``original`` with keys added) stands where ``original`` does."""
        where = self.position(original)
        found = self._at.get(id(original))
        if found is not None:
            self.record(copy, *found)
        elif where is not None:
            self.begins(copy, (where.line - 1, where.column - 1))

    def record(self, container: Any, where: tuple[int, int], entries: dict[Any, int]) -> None:
        self._at[id(container)] = (where, entries)
        self._keep.append(container)

    def position(self, container: Any, key: Any = None, of_key: bool = False) -> Position | None:
        """Where ``container[key]`` stands (with ``of_key``, where the key itself is written; the container
        when ``key`` is None), if known."""
        found = self._at.get(id(container))
        if found is None and self.pending is not None and (key is not None or id(container) not in self._begins):
            if self.pending(self, container):
                self.pending = None
            found = self._at.get(id(container))
        if found is None:
            begins = self._begins.get(id(container))
            return Position(begins[0] + 1, begins[1] + 1) if begins is not None else None
        (line, column), entries = found
        if key is None or not isinstance(key, Hashable) or key not in entries:
            return Position(line + 1, column + 1)
        key_line, key_column, value_line, value_column = unpack(entries[key])
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
    start: tuple[int, int] | None = field(default=None, compare=False)  # 1-based line and column of its value

    def span(self, container: Any = None, key: Any = None, of_key: bool = False) -> Span:
        return self.marks.span(self.value if container is None else container, key, of_key)
