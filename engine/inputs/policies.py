"""Karmada PropagationPolicy / ClusterPropagationPolicy objects → policies of the rule language.

The translation produces the same AST as the DSL (so `fleetrules convert` prints it back as DSL),
with spans at the YAML lines the fields came from. API shape: pkg/apis/policy/v1alpha1/propagation_types.go.
Fields fleetrules does not evaluate are reported, not dropped.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from engine.codes import Code
from engine.errors import Diagnostic, Span, error, file_line, warning
from engine.inputs.facts import MatchCondition, Taint, TaintPolicy, cluster_taint_problem, parse_time
from engine.inputs.marks import Marks
from engine.inputs.yaml import load_text
from engine.kube.gojson import quote
from engine.syntax import ast
from engine.syntax.schema import DEPRECATED_PURGE_MODES, FIELD_SELECTOR_KEYS, SPREAD_FIELDS

POLICY_KINDS = ("PropagationPolicy", "ClusterPropagationPolicy")
_SELECTOR_NAMESPACE = "namespace of resource selector must be the same as the namespace of the policy"
_PLACEMENT = {
    "clusterAffinity", "clusterAffinities", "clusterTolerations", "spreadConstraints", "replicaScheduling",
    "workloadAffinity",
}  # fmt: skip
_SPEC = {"resourceSelectors", "placement", "failover", "propagateDeps", "priority", "preemption", "schedulePriority",
         "dependentOverrides", "schedulerName", "conflictResolution", "activationPreference", "suspension",
         "preserveResourcesOnDeletion", "association"}  # fmt: skip
_NOT_EVALUATED = {"dependentOverrides", "schedulerName", "conflictResolution", "suspension",
                  "preserveResourcesOnDeletion", "association"}  # fmt: skip


# spec fields fleetrules does not evaluate, at values where that changes nothing
_DEFAULTS: dict[str, tuple[Any, ...]] = {
    "conflictResolution": ("Abort",),
    "preserveResourcesOnDeletion": (False, None),
    "suspension": (None, {}),
    "dependentOverrides": (None, []),
    "association": (False, None),
}
# what the others do in Karmada, none of it placement or failover
_NO_PLACEMENT_EFFECT = {
    "conflictResolution": "conflictResolution decides whether Karmada takes over resources already in member clusters",
    "preserveResourcesOnDeletion": "preserveResourcesOnDeletion keeps member resources when the template is deleted",
    "suspension": "suspension pauses dispatching Works to member clusters",
    "association": "association is deprecated in favour of propagateDeps and read by no Karmada component",
    "dependentOverrides": "dependentOverrides makes the detector wait until these OverridePolicies exist; "
    "fleetrules evaluates as if they do (it does not read OverridePolicies)",
}


@dataclass(frozen=True)
class PolicyObject:
    """A PropagationPolicy or ClusterPropagationPolicy object, where it came from and its positions."""

    source: str  # FILE:LINE, or "object N" for a Python object
    obj: Mapping[str, Any]
    marks: Marks | None = None


def _mapping_of(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


class _Converter:
    def __init__(self, source: str, marks: Marks | None, problems: list[Diagnostic]) -> None:
        self.source = marks.file if marks is not None else source
        self.marks = marks
        self.problems = problems
        self.default_line = 0

    def span(self, obj: Any, key: Any = None, of_key: bool = False) -> Span:
        """Where ``obj`` (or its entry ``key``) stands; the object's line when not known."""
        position = self.marks.position(obj, key, of_key) if self.marks is not None else None
        if position is None:
            return Span(self.source, self.default_line, 1, self.default_line, 1)
        return Span(self.source, position.line, position.column, position.line, position.column)

    def field_span(self, obj: Any, path: str) -> Span:
        """The span of the field ``path`` ends in (``spec.priority``, ``values[2]``), inside ``obj``."""
        last = re.search(r"\[([0-9]+)\]$|([^.\[\]]+)$", path)
        if last is not None and isinstance(obj, (dict, list)):
            key: Any = int(last.group(1)) if last.group(1) else last.group(2)
            if (isinstance(obj, dict) and key in obj) or (isinstance(obj, list) and isinstance(key, int)):
                return self.span(obj, key)
        return self.span(obj)

    def fail(self, obj: Any, path: str, message: str) -> None:
        self.problems.append(
            error(f"{path}: {message}", self.field_span(obj, path), subject=self.source, code=Code.POLICY_YAML)
        )

    def warn(self, obj: Any, path: str, message: str) -> None:
        self.problems.append(
            warning(f"{path}: {message}", self.field_span(obj, path), subject=self.source, code=Code.POLICY_YAML)
        )

    def word(self, value: Any, obj: Any, path: str) -> ast.Word:
        if not isinstance(value, str):
            self.fail(obj, path, f"expected a string, found {value!r}")
            value = str(value)
        return ast.Word(value, span=self.field_span(obj, path))

    def _not_evaluated(self, spec: dict[str, Any], key: str) -> None:
        """A spec field fleetrules does not evaluate: say so, or why its default already is Karmada's."""
        value, path = spec[key], f"spec.{key}"
        if key == "schedulerName":
            if value != "default-scheduler":
                self.warn(
                    spec,
                    path,
                    f"bindings of this policy wait for scheduler {value!r}; fleetrules places them as Karmada's "
                    "default-scheduler would",
                )
        elif value in _DEFAULTS.get(key, ()):
            return  # Karmada's default, or nothing set: nothing differs
        elif key == "dependentOverrides":
            self.warn(spec, path, _NO_PLACEMENT_EFFECT[key])
        else:
            self.warn(spec, path, f"{_NO_PLACEMENT_EFFECT[key]}; it does not change placement or failover")

    def integer(self, obj: dict[str, Any], key: str, path: str, bits: int = 64) -> int | None:
        """``obj[key]`` as the API server takes an integer field: absent is None, any other type is the
        structural schema's error, and a value the field's Go type cannot hold is refused."""
        value = obj.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            kind = {bool: "boolean", str: "string", float: "number", list: "array", dict: "object"}.get(
                type(value), type(value).__name__
            )
            self.fail(obj, path, f'Invalid value: "{kind}": {path} in body must be of type integer: "{kind}"')
            return None
        if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
            self.fail(obj, path, f"Invalid value: {value}: must fit a {bits}-bit integer")
            return None
        return value

    def words(self, values: Any, obj: Any, path: str) -> tuple[ast.Word, ...]:
        if not isinstance(values, list):
            self.fail(obj, path, "expected a list")
            return ()
        return tuple(self.word(v, values, f"{path}[{i}]") for i, v in enumerate(values))

    def mapping(self, value: Any, parent: Any, path: str) -> dict[str, Any]:
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.fail(parent, path, "expected a mapping")
            return {}
        return value

    def sequence(self, value: Any, parent: Any, path: str) -> list[Any]:
        if value is None:
            return []
        if not isinstance(value, list):
            self.fail(parent, path, "expected a list")
            return []
        return value

    def known(self, obj: Mapping[str, Any], allowed: set[str], path: str) -> None:
        for key in obj:
            if key not in allowed:
                message = f"{path}.{key}: unknown field, not evaluated"
                self.problems.append(
                    warning(message, self.span(obj, key, of_key=True), subject=self.source, code=Code.POLICY_YAML)
                )

    # ------------------------------------------------------------ selectors
    def label_selector(self, raw: Any, parent: Any, path: str) -> ast.Selector:
        sel = self.mapping(raw, parent, path)
        self.known(sel, {"matchLabels", "matchExpressions"}, path)
        reqs = [
            ast.Requirement(
                self.word(k, sel, f"{path}.matchLabels"),
                ast.Op.EQUALS,
                (self.word(v, sel, f"{path}.matchLabels.{k}"),),
                span=self.span(sel),
            )
            for k, v in sorted(self.mapping(sel.get("matchLabels"), sel, f"{path}.matchLabels").items())
        ]
        reqs += self.expressions(sel.get("matchExpressions"), sel, f"{path}.matchExpressions")
        return ast.Selector(tuple(reqs), span=self.span(sel))

    def expressions(self, raw: Any, parent: Any, path: str) -> list[ast.Requirement]:
        ops = {"In": ast.Op.IN, "NotIn": ast.Op.NOT_IN, "Exists": ast.Op.EXISTS, "DoesNotExist": ast.Op.DOES_NOT_EXIST}
        out = []
        for i, item in enumerate(raw or []):
            expr = self.mapping(item, parent, f"{path}[{i}]")
            op = ops.get(expr.get("operator", ""))
            if op is None:
                self.fail(expr, f"{path}[{i}].operator", f"unsupported operator {expr.get('operator')!r}")
                continue
            values = self.words(expr.get("values", []), expr, f"{path}[{i}].values")
            out.append(
                ast.Requirement(self.word(expr.get("key"), expr, f"{path}[{i}].key"), op, values, span=self.span(expr))
            )
        return out

    def cluster_affinity(self, raw: dict[str, Any], name: ast.Word | None, path: str) -> ast.ClusterAffinity:
        """A ClusterAffinity; with a ``name``, a ClusterAffinityTerm (affinityName, overflowAffinities)."""
        fields = {"clusterNames", "exclude", "labelSelector", "fieldSelector"}
        self.known(raw, fields | ({"affinityName", "overflowAffinities"} if name is not None else set()), path)
        overflow = []
        for i, item in enumerate(self.sequence(raw.get("overflowAffinities") or [], raw, f"{path}.overflowAffinities")):
            where = f"{path}.overflowAffinities[{i}]"
            group = self.mapping(item, raw, where)
            self.known(group, fields | {"affinityName"}, where)
            group_name = self.word(group.get("affinityName"), group, f"{where}.affinityName")
            overflow.append(ast.Overflow(group_name, self.cluster_statements(group, where), span=self.span(group)))
        return ast.ClusterAffinity(name, self.cluster_statements(raw, path), tuple(overflow), span=self.span(raw))

    def cluster_statements(self, raw: dict[str, Any], path: str) -> tuple[ast.ClusterStmt, ...]:
        stmts: list[ast.ClusterStmt] = []
        if raw.get("clusterNames"):
            stmts.append(
                ast.ClusterList(
                    ast.ClusterField.NAMES,
                    self.words(raw["clusterNames"], raw, f"{path}.clusterNames"),
                    span=self.span(raw),
                )
            )
        if raw.get("exclude"):
            stmts.append(
                ast.ClusterList(
                    ast.ClusterField.EXCLUDE, self.words(raw["exclude"], raw, f"{path}.exclude"), span=self.span(raw)
                )
            )
        if raw.get("labelSelector") is not None:
            stmts.append(
                ast.ClusterSelector(
                    ast.ClusterField.LABELS,
                    self.label_selector(raw["labelSelector"], raw, f"{path}.labelSelector"),
                    span=self.span(raw["labelSelector"]),
                )
            )
        if raw.get("fieldSelector") is not None:
            fs = self.mapping(raw["fieldSelector"], raw, f"{path}.fieldSelector")
            problem = _field_selector_problem(fs.get("matchExpressions"))
            if problem is not None:  # ValidatePolicyFieldSelector: the first problem, of the whole selector
                self.fail(fs, f"{path}.fieldSelector", problem)
                return tuple(stmts)
            reqs = self.expressions(fs.get("matchExpressions"), fs, f"{path}.fieldSelector.matchExpressions")
            stmts.append(
                ast.ClusterSelector(
                    ast.ClusterField.FIELDS, ast.Selector(tuple(reqs), span=self.span(fs)), span=self.span(fs)
                )
            )
        return tuple(stmts)

    def schedule_priority(self, spec: dict[str, Any]) -> list[ast.PolicyStmt]:
        """spec.schedulePriority as the CRD admits it: priorityClassSource KubePriorityClass (its only value) and a
        priorityClassName."""
        if spec.get("schedulePriority") is None:
            return []
        raw = self.mapping(spec["schedulePriority"], spec, "spec.schedulePriority")
        self.known(raw, {"priorityClassSource", "priorityClassName"}, "spec.schedulePriority")
        source = raw.get("priorityClassSource")
        if source != "KubePriorityClass":
            found = json.dumps(source)
            message = f'Unsupported value: {found}: supported values: "KubePriorityClass"'
            self.fail(raw, "spec.schedulePriority.priorityClassSource", message)
            return []
        name = raw.get("priorityClassName")
        if not isinstance(name, str) or not name:
            self.fail(raw, "spec.schedulePriority.priorityClassName", "Required value")
            return []
        span = self.span(raw, "priorityClassName")
        return [ast.SchedulePriority(ast.Word(name, span=span), span=self.span(spec, "schedulePriority"))]

    def modes(self, spec: dict[str, Any]) -> list[ast.PolicyStmt]:
        """spec.preemption and spec.activationPreference, checked against their enums as the CRD does
        (an empty activationPreference is the default)."""
        out: list[ast.PolicyStmt] = []
        for key, modes, make in (
            ("preemption", ast.PREEMPTION_MODES, ast.Preemption),
            ("activationPreference", ast.ACTIVATION_MODES, ast.Activation),
        ):
            value = spec.get(key)
            if value is None or (key == "activationPreference" and value == ""):
                continue
            word = {karmada: ours for ours, karmada in modes.items()}.get(value) if isinstance(value, str) else None
            if word is None:
                supported = ", ".join(json.dumps(v) for v in modes.values())
                self.fail(spec, f"spec.{key}", f"Unsupported value: {json.dumps(value)}: supported values: {supported}")
                continue
            out.append(make(ast.Word(word, span=self.span(spec, key)), span=self.span(spec, key)))
        return out

    # ------------------------------------------------------------ the policy
    def policy(self, obj: dict[str, Any], original: Any = None) -> list[ast.Policy]:
        """The policy of ``obj`` (a copy of ``original``, the object as read, whose position the marks know)."""
        meta = self.mapping(obj.get("metadata"), obj, "metadata")
        position = self.marks.position(original if original is not None else obj) if self.marks is not None else None
        self.default_line = position.line if position is not None else 0
        name = self.word(meta.get("name"), meta, "metadata.name")
        namespace = None
        if obj.get("kind") == "PropagationPolicy":  # identity NAMESPACE/NAME; no namespace given: default
            namespace = str(meta.get("namespace") or "default")
            name = ast.Word(f"{namespace}/{name.value}", span=name.span)
        spec = self.mapping(obj.get("spec"), obj, "spec")
        self.known(spec, _SPEC, "spec")
        for key in sorted(_NOT_EVALUATED & set(spec)):
            self._not_evaluated(spec, key)
        placement = self.mapping(spec.get("placement"), spec, "spec.placement")
        stmts: list[ast.PolicyStmt] = []
        if spec.get("priority") is not None:
            priority = spec["priority"]
            if isinstance(priority, int) and not isinstance(priority, bool):
                stmts.append(ast.Priority(ast.Number(priority, span=self.span(spec, "priority")), span=self.span(spec)))
            else:
                self.fail(spec, "spec.priority", f"expected an integer, found {priority!r}")
        stmts += self.modes(spec)
        stmts += self.schedule_priority(spec)
        if spec.get("propagateDeps") is not None and not isinstance(spec["propagateDeps"], bool):
            self.fail(spec, "spec.propagateDeps", f"expected true or false, found {json.dumps(spec['propagateDeps'])}")
        elif spec.get("propagateDeps") is True and _mapping_of(spec.get("failover")).get("application") is None:
            span = self.span(spec, "propagateDeps")  # (application failover implies it: not said twice)
            stmts.append(ast.PropagateDeps(ast.Word("dependencies", span=span), span=span))
        stmts += self.placement(placement)
        failover = self.mapping(spec.get("failover"), spec, "spec.failover")
        if failover.get("application") is not None and spec.get("propagateDeps") is not True:
            found = json.dumps(spec.get("propagateDeps", False))
            self.fail(
                spec,
                "spec.propagateDeps",
                f"Invalid value: {found}: application failover is set, propagateDeps must be true",
            )
        stmts += self.failover(failover)
        self.preemption_names(spec)
        self.suspension(spec)
        selects = self.selects(spec, namespace)
        return [ast.Policy(name, (*selects, *stmts), span=self.span(obj))] if selects else []

    def preemption_names(self, spec: dict[str, Any]) -> None:
        """validateResourceSelectorsIfPreemptionEnabled: with preemption Always, every selector names a resource."""
        if spec.get("preemption") != "Always" or not isinstance(spec.get("resourceSelectors"), list):
            return
        for i, sel in enumerate(spec["resourceSelectors"]):
            if isinstance(sel, dict) and not sel.get("name"):
                why = (
                    "name cannot be empty if preemption is Always, the empty name may cause unexpected resources "
                    "preemption"
                )
                self.fail(sel, f"spec.resourceSelectors[{i}].name", f'Invalid value: "": {why}')

    def suspension(self, spec: dict[str, Any]) -> None:
        """validateSuspension (its path names the field twice, as Karmada's does)."""
        suspension = spec.get("suspension")
        if not isinstance(suspension, dict):
            return
        on = suspension.get("dispatchingOnClusters")
        if suspension.get("dispatching") is True and isinstance(on, dict) and on.get("clusterNames"):
            why = "suspension dispatching cannot co-exist with dispatchingOnClusters.clusterNames"
            self.fail(suspension, "spec.suspension.suspension", why)

    def placement(self, placement: dict[str, Any]) -> list[ast.PolicyStmt]:
        """spec.placement as policy statements."""
        self.known(placement, _PLACEMENT, "spec.placement")
        stmts: list[ast.PolicyStmt] = []
        if placement.get("clusterAffinity") is not None:
            stmts.append(
                self.cluster_affinity(
                    self.mapping(placement["clusterAffinity"], placement, "clusterAffinity"),
                    None,
                    "spec.placement.clusterAffinity",
                )
            )
        for i, term in enumerate(placement.get("clusterAffinities") or []):
            t = self.mapping(term, placement, f"spec.placement.clusterAffinities[{i}]")
            stmts.append(
                self.cluster_affinity(
                    t,
                    self.word(t.get("affinityName"), t, f"spec.placement.clusterAffinities[{i}].affinityName"),
                    f"spec.placement.clusterAffinities[{i}]",
                )
            )
        for i, tol in enumerate(placement.get("clusterTolerations") or []):
            toleration = self.toleration(
                self.mapping(tol, placement, f"clusterTolerations[{i}]"), f"spec.placement.clusterTolerations[{i}]"
            )
            if toleration is not None:
                stmts.append(toleration)
        spreads: list[ast.PolicyStmt] = []
        before = len(self.problems)
        raw_spreads = placement.get("spreadConstraints") or []
        for i, sc in enumerate(raw_spreads):
            spreads += self.spread(
                self.mapping(sc, placement, f"spreadConstraints[{i}]"), f"spec.placement.spreadConstraints[{i}]"
            )
        if not any(p.is_error for p in self.problems[before:]):  # the CRD admitted them: the webhook's turn
            problems = _spread_problems(raw_spreads)
            for where, message in problems:  # at the constraint, or at the list for what is said of all
                self.fail(raw_spreads if where.endswith("]") else placement, where, message)
            stmts += [] if problems else spreads  # refused: none is evaluated (nor said wrong of again)
        if placement.get("replicaScheduling") is not None:
            rs = self.mapping(placement["replicaScheduling"], placement, "spec.placement.replicaScheduling")
            stmts += self.replica_scheduling(rs, "spec.placement.replicaScheduling")
        stmts += self.workload_affinity(self.mapping(placement.get("workloadAffinity"), placement, "workloadAffinity"))
        return stmts

    def replica_scheduling(self, rs: dict[str, Any], path: str) -> list[ast.Replicas]:
        """replicaScheduling as a `replicas` statement (propagation_types.go ReplicaSchedulingStrategy): the type
        defaults to
        Divided when the object is given, the division preference to Weighted (the webhook)."""
        self.known(rs, {"replicaSchedulingType", "replicaDivisionPreference", "weightPreference"}, path)
        span = self.span(rs)
        kind = rs.get("replicaSchedulingType") or "Divided"
        if kind == "Duplicated":
            return [ast.Replicas(ast.Word("duplicated", span=span), span=span)]
        if kind != "Divided":
            self.fail(
                rs,
                f"{path}.replicaSchedulingType",
                f'Unsupported value: {json.dumps(kind)}: supported values: "Duplicated", "Divided"',
            )
            return []
        divided = ast.Word("divided", span=span)
        preference = rs.get("replicaDivisionPreference") or "Weighted"
        if preference == "Aggregated":
            return [ast.Replicas(ast.Word("aggregated", span=span), span=span)]
        if preference != "Weighted":
            where = f"{path}.replicaDivisionPreference"
            self.fail(
                rs, where, f'Unsupported value: {json.dumps(preference)}: supported values: "Aggregated", "Weighted"'
            )
            return []
        if rs.get("weightPreference") is None:
            return [ast.Replicas(divided, span=span)]
        wp = self.mapping(rs["weightPreference"], rs, f"{path}.weightPreference")
        self.known(wp, {"staticWeightList", "dynamicWeight"}, f"{path}.weightPreference")
        if wp.get("dynamicWeight"):
            if wp["dynamicWeight"] != "AvailableReplicas":
                where = f"{path}.weightPreference.dynamicWeight"
                self.fail(
                    wp,
                    where,
                    f'Unsupported value: {json.dumps(wp["dynamicWeight"])}: supported values: "AvailableReplicas"',
                )
                return []
            if wp.get("staticWeightList"):
                self.warn(wp, f"{path}.weightPreference.staticWeightList", "ignored: dynamicWeight is set")
            return [ast.Replicas(divided, ast.Word("available", span=span), span=span)]
        weights = []
        for i, raw in enumerate(
            self.sequence(wp.get("staticWeightList"), wp, f"{path}.weightPreference.staticWeightList")
        ):
            where = f"{path}.weightPreference.staticWeightList[{i}]"
            entry = self.mapping(raw, wp, where)
            self.known(entry, {"targetCluster", "weight"}, where)
            target = self.cluster_affinity(
                self.mapping(entry.get("targetCluster"), entry, f"{where}.targetCluster"),
                None,
                f"{where}.targetCluster",
            )
            weight = entry.get("weight")
            if isinstance(weight, bool) or not isinstance(weight, int) or weight < 1:
                self.fail(
                    entry,
                    f"{where}.weight",
                    f"Invalid value: {json.dumps(weight)}: should be greater than or equal to 1",
                )
                continue
            weights.append(
                ast.StaticWeight(
                    target.statements, ast.Number(weight, span=self.span(entry, "weight")), span=self.span(entry)
                )
            )
        return [ast.Replicas(divided, ast.Word("weight", span=span), tuple(weights), span=span)]

    def selects(self, spec: dict[str, Any], namespace: str | None) -> list[ast.Select]:
        """resourceSelectors are OR-ed; those differing only in kind share one select block."""
        groups: dict[tuple[str, str, str], list[tuple[ast.Word, Any]]] = {}
        selectors = spec.get("resourceSelectors")
        if not isinstance(selectors, list) or not selectors:
            self.fail(spec, "spec.resourceSelectors", "required")
            return []
        for i, raw in enumerate(selectors):
            sel = self.mapping(raw, spec, f"spec.resourceSelectors[{i}]")
            self.known(
                sel, {"apiVersion", "kind", "namespace", "name", "labelSelector"}, f"spec.resourceSelectors[{i}]"
            )
            ns = sel.get("namespace") or namespace or ""
            if namespace is not None and ns != namespace:  # ValidatePropagationSpec, after the webhook's default
                path = f"spec.resourceSelectors[{i}].namespace"
                self.fail(sel, path, f"Invalid value: {json.dumps(ns)}: {_SELECTOR_NAMESPACE}")
                ns = namespace  # said once: the rule check would say it again of the converted select
            key = (str(ns), str(sel.get("name") or ""), repr(sel.get("labelSelector")))
            groups.setdefault(key, []).append(
                (self.word(sel.get("kind"), sel, f"spec.resourceSelectors[{i}].kind"), sel)
            )
        out = []
        for (ns, name, _), members in groups.items():
            first = members[0][1]
            stmts: list[ast.SelectStmt] = [
                ast.SelectList(ast.SelectField.KIND, tuple(dict.fromkeys(k for k, _ in members)), span=self.span(first))
            ]
            if ns:
                stmts.append(
                    ast.SelectList(
                        ast.SelectField.NAMESPACE, (ast.Word(ns, span=self.span(first)),), span=self.span(first)
                    )
                )
            if name:
                stmts.append(
                    ast.SelectList(
                        ast.SelectField.NAME, (ast.Word(name, span=self.span(first)),), span=self.span(first)
                    )
                )
            if first.get("labelSelector") is not None:
                stmts.append(
                    ast.SelectLabels(
                        self.label_selector(first["labelSelector"], first, "labelSelector"), span=self.span(first)
                    )
                )
            out.append(ast.Select(tuple(stmts), span=self.span(first)))
        return out

    def toleration(self, tol: dict[str, Any], path: str) -> ast.Toleration | None:
        self.known(tol, {"key", "operator", "value", "effect", "tolerationSeconds"}, path)
        operator = tol.get("operator") or "Equal"
        if operator in ("Lt", "Gt"):  # validateClusterTolerations
            supported = 'supported values: "", "Exists", "Equal"'
            self.fail(tol, f"{path}.operator", f"Unsupported value: {json.dumps(operator)}: {supported}")
        elif operator not in ("Equal", "Exists"):  # admitted (no enum); Toleration.ToleratesTaint matches nothing
            message = f"operator {operator!r} is neither Exists nor Equal: Karmada admits it, and it tolerates no taint"
            self.warn(tol, f"{path}.operator", message)
            return None
        key = self.word(tol["key"], tol, f"{path}.key") if tol.get("key") else None
        value = self.word(tol.get("value", ""), tol, f"{path}.value") if operator == "Equal" else None
        effect = self.word(tol["effect"], tol, f"{path}.effect") if tol.get("effect") else None
        seconds = self.integer(tol, "tolerationSeconds", f"{path}.tolerationSeconds")
        duration = ast.Duration(seconds, span=self.span(tol)) if seconds is not None else None
        return ast.Toleration(key, value, effect, duration, span=self.span(tol))

    def spread(self, sc: dict[str, Any], path: str) -> list[ast.Spread]:
        self.known(sc, {"spreadByField", "spreadByLabel", "maxGroups", "minGroups"}, path)
        by = sc.get("spreadByField")
        if by is not None and by not in SPREAD_FIELDS:  # the CRD's enum, checked before the webhook
            supported = ", ".join(json.dumps(f) for f in SPREAD_FIELDS)
            where = f"{path}.spreadByField"
            self.fail(sc, where, f"Unsupported value: {json.dumps(by)}: supported values: {supported}")
            return []
        if sc.get("spreadByLabel") and sc.get("spreadByField"):
            return []  # refused by the webhook (_spread_problems)
        if sc.get("spreadByLabel"):
            self.warn(
                sc, f"{path}.spreadByLabel", "spreadByLabel is not implemented by Karmada's scheduler; not evaluated"
            )
            return []
        field = self.word(by or "cluster", sc, f"{path}.spreadByField")
        low = self.integer(sc, "minGroups", f"{path}.minGroups")
        high = self.integer(sc, "maxGroups", f"{path}.maxGroups")
        return [
            ast.Spread(
                field,
                ast.Number(low, span=self.span(sc)) if low is not None else None,
                ast.Number(high, span=self.span(sc)) if high is not None else None,
                span=self.span(sc),
            )
        ]

    def workload_affinity(self, wa: dict[str, Any]) -> list[ast.WorkloadTerm]:
        self.known(wa, {"affinity", "antiAffinity"}, "spec.placement.workloadAffinity")
        out = []
        for field, anti in (("affinity", False), ("antiAffinity", True)):
            term = self.mapping(wa.get(field), wa, f"workloadAffinity.{field}")
            if term:
                key = self.word(
                    term.get("groupByLabelKey"), term, f"spec.placement.workloadAffinity.{field}.groupByLabelKey"
                )
                out.append(ast.WorkloadTerm(False, anti, key, None, None, span=self.span(term)))
        return out

    def failover(self, fo: dict[str, Any]) -> list[ast.Failover]:
        self.known(fo, {"application", "cluster"}, "spec.failover")
        out = []
        for kind in ("application", "cluster"):
            block = self.mapping(fo.get(kind), fo, f"spec.failover.{kind}")
            if fo.get(kind) is None:
                continue
            path = f"spec.failover.{kind}"
            self.known(block, {"decisionConditions", "purgeMode", "gracePeriodSeconds", "statePreservation"}, path)
            stmts: list[ast.FailoverStmt] = []
            conditions = self.mapping(block.get("decisionConditions"), block, f"{path}.decisionConditions")
            seconds = self.integer(conditions, "tolerationSeconds", f"{path}.decisionConditions.tolerationSeconds", 32)
            if seconds is not None and seconds < 0:
                where = f"{path}.decisionConditions.tolerationSeconds"
                self.fail(block, where, f"Invalid value: {seconds}: must be greater than or equal to 0")
            elif seconds is not None:
                stmts.append(
                    ast.FailoverToleration(ast.Duration(seconds, span=self.span(block)), span=self.span(block))
                )
            if block.get("purgeMode"):
                stmts.append(
                    ast.Purge(self.word(block["purgeMode"], block, f"{path}.purgeMode"), span=self.span(block))
                )
            grace = self.integer(block, "gracePeriodSeconds", f"{path}.gracePeriodSeconds", 32)
            purge = block.get("purgeMode") or "Gracefully"  # the CRD's default
            refused = False
            if grace is not None and kind == "application" and DEPRECATED_PURGE_MODES.get(purge, purge) != "Gracefully":
                # ValidateApplicationFailover
                where = f"{path}.gracePeriodSeconds"
                self.fail(block, where, f"Invalid value: {grace}: only takes effect when purgeMode is gracefully")
                refused = True
            if grace is not None and kind == "application" and grace <= 0:
                self.fail(block, f"{path}.gracePeriodSeconds", f"Invalid value: {grace}: must be greater than 0")
                refused = True
            if grace is not None and not refused:
                stmts.append(ast.Grace(ast.Duration(grace, span=self.span(block)), span=self.span(block)))
            preservation = self.mapping(block.get("statePreservation"), block, f"{path}.statePreservation")
            for i, rule in enumerate(preservation.get("rules") or []):
                r = self.mapping(rule, preservation, f"{path}.statePreservation.rules[{i}]")
                alias = self.word(r.get("aliasLabelName"), r, f"{path}.statePreservation.rules[{i}].aliasLabelName")
                stmts.append(
                    ast.Preserve(
                        alias,
                        self.word(r.get("jsonPath"), r, f"{path}.statePreservation.rules[{i}].jsonPath"),
                        span=self.span(r),
                    )
                )
            out.append(ast.Failover(ast.Word(kind, span=self.span(block)), tuple(stmts), span=self.span(block)))
        return out


def _field_selector_problem(expressions: Any) -> str | None:
    """ValidatePolicyFieldSelector (pkg/util/validation/validation.go): key, then operator, of each expression."""
    for expr in expressions if isinstance(expressions, list) else []:
        if not isinstance(expr, dict):
            continue
        key, operator = expr.get("key"), expr.get("operator")
        if key not in FIELD_SELECTOR_KEYS:
            return f"unsupported key {_go_quote(key)}, must be provider, region, or zone"
        if operator not in ("In", "NotIn"):
            return f"unsupported operator {_go_quote(operator)}, must be In or NotIn"
    return None


def _spread_problems(constraints: Any) -> list[tuple[str, str]]:
    """ValidateSpreadConstraint (pkg/util/validation/validation.go) on the constraints as the mutating webhook
    leaves them (SetDefaultSpreadConstraints: spreadByField cluster when neither field nor label is set,
    minGroups 0 made 1): (path, message) of each of its errors, in its order and words, each value as the
    API server prints it (JSON, Go's field order, empty fields left out)."""
    if not isinstance(constraints, list) or not all(isinstance(c, dict) for c in constraints):
        return []
    shown: list[dict[str, Any]] = []
    for c in constraints:
        by, label = c.get("spreadByField") or "", c.get("spreadByLabel") or ""
        low, high = c.get("minGroups") or 0, c.get("maxGroups") or 0
        if not isinstance(low, int) or not isinstance(high, int) or isinstance(low, bool) or isinstance(high, bool):
            return []  # the CRD's type error, said where the integer is read
        entry = {"spreadByField": by or ("" if label else "cluster"), "spreadByLabel": label}
        entry |= {"maxGroups": high, "minGroups": low or 1}
        shown.append({k: v for k, v in entry.items() if v})
    whole = "spec.placement.spreadConstraints"
    listed = json.dumps(shown, separators=(",", ":"))
    out: list[tuple[str, str]] = []
    marked: dict[str, bool] = {}  # spreadByField → whether "multiple" was said of it
    for i, c in enumerate(shown):
        value = f"Invalid value: {json.dumps(c, separators=(',', ':'))}: "
        by, low, high = c.get("spreadByField", ""), c.get("minGroups", 0), c.get("maxGroups", 0)
        if by and c.get("spreadByLabel"):
            out.append((f"{whole}[{i}]", value + "spreadByLabel should not co-exist with spreadByField"))
        if low < 0:
            out.append((f"{whole}[{i}]", value + "minGroups lower than 0 is not allowed"))
        if high < 0:
            out.append((f"{whole}[{i}]", value + "maxGroups lower than 0 is not allowed"))
        if 0 < high < low:
            out.append((f"{whole}[{i}]", value + "maxGroups lower than minGroups is not allowed"))
        if by:
            if marked.get(by) is False:
                out.append((whole, f"Invalid value: {listed}: multiple {by} spread constraints are not allowed"))
                marked[by] = True
            marked.setdefault(by, False)
    if marked and "cluster" not in marked:
        detail = "the cluster spread constraint must be enabled in one of the constraints"
        out.append((whole, f"Invalid value: {listed}: {detail} in case of SpreadByField is enabled"))
    return out


def _go_quote(value: Any) -> str:
    """Go's %q of a string field (a missing one is empty)."""
    return quote("" if value is None else str(value))


class _TaintPolicyConverter(_Converter):
    def taint_policy(self, obj: dict[str, Any]) -> TaintPolicy | None:
        """A ClusterTaintPolicy as its CRD and webhook admit it (pkg/webhook/clustertaintpolicy validating.go
        validatePolicyTaints); None when refused."""
        before = len(self.problems)
        meta = self.mapping(obj.get("metadata"), obj, "metadata")
        self.default_line = self.span(obj).line
        if obj.get("spec") is None:
            self.fail(obj, "spec", "Required value")
            return None
        spec = self.mapping(obj.get("spec"), obj, "spec")
        self.known(spec, {"targetClusters", "addOnConditions", "removeOnConditions", "taints"}, "spec")
        targets = None
        if spec.get("targetClusters") is not None:
            raw = self.mapping(spec["targetClusters"], spec, "spec.targetClusters")
            targets = self.cluster_affinity(raw, None, "spec.targetClusters").statements
        add_on = self.match_conditions(spec, "addOnConditions")
        remove_on = self.match_conditions(spec, "removeOnConditions")
        taints: list[Taint] = []
        if spec.get("taints") is None:
            self.fail(spec, "spec.taints", "Required value")
        elif not self.sequence(spec["taints"], spec, "spec.taints") and isinstance(spec["taints"], list):
            self.fail(spec, "spec.taints", "Invalid value: 0: spec.taints in body should have at least 1 items")
        for i, raw_taint in enumerate(self.sequence(spec.get("taints"), spec, "spec.taints")):
            path = f"spec.taints[{i}]"
            t = self.mapping(raw_taint, spec["taints"], path)
            self.known(t, {"key", "value", "effect"}, path)
            for required in ("key", "effect"):
                if not isinstance(t.get(required), str):
                    self.fail(t, f"{path}.{required}", "Required value")
            key, effect = str(t.get("key", "")), str(t.get("effect", ""))
            taint = Taint(key, str(t.get("value") or ""), effect)
            problem = cluster_taint_problem(taint)
            if effect and problem:  # admitted (no enum, no format), but no cluster can carry it
                self.warn(
                    t,
                    path,
                    f"a Cluster refuses this taint ({problem}: ValidateClusterTaints): the controller's update of "
                    "any cluster this policy would taint fails, and that cluster keeps its taints",
                )
            taints.append(taint)
        for i, taint in enumerate(taints):
            if any((u.key, u.effect) == (taint.key, taint.effect) for u in taints[i + 1 :]):
                message = f"Duplicate taint with the same key({taint.key}) and effect({taint.effect}) is not allowed"
                self.fail(spec["taints"], f"spec.taints[{i}]", f"Duplicate value: {quote(message)}")
        if any(p.is_error for p in self.problems[before:]):
            return None
        if any(t.effect == "NoExecute" for t in taints):
            self.warn(
                spec,
                "spec.taints",
                "Karmada's webhook admits a NoExecute taint in a ClusterTaintPolicy only when it runs with "
                "--allow-no-execute-taint-policy (off by default); taken as admitted",
            )
        created = None
        if isinstance(meta.get("creationTimestamp"), str):
            try:
                created = parse_time(meta["creationTimestamp"])
            except ValueError as exc:
                self.fail(meta, "metadata.creationTimestamp", str(exc))
                return None
        span = self.span(obj)
        return TaintPolicy(
            name=str(meta.get("name", "")),
            created=created,
            targets=targets,
            add_on=add_on,
            remove_on=remove_on,
            taints=tuple(taints),
            source=f"{span.file}:{span.line}",
        )

    def match_conditions(self, spec: dict[str, Any], key: str) -> tuple[MatchCondition, ...]:
        out = []
        for i, raw in enumerate(self.sequence(spec.get(key), spec, f"spec.{key}")):
            path = f"spec.{key}[{i}]"
            m = self.mapping(raw, spec[key], path)
            self.known(m, {"conditionType", "operator", "statusValues"}, path)
            for required in ("conditionType", "operator", "statusValues"):
                if m.get(required) is None:
                    self.fail(m, f"{path}.{required}", "Required value")
            if m.get("operator") not in (None, "In", "NotIn"):  # no enum: admitted, and matches nothing
                self.warn(
                    m,
                    f"{path}.operator",
                    f"{m['operator']!r} is neither In nor NotIn: these conditions "
                    "never match (conditionMatches: unsupported MatchCondition operator)",
                )
            values = self.words(m.get("statusValues") or [], m, f"{path}.statusValues")
            out.append(
                MatchCondition(
                    str(m.get("conditionType", "")), str(m.get("operator", "")), tuple(v.value for v in values)
                )
            )
        return tuple(out)


def convert_taint_policies(objects: Iterable[PolicyObject]) -> tuple[list[TaintPolicy], list[Diagnostic]]:
    """ClusterTaintPolicy objects, in the order their controller applies them: by creationTimestamp (a policy
    without one first), then by name (Karmada's sort.Slice leaves equal times in the informer's order)."""
    problems: list[Diagnostic] = []
    policies = []
    for o in objects:
        policy = _TaintPolicyConverter(o.source, o.marks, problems).taint_policy(dict(o.obj))
        if policy is not None:
            policies.append(policy)
    earliest = dt.datetime.min.replace(tzinfo=dt.UTC)
    return sorted(policies, key=lambda p: (p.created or earliest, p.name)), problems


def convert_objects(objects: Iterable[PolicyObject]) -> tuple[list[ast.Policy], list[Diagnostic]]:
    problems: list[Diagnostic] = []
    policies: list[ast.Policy] = []
    for o in objects:
        policies += _Converter(o.source, o.marks, problems).policy(dict(o.obj), o.obj)
    return policies, problems


def policy_file(shown: str, text: str) -> tuple[ast.File | None, list[Diagnostic], int]:
    """The PropagationPolicies and ClusterPropagationPolicies of a YAML/JSON file, as a rule file, the problems of
    its policy objects (its ClusterTaintPolicies' too, which are checked here and read as facts), and how many
    policy objects of the three kinds it holds. A snapshot holds other kinds too (``kind: List`` included): those
    are facts, and are passed over here."""
    documents, problems = load_text(text, shown)
    if problems:  # invalid YAML: nothing of the file is used
        return None, problems, 0
    objects: list[PolicyObject] = []
    taint_policies: list[PolicyObject] = []
    for document in documents:
        value = document.value
        items = value.get("items") if isinstance(value, dict) and value.get("kind") == "List" else [value]
        for item in items if isinstance(items, list) else []:
            if isinstance(item, dict) and item.get("kind") in POLICY_KINDS:
                objects.append(PolicyObject(shown, item, document.marks))
            elif isinstance(item, dict) and item.get("kind") == "ClusterTaintPolicy":
                taint_policies.append(PolicyObject(shown, item, document.marks))
            elif item is not None and not isinstance(item, dict):
                problems.append(
                    error(f"document {document.index} is not an object", document.span(), code=Code.POLICY_YAML)
                )
    policies, converted = convert_objects(objects)
    _, tainting = convert_taint_policies(taint_policies)
    tree = ast.File(items=tuple(policies), path=shown, span=Span(shown, 1, 1, 1, 1))
    return tree, problems + converted + tainting, len(objects) + len(taint_policies)


def placement_statements(
    placement: Mapping[str, Any], source: str = "<applied-placement>"
) -> tuple[ast.PolicyStmt, ...] | None:
    """A Placement as Karmada serialises it (the applied-placement annotation) as policy statements, to
    compare with a policy's; None when it is not one. ``source``: where it was read (``FILE:LINE``), for
    the statements' spans."""
    problems: list[Diagnostic] = []
    stmts = _converter_at(source, problems).placement(dict(placement))
    return None if any(p.is_error for p in problems) else tuple(stmts)


def failover_statements(failover: Mapping[str, Any], source: str) -> tuple[ast.Failover, ...] | None:
    """A binding's spec.failover (a FailoverBehavior, as a policy's) as `failover` blocks; None when it is
    not one."""
    problems: list[Diagnostic] = []
    stmts = _converter_at(source, problems).failover(dict(failover))
    return None if any(p.is_error for p in problems) else tuple(stmts)


def _converter_at(source: str, problems: list[Diagnostic]) -> _Converter:
    """A converter whose statements stand at ``source`` (``FILE:LINE``, or a name)."""
    file, line = file_line(source)
    converter = _Converter(file, None, problems)
    converter.default_line = line
    return converter
