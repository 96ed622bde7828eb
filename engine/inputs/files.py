"""Input paths: expanding directories, reading text files safely, showing paths to people."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

from engine.codes import Code
from engine.errors import Diagnostic, Severity, Span, UsageError

RULE_SUFFIX = ".fr"
# one path, or several: what the public functions that read files take
Paths = str | os.PathLike[str] | Iterable[str | os.PathLike[str]]
MAX_FILE_BYTES = 4 * 1024 * 1024


def display_path(path: Path) -> str:
    """Paths are shown relative to the working directory when they lie below it."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def expand(paths: object, suffixes: tuple[str, ...] = (RULE_SUFFIX,)) -> list[Path]:
    """Files named directly, and the files below named directories whose names end in one of
    ``suffixes``, sorted; a missing path, and a link below a directory to a file outside it, are usage errors."""
    found: list[Path] = []
    for raw in path_list(paths):
        path = Path(raw)
        if path.is_dir():
            below = sorted(p for p in path.rglob("*") if p.is_file() and p.name.endswith(suffixes))
            for found_below in below:
                _stays_below(found_below, path)
            found += below
        elif path.is_file():
            found.append(path)
        elif path.exists():
            raise UsageError(f"not a regular file: {raw}")
        else:
            raise UsageError(f"no such file or directory: {raw}")
    return found


def _stays_below(path: Path, directory: Path) -> None:
    """That ``path``, found below ``directory``, stays there after symlinks: a link that leaves it is a
    UsageError naming the link: a directory given is read (and ``fmt`` rewrites it) as it stands, never a file it
    points elsewhere to (a rule test's fixtures, a formatter run over a checkout). Name such a file to read it."""
    real = Path(os.path.realpath(path))
    if not real.is_relative_to(os.path.realpath(directory)):
        raise UsageError(
            f"{path}: a link to {real}, outside the directory given ({directory}); name the file itself to read it"
        )


def path_list(paths: object, what: str = "paths") -> list[str | os.PathLike[str]]:
    """``paths`` as a list: one path (a str or PathLike is one path, not its characters) or an iterable
    of them; anything else is a UsageError naming what was given."""
    if isinstance(paths, (str, os.PathLike)):
        return [paths]
    if isinstance(paths, (bytes, Mapping)) or not isinstance(paths, Iterable):
        raise UsageError(f"{what}: expected a path or a list of paths, found {type(paths).__name__}")
    items = list(paths)
    for item in items:
        if not isinstance(item, (str, os.PathLike)):
            raise UsageError(f"{what}: expected paths (str or pathlib.Path), found {type(item).__name__} {item!r}")
    return items


def read_source(
    path: Path,
    shown: str,
    diagnostics: list[Diagnostic],
    at: Span | None = None,
    max_bytes: int = MAX_FILE_BYTES,
    what: str = "rule files",
) -> str | None:
    """The UTF-8 text of a file, or None with a diagnostic saying why it could not be read (``max_bytes``:
    the limit of its size, which ``what`` is held to; a snapshot given as rules has the limit of fact files)."""
    where = at or Span(shown, 0, 0, 0, 0)

    def unreadable(message: str, span: Span = where) -> None:
        diagnostics.append(Diagnostic(Severity.ERROR, message, span, unreadable=True, code=Code.UNREADABLE))

    try:
        size = path.stat().st_size
        if size > max_bytes:
            unreadable(f"{shown} is {size} bytes; {what} are limited to {max_bytes}")
            return None
        data = path.read_bytes()
    except OSError as exc:
        unreadable(f"cannot read {shown}: {exc.strerror or exc}")
        return None
    if b"\0" in data:
        unreadable(f"{shown} is a binary file, not a rule file")
        return None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        unreadable(f"{shown} is not UTF-8 text (byte {exc.start})", Span(shown, line, 1, line, 2))
        return None


def read_stdin(what: str, limit: int, held_as: str) -> str:
    """Standard input as UTF-8 text, held to the limit of the files it stands for (``held_as``); a UsageError
    when it is closed, unreadable, larger, binary or not UTF-8 (its bytes are read, never decoded with the
    locale's escapes)."""
    stream = sys.stdin
    if stream is None:
        raise UsageError(f"{what}: standard input is closed")
    try:
        buffer = getattr(stream, "buffer", None)
        data = buffer.read(limit + 1) if buffer is not None else stream.read(limit + 1).encode("utf-8")
    except (OSError, ValueError, UnicodeError) as exc:
        raise UsageError(f"{what}: cannot read standard input ({exc})") from None
    if len(data) > limit:
        raise UsageError(f"{what}: standard input is larger than {limit} bytes; {held_as} are limited to {limit}")
    if b"\0" in data:
        raise UsageError(f"{what}: standard input is binary, not text")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise UsageError(f"{what}: standard input is not UTF-8 text (byte {exc.start}, line {line})") from None
