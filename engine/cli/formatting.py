"""``fleetrules fmt``: rule files in the canonical layout, rewritten in place (or checked, or diffed). It loads the
parser and the formatter alone, so that an editor's or a hook's formatting starts at once.
"""

from __future__ import annotations

import codecs
import difflib
import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from engine.cli.app import EXIT_PROBLEMS, EXIT_USAGE, guarded, main, say
from engine.cli.output import replace_file
from engine.errors import Diagnostic, FleetrulesError, render
from engine.inputs.files import MAX_FILE_BYTES, display_path, expand, read_source, read_stdin
from engine.syntax.fmt import format_file
from engine.syntax.parse import parse_partial


def _rewrite(path: Path, text: str) -> None:
    """Replace the file's text as ``replace_file`` does, keeping a leading BOM."""
    bom = codecs.BOM_UTF8 if Path(os.path.realpath(path)).read_bytes().startswith(codecs.BOM_UTF8) else b""
    replace_file(path, bom + text.encode("utf-8"))


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path(allow_dash=True))
@click.option("--check", "check_only", is_flag=True, help="Write nothing; exit 1 if a file is not formatted.")
@click.option("--diff", "show_diff", is_flag=True, help="Write nothing; print a unified diff of the changes.")
@guarded
def fmt(paths: Sequence[str], check_only: bool, show_diff: bool) -> None:
    """Format rule files in place in the canonical layout ('-' formats stdin to stdout)."""
    if list(paths) == ["-"]:
        given = read_stdin("fmt -", MAX_FILE_BYTES, "rule files")
        tree, diagnostics = parse_partial(given, "<stdin>")
        if tree is None or diagnostics:
            raise FleetrulesError(diagnostics, {"<stdin>": given})
        click.echo(format_file(tree, given), nl=False)
        return
    unformatted: list[str] = []
    failed = unreadable = False
    for path in expand(paths):
        shown = display_path(path)
        problems: list[Diagnostic] = []
        text = read_source(path, shown, problems)
        tree = None
        if text is not None:
            tree, syntax = parse_partial(text, shown)
            problems += syntax
        if problems or tree is None or text is None:
            say("\n".join(render(d, {shown: text or ""}) for d in problems), err=True)
            failed = True
            unreadable = unreadable or any(d.unreadable for d in problems)
            continue
        formatted = format_file(tree, text)
        if text.count("\r\n") * 2 > text.count("\n"):  # a file of CRLF lines keeps them
            formatted = formatted.replace("\n", "\r\n")
        if formatted == text:
            continue
        unformatted.append(shown)
        if show_diff:
            diff = difflib.unified_diff(
                text.splitlines(keepends=True), formatted.splitlines(keepends=True), f"a/{shown}", f"b/{shown}"
            )
            click.echo("".join(diff), nl=False)
        elif check_only:
            say(f"would reformat {shown}")
        elif not (mode := stat.S_IMODE(os.stat(path).st_mode)) & (stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH):
            # read-only on purpose: a rename would replace it all the same (and root may write anything)
            say(f"{shown}: error: read-only file (mode {mode:04o}); not reformatted", err=True)
            failed = unreadable = True
        else:
            _rewrite(path, formatted)
            say(f"formatted {shown}", err=True)
    if unreadable:
        sys.exit(EXIT_USAGE)
    if failed:
        sys.exit(EXIT_PROBLEMS)
    if unformatted and (check_only or show_diff):
        sys.exit(EXIT_PROBLEMS)
