"""The checks of policies: Karmada's validation of a PropagationPolicy (pkg/util/validation/validation.go, its
messages word for word where a check mirrors one), and what fleetrules evaluates beyond it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import assert_never

from engine.checker.checking import GO_DURATION_SECONDS, INT32_MAX, INT64_MAX, Checking
from engine.codes import Code
from engine.errors import Span
from engine.kube import jsonpath_syntax as jsonpath
from engine.kube import validation as k8s
from engine.syntax import ast
from engine.syntax.schema import (
    DEPRECATED_PURGE_MODES,
    DYNAMIC_WEIGHTS,
    FAILOVER_KINDS,
    FIELD_SELECTOR_KEYS,
    KARMADA_VERSIONS,
    PURGE_MODES,
    REPLICA_MODES,
    SPREAD_FIELDS,
    TAINT_EFFECTS,
)

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


class PolicyChecks(Checking):
    """The checks of a policy's statements."""

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
