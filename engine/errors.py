"""Source positions, diagnostics and the one exception hierarchy of fleetrules.

The library raises; the CLI renders and picks exit codes. Every diagnostic carries the span of
the text it is about, so it can be shown as ``file:line:col: error: message`` with a caret line.
"""

from __future__ import annotations

import difflib
import enum
import functools
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from engine.codes import Code


@dataclass(frozen=True, order=True)
class Span:
    """A region of a source file; lines and columns count from 1, the end is exclusive."""

    file: str
    line: int
    column: int
    end_line: int
    end_column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


NO_SPAN = Span("<generated>", 0, 0, 0, 0)


class Severity(enum.Enum):
    ERROR = "error"
    WARNING = "warning"


@dataclass(frozen=True)
class Diagnostic:
    severity: Severity
    message: str
    span: Span | None = None
    # Where a diagnostic is about an object rather than a text position (a fact file document).
    subject: str | None = None
    # The input could not be read at all (missing, binary, not UTF-8): a usage error, exit 2.
    unreadable: bool = False
    code: Code = Code.USAGE  # the kind of problem (engine.codes): SARIF's ruleId, the language server's code

    @property
    def is_error(self) -> bool:
        return self.severity is Severity.ERROR

    def sort_key(self) -> tuple[str, int, int, str]:
        span = self.span or NO_SPAN
        return (span.file, span.line, span.column, self.message)


def file_line(where: str) -> tuple[str, int]:
    """A ``FILE:LINE`` place (a fact's source) as its file and line; the whole text and 0 without a line."""
    file, _, line = where.rpartition(":")
    return (file, int(line)) if line.isdigit() else (where, 0)


def error(message: str, span: Span | None = None, subject: str | None = None, *, code: Code) -> Diagnostic:
    return Diagnostic(Severity.ERROR, message, span, subject, code=code)


def warning(message: str, span: Span | None = None, subject: str | None = None, *, code: Code) -> Diagnostic:
    return Diagnostic(Severity.WARNING, message, span, subject, code=code)


SNIPPET_WIDTH = 200  # characters of a source line shown under a diagnostic


class FleetrulesError(Exception):
    """Base of every error fleetrules raises on bad input; carries one or more diagnostics (given as a string:
    one error of the class's ``code``)."""

    code = Code.USAGE

    def __init__(self, diagnostics: Iterable[Diagnostic] | str, sources: Mapping[str, str] | None = None) -> None:
        if isinstance(diagnostics, str):
            diagnostics = [error(diagnostics, code=self.code)]
        self.diagnostics: tuple[Diagnostic, ...] = tuple(diagnostics)
        self.sources: Mapping[str, str] = sources if sources is not None else {}
        super().__init__("\n".join(render(d) for d in self.diagnostics))

    def render(self) -> str:
        """Every diagnostic with its source line and caret."""
        return "\n".join(render(d, self.sources) for d in self.diagnostics)


class RuleError(FleetrulesError):
    """A rule file that cannot be read, parsed or checked."""


class FactError(FleetrulesError):
    """A fact file or Python fact object that is not a valid Karmada object."""

    code = Code.OBJECT


class UsageError(FleetrulesError):
    """An API call or command line that does not fit together."""


def render(diagnostic: Diagnostic, sources: Mapping[str, str] | None = None) -> str:
    """``file:line:col: severity: message``, then the source line and a caret under the span."""
    span = diagnostic.span
    label = diagnostic.severity.value
    if span is None or span.line == 0:
        where = f"{diagnostic.subject}: " if diagnostic.subject else ""
        if span is not None and span.line == 0 and span.file != NO_SPAN.file:
            where = f"{span.file}: "
        return f"{where}{label}: {diagnostic.message}"
    head = f"{span}: {label}: {diagnostic.message}"
    text = sources.get(span.file) if sources is not None else None
    if text is None:
        return head
    lines = _lines(text)
    if not 1 <= span.line <= len(lines):
        return head
    line = lines[span.line - 1].expandtabs(1)
    end = span.end_column if span.end_line == span.line else len(line) + 1
    column = span.column
    if len(line) > SNIPPET_WIDTH:  # a window around the span, not the whole of a very long line
        start = max(0, min(column - 1 - SNIPPET_WIDTH // 2, len(line) - SNIPPET_WIDTH))
        line = ("…" if start else "") + line[start : start + SNIPPET_WIDTH] + "…"
        column, end = column - start + (1 if start else 0), end - start + (1 if start else 0)
    width = max(1, min(end, len(line) + 1) - column)
    gutter = f"{span.line:>4} | "
    caret = " " * (len(gutter) - 2) + "| " + " " * (column - 1) + "^" + "~" * (width - 1)
    return f"{head}\n{gutter}{line}\n{caret}"


@functools.lru_cache(maxsize=16)
def _lines(text: str) -> tuple[str, ...]:
    """The lines of a source, split once for all its diagnostics (a file with 8,000 warnings was split 8,000
    times). A str caches its hash, and the cache finds the same object by identity: a hit costs no scan."""
    return tuple(text.splitlines())


def listed(items: Sequence[str], limit: int) -> str:
    """The first ``limit`` of ``items`` joined with commas, and how many more there are (``a, b and 3 more``)."""
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``; did you mean 'X'?`` for the closest of ``choices``, or nothing."""
    guess = difflib.get_close_matches(word, sorted(choices), n=1, cutoff=0.6)
    return f"; did you mean '{guess[0]}'?" if guess else ""


_BIDI = {*range(0x202A, 0x202F), *range(0x2066, 0x206A), 0x200E, 0x200F, 0x061C}
# what ``printable`` escapes: C0 controls but tab and newline, DEL and C1 controls, surrogates, bidi overrides
_UNSAFE = re.compile(
    "[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff" + "".join(re.escape(chr(c)) for c in sorted(_BIDI)) + "]"
)


def printable(text: str) -> str:
    """``text`` safe for a terminal: control characters (but newline and tab), lone surrogates and
    bidirectional overrides written as ``\\uXXXX`` escapes (valid inside JSON strings as well). One regular
    expression scan: the output of a fleet is tens of megabytes."""
    if text.isprintable() or _UNSAFE.search(text) is None:
        return text
    return _UNSAFE.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


def expect(name: str, value: object, kind: type | tuple[type, ...], what: str) -> None:
    """A public function's argument is of ``kind``, or a UsageError says what was expected (``what``)."""
    if not isinstance(value, kind) or (isinstance(value, bool) and kind is int):
        raise UsageError(f"{name}: expected {what}, found {type(value).__name__}")
