"""What a verb reads: rule files and snapshots (a snapshot named among the rules read once, as facts and as
policies), standard input, timed events, older rules from git; and the evaluation most verbs begin with."""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import click

from engine.checker.rule_set import load_rule_set
from engine.cli import options
from engine.cli.app import progress, warn
from engine.errors import RuleError, Span, UsageError
from engine.inputs.events import Event, load_events
from engine.inputs.facts import Facts
from engine.inputs.files import RULE_SUFFIX, display_path, read_stdin
from engine.inputs.objects import load_facts
from engine.inputs.rule_files import POLICY_SUFFIXES, RuleSet
from engine.inputs.yaml import MAX_BYTES
from engine.pipeline import evaluate
from engine.results import Result
from engine.syntax.ast import File

PROGRESS_FROM = 5000
"""A snapshot with this many bindings takes long enough to show a progress bar for."""


def worth_a_bar(facts: Facts, total: int) -> int:
    """``total`` steps for a progress bar over ``facts``, or 0 (no bar) for a small snapshot."""
    return total if len(facts.bindings) >= PROGRESS_FROM else 0


class _Snapshots(dict[str, str]):
    """The text of rule files, and of snapshots read as facts, read again only when a diagnostic about one is
    shown (a fleet's snapshot is tens of megabytes)."""

    def __init__(self, texts: Mapping[str, str], snapshots: Mapping[str, Path]) -> None:
        super().__init__(texts)
        self.snapshots = dict(snapshots)

    def get(self, key: str, default: Any = None) -> Any:
        if key not in self and key in self.snapshots:
            with contextlib.suppress(OSError, UnicodeDecodeError):
                self[key] = self.snapshots.pop(key).read_text(encoding="utf-8-sig")
        return super().get(key, default)


def rules(paths: Sequence[str], snapshot: Facts | None = None) -> RuleSet:
    """The rule set under ``paths``; its errors raise, its warnings go to stderr. ``snapshot``: the facts
    read from the snapshot files named among ``paths``, whose policies are taken from there (read once)."""
    extra: list[File] = []
    named: dict[str, Path] = {}
    if snapshot is not None:
        named = {display_path(Path(p)): Path(p) for p in paths if is_snapshot(p)}
        paths = [p for p in paths if not is_snapshot(p)]
        for shown in named:
            own = tuple(p for p in snapshot.policies if p.span.file == shown)
            extra.append(File(path=shown, items=own, span=Span(shown, 1, 1, 1, 1)))
    rule_set, diagnostics = load_rule_set(paths, extra, version=options.version(), roots=options.roots())
    if named:
        rule_set = replace(rule_set, sources=_Snapshots(rule_set.sources, named))
    errors = [d for d in diagnostics if d.is_error]
    if errors:
        raise RuleError(errors, rule_set.sources)
    for d in diagnostics:
        warn(d, rule_set.sources)
    return rule_set


def facts(paths: Sequence[str], rule_paths: Sequence[str]) -> Facts:
    """The --facts paths; without them, the snapshot files among the rule paths (a snapshot given as rules
    contributes its policies there, and everything else here)."""
    paths = list(paths) or [p for p in rule_paths if not p.endswith(RULE_SUFFIX)]
    if not paths:
        raise UsageError("no facts: give --facts, or snapshot YAML files (kubectl get … -o yaml) among the paths")
    if "-" not in paths:
        loaded = load_facts(paths)
    else:
        # `kubectl get … -o yaml | fleetrules eval RULES --facts -`
        text = read_stdin("--facts -", MAX_BYTES, "fact files")
        loaded = load_facts([p for p in paths if p != "-"], texts=[("<stdin>", text)])
    for note in options.take_control_plane(loaded):
        warn(note)
    click.get_current_context().meta[_GROUPS_KEY] = {c.name: c.region for c in loaded.clusters}
    return loaded


_GROUPS_KEY = "fleetrules.cluster_groups"


def cluster_groups() -> dict[str, str]:
    """Each cluster of the facts read by its region (the report's groups); {} before any facts are read."""
    found = click.get_current_context().meta.get(_GROUPS_KEY)
    return dict(found) if isinstance(found, dict) else {}


def is_snapshot(path: str) -> bool:
    """A YAML or JSON file named among the rules: a snapshot, its policies the rules and the rest the facts."""
    return Path(path).suffix in POLICY_SUFFIXES and Path(path).is_file()


def rules_and_facts(rule_paths: Sequence[str], fact_paths: Sequence[str]) -> tuple[RuleSet, Facts]:
    """The rule set and the facts. Without --facts, a snapshot named among the rules is read once, as the
    facts, and its policies (the facts' own) are checked as rules."""
    if fact_paths or not any(is_snapshot(p) for p in rule_paths):
        return rules(rule_paths), facts(fact_paths, rule_paths)
    loaded = facts(fact_paths, rule_paths)
    return rules(rule_paths, loaded), loaded


def evaluated(
    rule_paths: Sequence[str], fact_paths: Sequence[str], now: str | None, reschedule: str, explanations: bool
) -> Result:
    """The rules evaluated over the facts, as the options say; the evaluation's warnings to stderr."""
    rule_set, loaded = rules_and_facts(rule_paths, fact_paths)
    when, all_ = options.now(now), reschedule == "all"
    flags = options.controllers()
    with progress(worth_a_bar(loaded, len(loaded.bindings)), "bindings") as advance:
        result = evaluate(rule_set, loaded, when, all_, flags, options.reference(), advance, explanations)
    for d in result.warnings:
        warn(d, rule_set.sources)
    return result


def events(path: str) -> tuple[dt.datetime, list[Event]]:
    """The --events file: its start and its events."""
    if not Path(path).is_file():
        raise UsageError(f"--events: no such file: {path}")
    return load_events(Path(path))


def _git(*args: str, cwd: Path | None = None) -> bytes:
    """git's output as bytes (file names are bytes to git; -z output is split on NUL, never on spaces)."""
    try:
        run = subprocess.run(["git", *args], capture_output=True, check=False, cwd=cwd)
    except OSError as exc:
        raise UsageError(f"--base-ref needs git: {exc}") from None
    if run.returncode != 0:
        message = run.stderr.decode("utf-8", "replace").strip()
        raise UsageError(f"git {' '.join(args)}: {message}")
    return run.stdout


def rules_at(ref: str, paths: Sequence[str], into: Path) -> list[str]:
    """The rule files under ``paths`` as they were at git revision ``ref``, written below ``into``. A ``ref``
    beginning with '-' is refused (git would read it as an option; no branch or tag name begins so:
    git check-ref-format)."""
    if ref.startswith("-") or not ref:
        raise UsageError(f"--base-ref: {ref!r} is not a git revision (a revision does not begin with '-')")
    out = []
    for raw in paths:
        resolved = Path(raw).resolve()
        if not resolved.exists():
            raise UsageError(f"--head: no such file or directory: {raw}")
        given = Path(raw).absolute()
        here = given if given.is_dir() else given.parent
        top = Path(os.fsdecode(_git("rev-parse", "--show-toplevel", cwd=here).strip())).resolve()
        if not resolved.is_relative_to(top):  # a symlink out of the repository
            raise UsageError(f"--head {raw}: outside the git repository at {top}; --base-ref compares files of it")
        relative = resolved.relative_to(top).as_posix()
        listing = _git("ls-tree", "-r", "-z", "--name-only", "--full-name", ref, "--", relative or ".", cwd=top)
        names = [os.fsdecode(n) for n in listing.split(b"\0") if n]
        if not names:
            raise UsageError(f"--base-ref: {raw} does not exist at {ref}")
        for name in names:
            if name == relative or name.endswith(RULE_SUFFIX):
                target = into / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(_git("cat-file", "blob", f"{ref}:{name}", cwd=top))
        out.append(str(into / relative))
    return out
