"""Rule tests: ``*_test.yaml`` files next to the rules, run by ``fleetrules test``.

    rules: [policy.fr]           # relative to the test file
    facts: [facts]               # files or directories; `objects:` adds inline Karmada objects
    now: 2026-12-02T10:02:01Z    # optional: evaluate failover at this time
    karmadaVersion: "1.18"       # optional: the Karmada version (default: the newest modelled)
    controllers: [feature-gates=PropagationPolicyPreemption=true]   # optional: controller manager flags (--controller)
    cases:
    - name: pipelines of a group never share a cluster
      expect:
        placements:
          streaming/orders-a-flinkdeployment: {clusters: [member1]}
          streaming/orders-d-flinkdeployment: {unschedulable: true}
        rejected:                # the rules that reject each cluster, exactly
          streaming/orders-b-flinkdeployment: {member1: [workload-anti-affinity]}
        evictions:               # in order; each item's fields must match (also ``rule``: the rule that evicted)
        - {binding: streaming/x-deployment, cluster: member1, reason: ApplicationFailure}

A case may override ``rules``, ``facts``, ``objects``, ``now``, ``karmadaVersion`` and ``controllers``.
"""

from __future__ import annotations

import difflib
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from engine.checker.rule_set import load_rules
from engine.errors import FleetrulesError, render
from engine.inputs.facts import parse_time
from engine.inputs.files import RULE_SUFFIX, display_path, expand
from engine.inputs.marks import Document
from engine.inputs.objects import FACT_SUFFIXES, load_facts
from engine.inputs.rule_files import RULE_FILE_SUFFIXES, in_tree, rule_tree
from engine.inputs.yaml import load_file
from engine.karmada.gates import Controllers
from engine.pipeline import evaluate
from engine.results import Result
from engine.schedule.registry import program
from engine.syntax.parse import parse_partial
from engine.syntax.schema import KARMADA_VERSION, karmada_version

TEST_SUFFIX = "_test.yaml"
_DEFAULT_KEYS = ("rules", "facts", "objects", "now", "karmadaVersion", "controllers")
_CASE_KEYS = {"name", *_DEFAULT_KEYS, "expect"}
_EXPECT_KEYS = {"placements", "rejected", "evictions"}


@dataclass(frozen=True)
class Outcome:
    file: str
    name: str
    passed: bool
    diff: str = ""
    error: str = ""


@dataclass
class Report:
    outcomes: list[Outcome] = field(default_factory=list)
    rules: set[str] = field(default_factory=set)  # every rule of the rule sets tested
    fired: set[str] = field(default_factory=set)  # the rules some case made fire

    @property
    def failed(self) -> int:
        return sum(not o.passed for o in self.outcomes)


def find_tests(paths: Sequence[str | Path]) -> list[Path]:
    return expand(paths, (TEST_SUFFIX,))


def _actual(result: Result, expect: dict[str, Any]) -> dict[str, Any]:
    """The actual values of exactly what the case expects, in the same shape."""
    out: dict[str, Any] = {}
    placements = {p.binding: p for p in result.placements}
    if "placements" in expect:
        out["placements"] = {}
        for key, wanted in (expect["placements"] or {}).items():
            p = placements.get(key)
            if p is None:
                out["placements"][key] = "no such placement"
                continue
            values = {"clusters": list(p.clusters), "feasible": list(p.feasible), "unschedulable": p.unschedulable}
            values["scores"] = {c: p.scores.get(c) for c in (wanted or {}).get("scores", {})}
            values["replicas"] = {c: p.replicas.get(c, 0) for c in p.clusters}
            values["message"] = p.message
            out["placements"][key] = {k: values.get(k, "unknown field") for k in (wanted or {})}
    if "rejected" in expect:
        out["rejected"] = {}
        for key, clusters in (expect["rejected"] or {}).items():
            p = placements.get(key)
            out["rejected"][key] = {
                c: sorted({r.rule for r in (p.rejected.get(c, ()) if p else ())}) for c in (clusters or {})
            }
    if "evictions" in expect:
        wanted_list = expect["evictions"] or []
        actual = []
        for index, eviction in enumerate(result.evictions):
            e = eviction.data()
            flat = {"binding": e.get("binding"), "cluster": e.get("cluster"), "event": e.get("event")}
            flat |= {"rule": e["rule"]} if "rule" in e else {}  # the rule that evicted, Karmada's or the user's
            flat |= e.get("task", {}) | ({"error": e["error"]} if "error" in e else {})
            wanted = wanted_list[index] if index < len(wanted_list) and isinstance(wanted_list[index], dict) else {}
            actual.append({k: flat.get(k) for k in wanted} or flat)
        out["evictions"] = actual
    return out


_PLACEMENT_FIELDS: dict[str, type] = {
    "clusters": list,
    "feasible": list,
    "unschedulable": bool,
    "scores": dict,
    "replicas": dict,
    "message": str,
}
_SHAPES = {list: "a list", bool: "true or false", dict: "a mapping of cluster names", str: "a string"}


def _misshapen(document: Document, expect: dict[str, Any]) -> str | None:
    """Where and how ``expect`` is not the shape cases are written in (the module's docstring), or None: each
    binding's placement a mapping of known fields of their types, each binding's rejected clusters a mapping
    of cluster → rule names, evictions a list of mappings. A case so written fails with this, and the others
    run (a TypeError ended the whole run, in text, JUnit and SARIF alike)."""

    def wrong(holder: Any, key: Any, what: str, path: str) -> str:
        return f"{document.span(holder, key)}: expect.{path}: {what}, found {_kind(holder[key])}"

    placements, rejected, evictions = (expect.get(k) for k in ("placements", "rejected", "evictions"))
    for section, value in (("placements", placements), ("rejected", rejected)):
        if value is not None and not isinstance(value, dict):
            return wrong(expect, section, "a mapping of each binding (NAMESPACE/NAME)", section)
    if evictions is not None and not isinstance(evictions, list):
        return wrong(expect, "evictions", "a list of evictions", "evictions")
    for binding, fields in (placements or {}).items():
        if fields is not None and not isinstance(fields, dict):
            return wrong(placements, binding, f"a mapping of {', '.join(_PLACEMENT_FIELDS)}", f"placements.{binding}")
        for name, value in (fields or {}).items():
            if name not in _PLACEMENT_FIELDS:
                where, known = document.span(fields, name, of_key=True), ", ".join(_PLACEMENT_FIELDS)
                return f"{where}: expect.placements.{binding}: unknown field {name!r}; known: {known}"
            if value is not None and not isinstance(value, _PLACEMENT_FIELDS[name]):
                return wrong(fields, name, _SHAPES[_PLACEMENT_FIELDS[name]], f"placements.{binding}.{name}")
    for binding, clusters in (rejected or {}).items():
        if clusters is not None and not isinstance(clusters, dict):
            return wrong(rejected, binding, "a mapping of cluster → the rules that reject it", f"rejected.{binding}")
        for cluster, rules in (clusters or {}).items():
            if rules is not None and not (isinstance(rules, list) and all(isinstance(r, str) for r in rules)):
                return wrong(clusters, cluster, "a list of rule names", f"rejected.{binding}.{cluster}")
    for index, eviction in enumerate(evictions or []):
        if not isinstance(eviction, dict):
            return wrong(evictions, index, "a mapping of the eviction's fields", f"evictions[{index}]")
    return None


def _kind(value: Any) -> str:
    kinds = {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean", int: "a number", float: "a number"}
    return kinds.get(type(value), type(value).__name__)


def _normalise(expect: dict[str, Any]) -> dict[str, Any]:
    rejected = expect.get("rejected")
    if isinstance(rejected, dict):
        expect = dict(expect)
        expect["rejected"] = {b: {c: sorted(rs or []) for c, rs in (cs or {}).items()} for b, cs in rejected.items()}
    return expect


def _dump(data: Any) -> list[str]:
    return yaml.safe_dump(data, sort_keys=True, default_flow_style=False).splitlines(keepends=True)


def _confined(
    document: Document, at: Any, key: str, named: Any, base: Path, roots: Sequence[Path], suffixes: tuple[str, ...]
) -> list[Path]:
    """The paths a test names under ``key`` (relative to the test file): each a directory, or a file whose name
    ends in one of ``suffixes``, below one of ``roots`` (the tree of tests run, or a --root); else ValueError at
    where the test names it. A test file is input like any other: it cannot make fleetrules read, and echo into
    a CI log, a file outside the tree (``rules: [/etc/passwd]``)."""
    if named is None:
        return []
    items = named if isinstance(named, list) else [named]
    out = []
    for item in items:
        path = base / str(item)
        where = document.span(at, key)
        if not in_tree(path, roots):
            tree = ", ".join(display_path(r) for r in roots)
            raise ValueError(f"{where}: {key}: {str(item)!r} is outside the tree of tests run ({tree}; or a --root)")
        if not path.is_dir() and not os.path.realpath(path).endswith(suffixes):
            raise ValueError(f"{where}: {key}: {str(item)!r} is not a directory or a {' or '.join(suffixes)} file")
        out.append(path)
    return out


def _case(
    test_file: Path,
    document: Document,
    defaults: dict[str, Any],
    index: int,
    report: Report,
    version: str,
    roots: Sequence[Path],
    flags: tuple[str, ...] = (),
) -> Outcome:
    shown = document.marks.file
    cases = document.value["cases"]
    case = cases[index]
    at = document.span(cases, index)
    if not isinstance(case, dict):
        return Outcome(shown, f"case {index + 1}", False, error=f"{at}: a case is a mapping with name and expect")
    name = str(case.get("name", f"case {index + 1}"))
    unknown = set(case) - _CASE_KEYS
    if unknown:
        first = document.span(case, sorted(unknown, key=str)[0], of_key=True)
        return Outcome(shown, name, False, error=f"{first}: unknown field(s) {', '.join(sorted(map(str, unknown)))}")
    merged = defaults | case
    expect = case.get("expect")
    if not isinstance(expect, dict) or not expect or set(expect) - _EXPECT_KEYS:
        where = document.span(case, "expect") if "expect" in case else at
        return Outcome(shown, name, False, error=f"{where}: expect: a mapping of {', '.join(sorted(_EXPECT_KEYS))}")
    misshapen = _misshapen(document, expect)
    if misshapen is not None:
        return Outcome(shown, name, False, error=misshapen)
    base = test_file.parent
    try:
        version = karmada_version(str(merged.get("karmadaVersion", version)))
        named = {}
        for key, suffixes in (("rules", RULE_FILE_SUFFIXES), ("facts", FACT_SUFFIXES)):
            holder = case if key in case else document.value
            named[key] = _confined(document, holder, key, merged.get(key), base, roots, suffixes)
        rules = load_rules(named["rules"], version, roots)
        facts = load_facts(named["facts"], merged.get("objects") or [])
        now = parse_time(str(merged["now"])) if merged.get("now") else None
        result = evaluate(rules, facts, now, controllers=_controllers(document, case, merged, flags))
    except (FleetrulesError, ValueError) as exc:
        message = _problems(exc) if isinstance(exc, FleetrulesError) else str(exc)
        return Outcome(shown, name, False, error=message)
    policies = tuple(rules.policies)
    report.rules |= {r.name for r in program(policies, tuple(rules.rules)).compiled.rules}
    for p in result.placements:
        report.fired |= {r.rule for rs in p.rejected.values() for r in rs}
        report.fired |= {e.rule for es in p.explanations.values() for e in es}
    report.fired |= {e.rule for e in result.evictions if e.rule}
    expected = _normalise(expect)
    actual = _actual(result, expected)
    if actual == expected:
        return Outcome(shown, name, True)
    diff = "".join(difflib.unified_diff(_dump(expected), _dump(actual), "expected", "actual"))
    return Outcome(shown, name, False, diff=diff)


def _problems(exc: FleetrulesError) -> str:
    """What a case's rules or facts are found to have, for a report that goes to CI logs and JUnit (issue 28):
    where and what, never a line of the files; and of a rule file that does not parse as one, only where (its
    syntax errors quote what they did not expect: a token of whatever file it is)."""
    unparsed = {
        file for file, text in exc.sources.items() if file.endswith(RULE_SUFFIX) and parse_partial(text, file)[1]
    }
    out: list[str] = []
    for d in exc.diagnostics:
        file = d.span.file if d.span is not None else ""
        if file not in unparsed:
            out.append(render(d))
        elif d.span is not None:
            out.append(f"{d.span}: error: does not parse as a rule file (`fleetrules check {file}` says why)")
            unparsed.discard(file)  # said once
    return "\n".join(out)


def _controllers(
    document: Document, case: dict[str, Any], merged: dict[str, Any], base: Sequence[str] = ()
) -> Controllers:
    """The case's (or file's) ``controllers``: flags as ``--controller`` takes them, on top of ``base`` (the config
    file's); ValueError at where they are written."""
    flags = merged.get("controllers") or []
    where = document.span(case if "controllers" in case else document.value, "controllers")
    if not isinstance(flags, list):
        raise ValueError(f"{where}: controllers: a list of FLAG=VALUE, as --controller takes them")
    try:
        return Controllers.parse([*base, *(str(f) for f in flags)])
    except ValueError as exc:
        raise ValueError(f"{where}: controllers: {exc}") from None


def run_tests(
    paths: Sequence[str | Path],
    version: str = KARMADA_VERSION,
    roots: Sequence[str | Path] = (),
    controllers: Sequence[str] = (),
) -> Report:
    """Every case of the test files under ``paths``, for Karmada ``version`` unless a file or case
    names its own (``karmadaVersion``), with the control plane's flags ``controllers`` (a config file's) under
    each file's or case's own. The rules and facts a test names stay below ``paths`` (a file's own
    directory) or one of ``roots``."""
    report = Report()
    tree = rule_tree(paths, roots)
    for test_file in find_tests(paths):
        shown = display_path(test_file)
        documents, problems = load_file(test_file, shown, "test files")
        if problems:
            report.outcomes.append(Outcome(shown, "(file)", False, error="\n".join(render(d) for d in problems)))
            continue
        data = documents[0].value if len(documents) == 1 else None
        if not isinstance(data, dict) or not isinstance(data.get("cases"), list) or not data["cases"]:
            where = documents[0].span() if documents else f"{shown}:1:1"
            message = f"{where}: expected one YAML document, a mapping with a list 'cases'"
            report.outcomes.append(Outcome(shown, "(file)", False, error=message))
            continue
        defaults = {k: data[k] for k in _DEFAULT_KEYS if k in data}
        for index in range(len(data["cases"])):
            outcome = _case(test_file, documents[0], defaults, index, report, version, tree, tuple(controllers))
            report.outcomes.append(outcome)
    return report
