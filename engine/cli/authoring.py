"""The verbs of writing rules: ``check``, ``fmt``, ``convert`` and the language server (``lsp``)."""

from __future__ import annotations

import codecs
import difflib
import os
import stat
import sys
from collections.abc import Sequence
from pathlib import Path

import click

from engine.checker.rule_set import load_rule_set
from engine.cli import inputs, options
from engine.cli.app import EXIT_PROBLEMS, EXIT_USAGE, guarded, main, package_version, say
from engine.cli.formats import CHECK, Checked
from engine.cli.output import replace_file
from engine.errors import Diagnostic, FleetrulesError, render
from engine.inputs.files import MAX_FILE_BYTES, display_path, expand, read_source
from engine.karmada.notes import gate_notes
from engine.render.karmada import policies_yaml
from engine.syntax.ast import File
from engine.syntax.fmt import format_file
from engine.syntax.parse import parse_partial


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@CHECK.option()
@options.KARMADA
@options.ROOT
@options.CONTROLLER
@click.option(
    "--strict-karmada",
    is_flag=True,
    help="Report each fleetrules extension (rules, preferred terms, within) as an error.",
)
@guarded
def check(paths: Sequence[str], output_format: str, strict_karmada: bool) -> None:
    """Parse and check rule files and directories (their *.fr files, and the PropagationPolicy,
    ClusterPropagationPolicy and ClusterTaintPolicy objects of their YAML and JSON files); report every problem."""
    rule_set, diagnostics = load_rule_set(
        paths, version=options.version(), strict=strict_karmada, roots=options.roots(), policy_yaml=True
    )
    if not any(d.is_error for d in diagnostics):  # what the policies use that a gate off turns off, as eval says
        diagnostics = sorted(
            [*diagnostics, *gate_notes(options.controllers(), rule_set.policies)], key=Diagnostic.sort_key
        )
    CHECK.write(output_format, Checked(diagnostics, rule_set.sources, package_version()))
    errors = sum(d.is_error for d in diagnostics)
    if output_format == "text":
        files = len(rule_set.sources)  # read, whether or not they parse
        summary = f"{errors} error{'s' * (errors != 1)}, {len(diagnostics) - errors} warning"
        summary += f"{'s' * (len(diagnostics) - errors != 1)} in {files} file{'s' * (files != 1)}"
        say(summary, err=True)
    if any(d.unreadable for d in diagnostics):
        sys.exit(EXIT_USAGE)
    if errors:
        sys.exit(EXIT_PROBLEMS)


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
        given = inputs.stdin("fmt -", MAX_FILE_BYTES, "rule files")
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


@main.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option(
    "--to",
    "target",
    type=click.Choice(["dsl", "yaml"]),
    default="dsl",
    show_default=True,
    help="dsl: policies of the rule language; yaml: PropagationPolicy / ClusterPropagationPolicy objects.",
)
@options.KARMADA
@options.ROOT
@guarded
def convert(paths: Sequence[str], target: str) -> None:
    """Print PropagationPolicy YAML as rule-language policies, or (--to yaml) the other way round."""
    rule_set = inputs.rules(paths)
    if target == "yaml":
        say(policies_yaml(rule_set.files, rule_set.sources), nl=False)
        return
    policies = tuple(p for f in rule_set.files for p in f.policies)
    say(format_file(File(path="<converted>", items=policies)), nl=False)


@main.command()
def lsp() -> None:
    """Serve the language server for editors (LSP over standard input and output): diagnostics, formatting,
    hover, go to definition."""
    from engine.lsp import serve

    serve()
