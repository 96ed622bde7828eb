"""Go's regexp (RE2 syntax) as Python's ``re``, for the patterns a control plane's flags take.

RE2 and Python agree on the syntax such patterns use (``kube-.*``, ``team-(a|b)``, classes, repetition).
Where they differ, a pattern is translated (``\\z``) or refused with a clear error rather than read otherwise:
Python's lookarounds, backreferences and atomic groups are not RE2 (Go's regexp.Compile fails on them), and
RE2's Unicode classes (``\\pL``) and POSIX classes (``[[:alpha:]]``) are not Python's.
"""

from __future__ import annotations

import re

# constructs Python accepts and Go's regexp.Compile refuses, with RE2's words for them
_NOT_RE2 = (
    (re.compile(r"\(\?<?[=!]"), "invalid or unsupported Perl syntax: lookaround"),
    (re.compile(r"\(\?>"), "invalid or unsupported Perl syntax: atomic group"),
    (re.compile(r"\(\?P="), "invalid named capture"),
    (re.compile(r"\\[1-9]"), "invalid escape sequence: backreference"),
)
# RE2 syntax Python reads otherwise: refused rather than matched differently
_NOT_PYTHON = (
    (re.compile(r"\\[pP]"), "Unicode character classes (\\p) are not evaluated by fleetrules"),
    (re.compile(r"\[:\^?[a-z]+:\]"), "POSIX character classes ([[:alpha:]]) are not evaluated by fleetrules"),
)


def compile_anchored(pattern: str) -> re.Pattern[str]:
    """``regexp.MustCompile(fmt.Sprintf("^%s$", pattern))`` as Python's re, to be used with ``search`` as Go's
    MatchString is (the anchors bind as Go's do: ``^a|b$`` is ``^a`` or ``b$``); ValueError says why it cannot be."""
    for construct, why in (*_NOT_RE2, *_NOT_PYTHON):
        if construct.search(_unescaped(pattern)):
            raise ValueError(why)
    try:
        return re.compile("^" + pattern.replace("\\z", "\\Z") + "$")
    except re.error as exc:
        raise ValueError(str(exc)) from None


def _unescaped(pattern: str) -> str:
    """The pattern with each escaped backslash taken out, so that ``\\\\1`` is not read as a backreference."""
    return pattern.replace("\\\\", "")
