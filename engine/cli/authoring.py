"""The verbs of writing rules: ``check``, ``convert`` and the language server (``lsp``); ``fmt`` is
engine.cli.formatting, which loads no more than the parser and the formatter."""

from __future__ import annotations

import sys
from collections.abc import Sequence

import click

from engine.checker.rule_set import load_rule_set
from engine.cli import inputs, options
from engine.cli.app import EXIT_PROBLEMS, EXIT_USAGE, guarded, main, package_version, say
from engine.cli.formats import CHECK, Checked
from engine.errors import Diagnostic
from engine.karmada.notes import gate_notes
from engine.render.karmada import policies_yaml
from engine.syntax.ast import File
from engine.syntax.fmt import format_file


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
