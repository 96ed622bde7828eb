"""Semantic checks of parsed rule files; every problem of every file is collected with its span.

Karmada's own validation messages (pkg/util/validation/validation.go) are reused word for word
where a check mirrors one, so that users meet the same wording in both tools.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import assert_never

from engine.codes import Code
from engine.errors import Diagnostic, Span, UsageError, did_you_mean, error, expect, warning
from engine.inputs.rule_files import library_files, visible_conditions
from engine.kube import jsonpath
from engine.kube import validation as k8s
from engine.syntax import ast
from engine.syntax.conditions import calls, defined, expand
from engine.syntax.schema import (
    BUILTIN_FACTS,
    DEPRECATED_PURGE_MODES,
    DYNAMIC_WEIGHTS,
    FAILOVER_KINDS,
    FIELD_SELECTOR_KEYS,
    INTERNAL_FACTS,
    KARMADA_VERSION,
    KARMADA_VERSIONS,
    PURGE_MODES,
    REPLICA_MODES,
    SPREAD_FIELDS,
    TAINT_EFFECTS,
    FieldType,
)

_REASON = re.compile(r"[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?")
_FACT_TYPE = re.compile(r"[a-z][a-z0-9_]*")
_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# tolerationSeconds and gracePeriodSeconds of a failover behaviour are *int32 (k8s.INT32_MAX); a
# toleration's tolerationSeconds is an *int64 (k8s.INT64_MAX)
INT32_MAX, INT64_MAX = k8s.INT32_MAX, k8s.INT64_MAX
GO_DURATION_SECONDS = INT64_MAX // 1_000_000_000  # the longest time.Duration in whole seconds


def _one_of(choices: Sequence[str]) -> str:
    return ", ".join(choices)


# the statements a policy has at most one of, and what a second one is told
_ONE_PER_POLICY: dict[type[ast.PolicyStmt], str] = {
    ast.Priority: "duplicate priority; a policy has one",
    ast.Preemption: "duplicate preemption; a policy has one",
    ast.Activation: "duplicate activation; a policy has one",
    ast.SchedulePriority: "duplicate 'priority class'; a policy has one",
    ast.PropagateDeps: "duplicate 'propagate dependencies'; a policy has one",
    ast.Replicas: "duplicate replicas statement; a policy has one",
}


@dataclass
class _Seen:
    """What a policy's statements before the one checked held: its tolerations and its failover blocks' kinds."""

    tolerations: set[ast.Toleration] = field(default_factory=set)
    failovers: set[str] = field(default_factory=set)


class _Checker:
    def __init__(self, files: Sequence[ast.File], version: str = KARMADA_VERSION, strict: bool = False) -> None:
        self.files = files
        self.version = version
        self.strict = strict  # fleetrules' extensions are errors: what Karmada cannot do
        self.out: list[Diagnostic] = []
        self.derived = self._derived_fact_fields()
        self.conditions = visible_conditions(files)

    def err(self, message: str, span: Span, code: Code) -> None:
        self.out.append(error(message, span, code=code))

    def warn(self, message: str, span: Span, code: Code) -> None:
        self.out.append(warning(message, span, code=code))

    def _derived_fact_fields(self) -> dict[str, set[str]]:
        fields: dict[str, set[str]] = {}
        for file in self.files:
            for rule in file.rules:
                for action in rule.actions:
                    if isinstance(action, ast.Derive):
                        fields.setdefault(action.fact_type.value, set()).update(a.name.value for a in action.fields)
        return fields

    def run(self) -> list[Diagnostic]:
        seen: dict[str, ast.Word] = {}
        for file in self.files:
            for item in file.items:
                if isinstance(item, ast.Include):
                    continue
                earlier = seen.get(item.name.value)
                if earlier is not None:
                    self.err(
                        f"duplicate name '{item.name.value}' (first defined at {earlier.span})",
                        item.name.span,
                        Code.DUPLICATE,
                    )
                else:
                    seen[item.name.value] = item.name
                builtin = file.path.startswith("<builtin>")
                match item:
                    case ast.Policy():
                        self.policy(item)
                    case ast.Rule():
                        self.rule(item)
                        if not builtin:
                            self.extension("a rule (Karmada has no user-written scheduler rules)", item.name.span)
                    case ast.Condition():
                        self.condition(item, builtin)
                        if not builtin:
                            self.extension("a named condition (of rules: a fleetrules extension)", item.name.span)
                    case _:
                        assert_never(item)
        return self.out

    def extension(self, what: str, span: Span) -> None:
        """--strict-karmada: a fleetrules extension, which Karmada would not do."""
        if self.strict:
            self.err(f"not Karmada: {what} is a fleetrules extension (--strict-karmada)", span, Code.EXTENSION)

    # ------------------------------------------------------------ words
    def problems(self, word: ast.Word, what: str, found: list[str]) -> None:
        for problem in found:
            self.err(f"invalid {what} '{word.value}': {problem}", word.span, Code.INVALID_NAME)

    def label_key(self, word: ast.Word, what: str = "label key") -> None:
        self.problems(word, what, k8s.label_key_problems(word.value))

    def label_value(self, word: ast.Word) -> None:
        self.problems(word, "label value", k8s.label_value_problems(word.value))

    def enum(self, word: ast.Word, what: str, choices: Sequence[str]) -> bool:
        if word.value in choices:
            return True
        hint = did_you_mean(word.value, choices) or f"; expected one of {_one_of(choices)}"
        self.err(f"unknown {what} '{word.value}'{hint}", word.span, Code.UNKNOWN_NAME)
        return False

    # ------------------------------------------------------------ policies
    def policy(self, policy: ast.Policy) -> None:
        if not policy.of_type(ast.Select):
            self.err(
                f"policy '{policy.name.value}' has no select block, so it matches no workload",
                policy.name.span,
                Code.MATCHES_NOTHING,
            )
        self.policy_name(policy)
        for kind, duplicate in _ONE_PER_POLICY.items():
            for extra in policy.of_type(kind)[1:]:
                self.err(duplicate, extra.span, Code.DUPLICATE)
        seen = _Seen()
        for stmt in policy.statements:
            self.statement(policy, stmt, seen)
        # the statements checked together
        self.cluster_affinities([s for s in policy.statements if isinstance(s, ast.ClusterAffinity)])
        self.overflow(policy)
        self.spreads([s for s in policy.statements if isinstance(s, ast.Spread)])
        for stmt in [s for s in policy.statements if isinstance(s, ast.Replicas)][:1]:
            self.replicas(stmt, any(isinstance(s, ast.Spread) for s in policy.statements))
        self.workload_terms([s for s in policy.statements if isinstance(s, ast.WorkloadTerm)])

    def statement(self, policy: ast.Policy, stmt: ast.PolicyStmt, seen: _Seen) -> None:
        """One statement of ``policy`` on its own (``seen``: the tolerations and failover blocks before it)."""
        match stmt:
            case ast.Select():
                self.select(stmt)
                others = [w for w in stmt.values(ast.SelectField.NAMESPACE) if w.value != policy.namespace]
                if policy.namespace is not None and others:  # pkg/util/validation validateResourceSelectors
                    message = "namespace of resource selector must be the same as the namespace of the policy"
                    self.err(
                        f"{message} ({policy.namespace}, not '{others[0].value}')",
                        others[0].span,
                        Code.KARMADA_VALIDATION,
                    )
            case ast.Priority():
                if not -(2**31) <= stmt.value.value <= INT32_MAX:
                    self.err(
                        "priority must fit a 32-bit integer (spec.priority is an int32)", stmt.span, Code.OUT_OF_RANGE
                    )
            case ast.Preemption():
                self.enum(stmt.mode, "preemption", tuple(ast.PREEMPTION_MODES))
            case ast.Activation():
                self.enum(stmt.mode, "activation", tuple(ast.ACTIVATION_MODES))
            case ast.SchedulePriority():
                problems = k8s.dns1123_subdomain_problems(stmt.class_name.value)
                self.problems(stmt.class_name, "priority class name", problems)
            case ast.PropagateDeps():
                self.enum(stmt.what, "propagate", ("dependencies",))
            case ast.Toleration():
                if stmt in seen.tolerations:
                    self.warn("duplicate toleration", stmt.span, Code.DUPLICATE)
                seen.tolerations.add(stmt)
                self.toleration(stmt)
            case ast.Failover():
                if stmt.kind.value in seen.failovers:
                    self.err(f"duplicate 'failover {stmt.kind.value}' block", stmt.kind.span, Code.DUPLICATE)
                seen.failovers.add(stmt.kind.value)
                self.failover(stmt)
            case ast.ClusterAffinity() | ast.Spread() | ast.Replicas() | ast.WorkloadTerm():
                pass  # checked together, by ``policy``
            case _:
                assert_never(stmt)

    def policy_name(self, policy: ast.Policy) -> None:
        """``NAMESPACE/NAME`` names a PropagationPolicy, ``NAME`` a ClusterPropagationPolicy."""
        word = policy.name
        if word.value.count("/") > 1:
            self.err(f"invalid policy name '{word.value}': write NAMESPACE/NAME or NAME", word.span, Code.INVALID_NAME)
        elif policy.namespace is not None:
            namespace = ast.Word(policy.namespace, span=word.span)
            self.problems(namespace, "namespace", k8s.dns1123_label_problems(policy.namespace))

    def select(self, select: ast.Select) -> None:
        seen: set[ast.SelectField] = set()
        for stmt in select.statements:
            if isinstance(stmt, ast.SelectLabels):
                self.selector(stmt.selector)
                continue
            if stmt.field in seen:
                self.err(
                    f"duplicate '{stmt.field.value}' in select; list all values in one statement",
                    stmt.span,
                    Code.DUPLICATE,
                )
            seen.add(stmt.field)
            for word in stmt.values:
                if stmt.field is ast.SelectField.KIND:
                    self.problems(word, "kind", k8s.kind_problems(word.value))
                elif stmt.field is ast.SelectField.NAMESPACE:
                    self.problems(word, "namespace", k8s.dns1123_label_problems(word.value))
                else:
                    self.selected_name(word, [k.value for k in select.values(ast.SelectField.KIND)])
        if not select.values(ast.SelectField.KIND):
            self.err(
                "select needs a kind (Karmada resource selectors name the kind)", select.span, Code.MATCHES_NOTHING
            )
        if len(select.label_selectors) > 1:
            self.err("duplicate 'labels' in select; write one selector", select.span, Code.DUPLICATE)

    def selected_name(self, word: ast.Word, kinds: list[str]) -> None:
        """A resource selector's name: Karmada takes any string, so a name that no object of the selected kinds
        can have (as the API server checks each kind's names) is a warning: the selector selects nothing."""
        if not word.value:
            self.err("invalid name '': a resource selector's name is omitted, not empty", word.span, Code.INVALID_NAME)
            return
        checked = [(kind, *k8s.kind_name_problems(kind, word.value)) for kind in kinds]
        refused = [(kind, rule, problems) for kind, rule, problems in checked if problems]
        if checked and len(refused) == len(checked):
            kind, rule, problems = refused[0]
            message = f"name '{word.value}' selects nothing: a {kind}'s name is {rule}: {problems[0]}"
            self.warn(message, word.span, Code.KARMADA_VALIDATION)

    def selector(self, selector: ast.Selector, fields: bool = False) -> None:
        by_key: dict[str, list[ast.Requirement]] = {}
        for req in selector.requirements:
            by_key.setdefault(req.key.value, []).append(req)
            if fields:
                self.enum(req.key, "field selector key", FIELD_SELECTOR_KEYS)
                if req.op in (ast.Op.EXISTS, ast.Op.DOES_NOT_EXIST):
                    op = "Exists" if req.op is ast.Op.EXISTS else "DoesNotExist"
                    self.err(f'unsupported operator "{op}", must be In or NotIn', req.span, Code.KARMADA_VALIDATION)
            else:
                self.label_key(req.key)
            for value in req.values:
                self.label_value(value)
        for key, reqs in by_key.items():
            if len(reqs) > 1:
                if _contradicts(reqs):
                    self.err(
                        f"conflicting requirements on '{key}': no object can match this selector",
                        reqs[1].span,
                        Code.MATCHES_NOTHING,
                    )
                else:
                    self.warn(f"'{key}' is constrained more than once", reqs[1].span, Code.MATCHES_NOTHING)

    def cluster_affinities(self, terms: list[ast.ClusterAffinity]) -> None:
        unnamed = [t for t in terms if t.name is None]
        named = [t for t in terms if t.name is not None]
        for extra in unnamed[1:]:
            self.err(
                "duplicate clusters block; name the blocks to write ordered affinity terms", extra.span, Code.DUPLICATE
            )
        if unnamed and named:
            self.err("clusterAffinities cannot co-exist with clusterAffinity", named[0].span, Code.KARMADA_VALIDATION)
        names: set[str] = set()
        for term in terms:
            if term.name is not None:
                if term.name.value in names:
                    self.err("each affinity term in a policy must have a unique name", term.name.span, Code.DUPLICATE)
                names.add(term.name.value)
                if len(term.name.value) > 32:
                    self.err(
                        "an affinity term name must be no more than 32 characters", term.name.span, Code.OUT_OF_RANGE
                    )
                self.label_key(term.name, "affinity term name")
            self.cluster_affinity(term)

    def overflow(self, policy: ast.Policy) -> None:
        """ValidatePlacement and ValidateOverflowAffinities (pkg/util/validation/validation.go)."""
        replicas = next((s for s in policy.statements if isinstance(s, ast.Replicas)), None)
        allowed = replicas is not None and (
            replicas.mode.value == "aggregated"
            or (replicas.mode.value == "divided" and replicas.by is not None and replicas.by.value == "available")
        )
        for term in (s for s in policy.statements if isinstance(s, ast.ClusterAffinity) and s.overflow):
            first = term.overflow[0].span
            if term.name is None:
                self.err(
                    "overflow groups belong to a named clusters block (a clusterAffinities term)", first, Code.MISUSED
                )
                continue
            if not term.statements:
                self.err(
                    "overflowAffinities can only be used together with the inline ClusterAffinity",
                    first,
                    Code.KARMADA_VALIDATION,
                )
            if not allowed:
                message = (
                    "overflowAffinities can only be used together with dynamic weight or aggregated scheduling "
                    "(replicas divided by available, or replicas aggregated)"
                )
                self.err(message, first, Code.KARMADA_VALIDATION)
            names = {term.name.value}
            for group in term.overflow:
                self.label_key(group.name, "overflow affinity name")
                if len(group.name.value) > 32:
                    self.err(
                        "an overflow affinity name must be no more than 32 characters",
                        group.name.span,
                        Code.OUT_OF_RANGE,
                    )
                if group.name.value in names:
                    message = (
                        "overflow affinity name must be unique and must not duplicate the primary group's affinityName"
                    )
                    self.err(message, group.name.span, Code.OUT_OF_RANGE)
                names.add(group.name.value)
                self.cluster_affinity(ast.ClusterAffinity(None, group.statements, span=group.span))

    def cluster_affinity(self, term: ast.ClusterAffinity) -> None:
        seen: set[ast.ClusterField] = set()
        for stmt in term.statements:
            if stmt.field in seen:
                self.err(f"duplicate '{stmt.field.value}' in clusters block", stmt.span, Code.DUPLICATE)
            seen.add(stmt.field)
            if isinstance(stmt, ast.ClusterList):
                for word in stmt.values:
                    self.problems(word, "cluster name", k8s.dns1123_subdomain_problems(word.value))
            else:
                self.selector(stmt.selector, fields=stmt.field is ast.ClusterField.FIELDS)
        excluded = {w.value for w in term.values(ast.ClusterField.EXCLUDE)}
        for word in term.values(ast.ClusterField.NAMES):
            if word.value in excluded:
                self.warn(
                    f"cluster '{word.value}' is both named and excluded (exclude wins)", word.span, Code.MATCHES_NOTHING
                )

    def toleration(self, tol: ast.Toleration) -> None:
        if tol.key is None:
            if tol.value is not None:
                self.err(
                    "a toleration for every key ('*') cannot have a value (operator must be Exists)",
                    tol.span,
                    Code.KARMADA_VALIDATION,
                )
        else:
            self.label_key(tol.key, "taint key")
        if tol.value is not None:
            self.label_value(tol.value)
        if tol.effect is not None:
            self.enum(tol.effect, "taint effect", TAINT_EFFECTS)
        if tol.seconds is not None and tol.effect is not None and tol.effect.value != "NoExecute":
            # Karmada admits it (validateClusterTolerations checks only the operator); the taint manager reads
            # the seconds of a toleration only against NoExecute taints. Without an effect, they apply to those.
            self.warn(
                f"'for' (tolerationSeconds) is read only against NoExecute taints; with the effect "
                f"{tol.effect.value} it changes nothing",
                tol.seconds.span,
                Code.MATCHES_NOTHING,
            )
        if tol.seconds is not None and tol.seconds.seconds > INT64_MAX:
            self.err(
                f"tolerationSeconds must fit a 64-bit integer (at most {INT64_MAX})",
                tol.seconds.span,
                Code.OUT_OF_RANGE,
            )
        elif tol.seconds is not None and tol.seconds.seconds > GO_DURATION_SECONDS:
            self.warn(
                f"Karmada's taint manager adds tolerationSeconds as nanoseconds in an int64, which wraps past "
                f"{GO_DURATION_SECONDS}s (292 years): the eviction can come at once; leave out 'for' to tolerate "
                "forever",
                tol.seconds.span,
                Code.OUT_OF_RANGE,
            )

    def spreads(self, spreads: list[ast.Spread]) -> None:
        """ValidateSpreadConstraint (pkg/util/validation/validation.go), plus what fleetrules evaluates."""
        seen: set[str] = set()
        for spread in spreads:
            field = spread.field.value
            if not self.enum(spread.field, "spread field", SPREAD_FIELDS):
                continue
            if field in seen:
                self.err(f"multiple {field} spread constraints are not allowed", spread.span, Code.KARMADA_VALIDATION)
            seen.add(field)
            low = spread.min_groups.value if spread.min_groups else 1
            high = spread.max_groups.value if spread.max_groups else None
            if high is not None and 0 < high < low:  # maxGroups 0 is "not set" to Karmada's webhook
                self.err("maxGroups lower than minGroups is not allowed", spread.span, Code.KARMADA_VALIDATION)
            if not high and field == "cluster":
                self.warn(
                    "no 'max': Karmada takes maxGroups 0 and selects no cluster (the binding stays unscheduled)",
                    spread.span,
                    Code.MATCHES_NOTHING,
                )
        if seen and "cluster" not in seen:
            self.err(
                "the cluster spread constraint must be enabled in one of the constraints "
                "in case of SpreadByField is enabled",
                spreads[0].span,
                Code.KARMADA_VALIDATION,
            )

    def replicas(self, stmt: ast.Replicas, spread: bool) -> None:
        """replicaScheduling (propagation_types.go ReplicaSchedulingStrategy): the type and division preference as
        words."""
        if not self.enum(stmt.mode, "replica scheduling", REPLICA_MODES):
            return
        if stmt.by is not None and stmt.mode.value != "divided":
            self.err(f"'by {stmt.by.value}' is for 'replicas divided'", stmt.by.span, Code.MISUSED)
        elif stmt.by is not None and stmt.by.value != "weight":
            self.enum(stmt.by, "dynamic weight", DYNAMIC_WEIGHTS)
        for entry in stmt.weights:
            if entry.weight.value < 1:
                self.err("a static weight is at least 1", entry.weight.span, Code.OUT_OF_RANGE)
            self.cluster_affinity(ast.ClusterAffinity(None, entry.target, span=entry.span))
        static = stmt.mode.value == "divided" and (stmt.by is None or (stmt.by.value == "weight" and stmt.weights))
        if spread and static:
            self.warn(
                "spread constraints are ignored with static weights (shouldIgnoreSpreadConstraint): "
                "every feasible cluster is selected",
                stmt.span,
                Code.MATCHES_NOTHING,
            )

    def workload_terms(self, terms: list[ast.WorkloadTerm]) -> None:
        required: dict[bool, ast.WorkloadTerm] = {}
        preferred: set[tuple[bool, str, str | None]] = set()
        for term in terms:
            self.label_key(term.key, "groupByLabelKey")
            if term.topology is not None:
                self.label_key(term.topology, "topology key")
            if term.topology is not None:
                self.extension(f"'within {term.topology.value}' (a workload term's topology)", term.topology.span)
            if term.preferred:
                self.extension(f"a preferred workload {term.keyword} term", term.span)
                if term.weight is None:
                    self.err("a preferred term needs a weight from 1 to 100", term.span, Code.OUT_OF_RANGE)
                elif not 1 <= term.weight.value <= 100:
                    self.err(
                        f"weight {term.weight.value} is out of range; it must be from 1 to 100",
                        term.weight.span,
                        Code.OUT_OF_RANGE,
                    )
                ident = (term.anti, term.key.value, term.topology.value if term.topology else None)
                if ident in preferred:
                    self.err(f"duplicate preferred workload {term.keyword} term", term.span, Code.DUPLICATE)
                preferred.add(ident)
                continue
            if term.weight is not None:
                self.err(
                    "weight is only for preferred terms; write 'prefer workload …' or drop the weight",
                    term.weight.span,
                    Code.MISUSED,
                )
            if term.anti in required:
                self.err(f"a policy has one required workload {term.keyword} term", term.span, Code.DUPLICATE)
            required.setdefault(term.anti, term)
        if True in required and False in required and required[True].key.value == required[False].key.value:
            self.err(
                "affinity and antiAffinity must not use the same groupByLabelKey",
                required[True].key.span,
                Code.KARMADA_VALIDATION,
            )

    def failover(self, block: ast.Failover) -> None:
        if not self.enum(block.kind, "failover kind", FAILOVER_KINDS):
            return
        is_app = block.kind.value == "application"
        seen: set[type] = set()
        aliases: set[str] = set()
        purge: ast.Purge | None = None
        for stmt in block.statements:
            if type(stmt) in seen and not isinstance(stmt, ast.Preserve):
                self.err("duplicate statement in failover block", stmt.span, Code.DUPLICATE)
            seen.add(type(stmt))
            if isinstance(stmt, (ast.FailoverToleration, ast.Grace)) and stmt.duration.seconds > INT32_MAX:
                what = "tolerationSeconds" if isinstance(stmt, ast.FailoverToleration) else "gracePeriodSeconds"
                self.err(
                    f"{what} must fit a 32-bit integer (at most {INT32_MAX}s, about 68 years)",
                    stmt.duration.span,
                    Code.OUT_OF_RANGE,
                )
            if isinstance(stmt, ast.FailoverToleration) and not is_app:
                self.err(
                    "toleration is for application failover; cluster failover follows NoExecute taints "
                    "(write 'tolerate KEY : NoExecute for DURATION')",
                    stmt.span,
                    Code.MISUSED,
                )
            elif isinstance(stmt, ast.Purge):
                purge = stmt
                self.purge_mode(stmt.mode, is_app)
            elif isinstance(stmt, ast.Grace):
                if not is_app:
                    self.err(
                        "grace is for application failover; cluster failover has no grace period",
                        stmt.span,
                        Code.MISUSED,
                    )
                elif stmt.duration.seconds <= 0:
                    self.err("grace period must be greater than 0", stmt.duration.span, Code.OUT_OF_RANGE)
            elif isinstance(stmt, ast.Preserve):
                if stmt.alias.value in aliases:
                    self.err(f"duplicate preserved label '{stmt.alias.value}'", stmt.alias.span, Code.DUPLICATE)
                aliases.add(stmt.alias.value)
                self.label_key(stmt.alias, "aliasLabelName")
                self.json_path(stmt.json_path)
        grace = next((s for s in block.statements if isinstance(s, ast.Grace)), None)
        if grace is not None and purge is not None:
            mode = DEPRECATED_PURGE_MODES.get(purge.mode.value, purge.mode.value)
            if mode != "Gracefully":
                self.err(
                    f"grace only takes effect when purge is Gracefully (here: {purge.mode.value})",
                    grace.span,
                    Code.KARMADA_VALIDATION,
                )

    def purge_mode(self, word: ast.Word, is_app: bool) -> None:
        if word.value in DEPRECATED_PURGE_MODES:
            new = DEPRECATED_PURGE_MODES[word.value]
            if KARMADA_VERSIONS.index(self.version) >= KARMADA_VERSIONS.index("1.19"):
                supported = ", ".join(f'"{m}"' for m in PURGE_MODES)
                self.err(
                    f'purgeMode: Unsupported value: "{word.value}": supported values: {supported} (removed in '
                    f"Karmada v1.19; use '{new}', or --karmada-version 1.18)",
                    word.span,
                    Code.KARMADA_VALIDATION,
                )
            else:
                self.warn(
                    f"purge mode '{word.value}' is deprecated (removed in Karmada v1.19); use '{new}'",
                    word.span,
                    Code.DEPRECATED,
                )
            return
        if self.enum(word, "purge mode", PURGE_MODES) and not is_app and word.value == "Never":
            self.err("cluster failover accepts only Directly or Gracefully", word.span, Code.KARMADA_VALIDATION)

    def json_path(self, word: ast.Word) -> None:
        try:
            root = jsonpath.parse(word.value)
            for doubt in jsonpath.doubts(root):
                self.warn(f"JSONPath: {doubt}", word.span, Code.JSONPATH)
        except jsonpath.JsonPathError as exc:
            span = word.span
            verbatim = span.line == span.end_line and len(word.value) + 2 == span.end_column - span.column
            if exc.offset is not None and verbatim:
                column = span.column + 1 + exc.offset  # the string has no escapes: point into it
                span = Span(span.file, span.line, column, span.line, column + 1)
            # Karmada's webhook does not parse it: the policy is admitted, and state preservation by it fails
            # at each eviction (evaluated so, in client-go's words)
            self.warn(
                f"invalid JSONPath: {exc}; Karmada admits it, and every eviction that preserves state by it fails",
                span,
                Code.JSONPATH,
            )

    # ------------------------------------------------------------ named conditions
    def condition(self, condition: ast.Condition, builtin: bool) -> None:
        name = condition.name.value
        library = defined(library_files()).get(name)
        if not builtin and library is not None and library != condition:  # the library's own file, named, is it
            self.err(
                f"condition '{name}' is the library's ({library.name.span}); name yours otherwise",
                condition.name.span,
                Code.DUPLICATE,
            )
        params: set[str] = set()
        for param in condition.params:
            if not _VARIABLE.fullmatch(param.value):
                self.err(
                    f"invalid variable name '{param.value}': use letters, digits and _", param.span, Code.INVALID_NAME
                )
            if param.value in params:
                self.err(f"parameter '{param.value}' is named twice", param.span, Code.DUPLICATE)
            params.add(param.value)
        for path in _paths(condition.body):
            if path.var not in params:
                hint = did_you_mean(path.var, params) or f"; its parameters are {', '.join(sorted(params))}"
                self.err(f"unknown variable '{path.var}' in condition '{name}'{hint}", path.span, Code.UNKNOWN_VARIABLE)
            elif not path.steps:
                self.err(
                    f"'{path.var}' is a whole fact; name a field such as {path.var}.name", path.span, Code.UNKNOWN_FIELD
                )
        for call in calls(condition.body):
            self.call(call, params)
        cycle = self.cycle((name,))
        if cycle:
            uses = " -> ".join(cycle)
            self.err(
                f"condition '{name}' uses itself ({uses}), which never ends", condition.name.span, Code.CONDITION_CYCLE
            )

    def cycle(self, chain: tuple[str, ...]) -> tuple[str, ...]:
        """``chain`` and the conditions by which its last uses its first again, or () when none leads back."""
        condition = self.conditions.get(chain[-1])
        for call in calls(condition.body if condition is not None else None):
            used = call.name.value
            if used == chain[0]:
                return (*chain, used)
            if used not in chain:
                found = self.cycle((*chain, used))
                if found:
                    return found
        return ()

    def call(self, call: ast.Call, visible: Iterable[str]) -> bool:
        """Whether ``call`` names a condition with as many parameters as it has arguments, each a variable of
        ``visible``; each problem told."""
        condition = self.conditions.get(call.name.value)
        if condition is None:
            hint = did_you_mean(call.name.value, self.conditions) or (
                f"; known: {_one_of(sorted(self.conditions))}" if self.conditions else ""
            )
            self.err(f"unknown condition '{call.name.value}'{hint}", call.name.span, Code.UNKNOWN_NAME)
            return False
        sound = True
        if len(call.args) != len(condition.params):
            params = ", ".join(p.value for p in condition.params)
            self.err(
                f"condition '{call.name.value}' takes {len(condition.params)} variable(s) ({params}), "
                f"not {len(call.args)}",
                call.span,
                Code.MISUSED,
            )
            sound = False
        names = set(visible)
        for arg in call.args:
            if arg.value not in names:
                self.err(
                    f"unknown variable '{arg.value}'{did_you_mean(arg.value, names)}", arg.span, Code.UNKNOWN_VARIABLE
                )
                sound = False
        return sound

    # ------------------------------------------------------------ rules
    def rule(self, rule: ast.Rule) -> None:
        bound: dict[str, ast.Pattern] = {}
        for pattern in rule.patterns:
            known = pattern.fact_type.value in BUILTIN_FACTS or pattern.fact_type.value in self.derived
            if not known:
                choices = [*BUILTIN_FACTS, *self.derived]
                hint = did_you_mean(pattern.fact_type.value, choices) or f"; known: {_one_of(sorted(choices))}"
                self.err(
                    f"unknown fact type '{pattern.fact_type.value}'{hint}", pattern.fact_type.span, Code.UNKNOWN_NAME
                )
            if pattern.var.value in bound:
                self.err(
                    f"variable '{pattern.var.value}' is already bound in this rule", pattern.var.span, Code.DUPLICATE
                )
            if not _VARIABLE.fullmatch(pattern.var.value):
                self.err(
                    f"invalid variable name '{pattern.var.value}': use letters, digits and _",
                    pattern.var.span,
                    Code.INVALID_NAME,
                )
            visible = {**bound, pattern.var.value: pattern}
            if pattern.condition is not None:
                self.pattern_condition(pattern.condition, visible, known)
            if not pattern.negated:
                bound[pattern.var.value] = pattern
        for action in rule.actions:
            self.action(action, bound)

    def pattern_condition(self, condition: ast.Expr, visible: dict[str, ast.Pattern], known: bool) -> None:
        """The fields a pattern's condition reads, and the literals it compares them with, its named conditions
        written out: what is wrong inside one is told where the pattern names it, and says which."""
        used = {c.span: c.name.value for c in calls(condition)}
        sound = all([self.call(c, visible) for c in calls(condition)])
        written = expand(condition, self.conditions) if sound else condition
        before = len(self.out)
        for path in _paths(written):
            self.path(path, visible, known_types=known)
        for path, literal in _literal_comparisons(written):
            self.literal_type(path, literal, visible)
        for index in range(before, len(self.out)):
            d = self.out[index]
            if d.span in used:
                self.out[index] = replace(d, message=f"{d.message} (in condition '{used[d.span]}')")

    def path(self, path: ast.Path, visible: dict[str, ast.Pattern], known_types: bool = True) -> None:
        pattern = visible.get(path.var)
        if pattern is None:
            hint = did_you_mean(path.var, visible)
            self.err(f"unknown variable '{path.var}'{hint}", path.span, Code.UNKNOWN_VARIABLE)
            return
        fact_type = pattern.fact_type.value
        fields = BUILTIN_FACTS.get(fact_type) or dict.fromkeys(self.derived.get(fact_type, ()), FieldType.STRING)
        if not path.steps:
            self.err(
                f"'{path.var}' is a whole {fact_type} fact; name a field such as {path.var}.name",
                path.span,
                Code.UNKNOWN_FIELD,
            )
            return
        if not fields:
            return  # unknown fact type: reported on the pattern
        name = path.steps[0]
        if name not in fields:
            self.err(f"{fact_type} has no field '{name}'{did_you_mean(name, fields)}", path.span, Code.UNKNOWN_FIELD)
            return
        if fields[name] is FieldType.LABELS:
            if len(path.steps) != 2:
                self.err(
                    f'labels take one key: {path.var}.labels["KEY"] (quote keys that contain dots or slashes)',
                    path.span,
                    Code.UNKNOWN_FIELD,
                )
        elif len(path.steps) > 1:
            self.err(f"{fact_type}.{name} has no fields", path.span, Code.UNKNOWN_FIELD)

    def literal_type(self, path: ast.Path, literal: ast.Literal, visible: dict[str, ast.Pattern]) -> None:
        """A field of a built-in fact compared with a literal of another type never matches: an error."""
        pattern = visible.get(path.var)
        fields = BUILTIN_FACTS.get(pattern.fact_type.value, {}) if pattern is not None and path.steps else {}
        expected = _LITERAL_TYPES.get(fields.get(path.steps[0])) if fields else None
        if expected is None:
            return
        python_type, noun, hint = expected
        value = literal.value
        if isinstance(value, python_type) and (python_type is bool or not isinstance(value, bool)):
            return
        shown = f'"{value}"' if isinstance(value, str) else str(value).lower() if isinstance(value, bool) else value
        text = ".".join((path.var, *path.steps))
        self.err(f"{text} is {noun}: compare it with {hint}, not {shown}", literal.span, Code.TYPE_MISMATCH)

    def action(self, action: ast.Action, bound: dict[str, ast.Pattern]) -> None:
        def expect(var: ast.Word, fact_type: str) -> None:
            pattern = bound.get(var.value)
            if pattern is None:
                self.err(
                    f"unknown variable '{var.value}'{did_you_mean(var.value, bound)}", var.span, Code.UNKNOWN_VARIABLE
                )
            elif pattern.fact_type.value != fact_type:
                self.err(
                    f"'{var.value}' is a {pattern.fact_type.value}, not a {fact_type}", var.span, Code.TYPE_MISMATCH
                )

        if isinstance(action, (ast.Reject, ast.Prefer)):
            expect(action.cluster, "cluster")
            expect(action.binding, "binding")
        if isinstance(action, ast.Prefer) and not 1 <= action.weight.value <= 100:
            self.err(
                f"weight {action.weight.value} is out of range; it must be from 1 to 100",
                action.weight.span,
                Code.OUT_OF_RANGE,
            )
        if isinstance(action, ast.Reject) and not action.message.value.strip():
            self.err("a rejection needs a message that says why", action.message.span, Code.MISUSED)
        if isinstance(action, ast.Evict):
            expect(action.binding, "binding")
            expect(action.cluster, "cluster")
            reason = action.reason.value
            if len(reason) > 32 or not _REASON.fullmatch(reason):
                self.err(
                    f"invalid eviction reason '{reason}': CamelCase, at most 32 characters, "
                    "matching ^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$",
                    action.reason.span,
                    Code.INVALID_NAME,
                )
            if len(action.message.value) > 1024:
                self.err(
                    "an eviction message must be no more than 1024 characters", action.message.span, Code.OUT_OF_RANGE
                )
        if isinstance(action, ast.Derive):
            name = action.fact_type.value
            if name in BUILTIN_FACTS or name in INTERNAL_FACTS:
                self.err(
                    f"'{name}' facts come from the input or the engine; derive a fact of another name",
                    action.fact_type.span,
                    Code.INVALID_NAME,
                )
            elif not _FACT_TYPE.fullmatch(name):
                self.err(f"invalid fact type '{name}': use lower_snake_case", action.fact_type.span, Code.INVALID_NAME)
            names = Counter(a.name.value for a in action.fields)
            for assignment in action.fields:
                if names[assignment.name.value] > 1:
                    self.err(f"field '{assignment.name.value}' is assigned twice", assignment.name.span, Code.DUPLICATE)
                for path in _paths(assignment.value):
                    self.path(path, bound)


def _contradicts(reqs: list[ast.Requirement]) -> bool:
    """True when no label set can satisfy all of ``reqs`` (all on one key)."""
    allowed: set[str] | None = None
    must_exist = must_not_exist = False
    denied: set[str] = set()
    for req in reqs:
        values = {v.value for v in req.values}
        if req.op in (ast.Op.EQUALS, ast.Op.IN):
            allowed = values if allowed is None else allowed & values
            must_exist = True
        elif req.op in (ast.Op.NOT_EQUALS, ast.Op.NOT_IN):
            denied |= values
        elif req.op is ast.Op.EXISTS:
            must_exist = True
        else:
            must_not_exist = True
    if must_exist and must_not_exist:
        return True
    return allowed is not None and not (allowed - denied)


# field type → (literal type, what the field is, what to compare it with)
_LITERAL_TYPES: dict[FieldType | None, tuple[type, str, str]] = {
    FieldType.BOOL: (bool, "a boolean", "true or false"),
    FieldType.NUMBER: (int, "a number", "a number"),
    FieldType.STRING: (str, "a string", "a string"),
    FieldType.LABELS: (str, "a string", "a string"),
}


def _subexpressions(expr: ast.Expr) -> Iterator[ast.Expr]:
    """``expr`` and every expression inside it, depth first (not inside the conditions it calls)."""
    yield expr
    children: tuple[ast.Expr, ...]
    match expr:
        case ast.Path() | ast.Literal() | ast.Call():
            children = ()
        case ast.ListExpr():
            children = expr.items
        case ast.Compare():
            children = (expr.left, expr.right)
        case ast.Member():
            children = (expr.item, expr.container)
        case ast.Not():
            children = (expr.operand,)
        case ast.And() | ast.Or():
            children = expr.operands
        case _:
            assert_never(expr)
    for child in children:
        yield from _subexpressions(child)


def _paths(expr: ast.Expr) -> Iterator[ast.Path]:
    return (e for e in _subexpressions(expr) if isinstance(e, ast.Path))


def _literal_comparisons(expr: ast.Expr) -> Iterator[tuple[ast.Path, ast.Literal]]:
    """(field, literal) pairs compared directly or by `in [...]` in a condition."""
    for e in _subexpressions(expr):
        if isinstance(e, ast.Compare):
            for a, b in ((e.left, e.right), (e.right, e.left)):
                if isinstance(a, ast.Path) and isinstance(b, ast.Literal):
                    yield a, b
        elif isinstance(e, ast.Member) and isinstance(e.item, ast.Path) and isinstance(e.container, ast.ListExpr):
            for item in e.container.items:
                if isinstance(item, ast.Literal):
                    yield e.item, item


def check(files: Sequence[ast.File], version: str = KARMADA_VERSION, strict: bool = False) -> list[Diagnostic]:
    """Every semantic problem of the rule set formed by ``files`` for Karmada ``version``, in source order;
    with ``strict``, each use of a fleetrules extension is an error too."""
    expect("files", files, (list, tuple), "a list of File objects from parse()")
    for file in files:
        expect("files[]", file, ast.File, "File objects from parse()")
    if version not in KARMADA_VERSIONS:
        raise UsageError(f"version: expected one of {', '.join(KARMADA_VERSIONS)}, found {version!r}")
    return sorted(_Checker(files, version, strict).run(), key=Diagnostic.sort_key)
