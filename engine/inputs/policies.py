"""Karmada PropagationPolicy / ClusterPropagationPolicy objects → policies of the rule language.

The translation produces the same AST as the DSL (so `fleetrules convert` prints it back as DSL),
with spans at the YAML lines the fields came from. API shape: pkg/apis/policy/v1alpha1/propagation_types.go.
Fields fleetrules does not evaluate are reported, not dropped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from engine.codes import Code
from engine.errors import Diagnostic, Span, error, file_line
from engine.inputs.converting import Converting, PolicyObject, mapping_of
from engine.inputs.taint_policies import convert_taint_policies
from engine.inputs.yaml import load_text
from engine.syntax import ast
from engine.syntax.schema import DEPRECATED_PURGE_MODES, SPREAD_FIELDS

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


class _Converter(Converting):
    """A PropagationPolicy or ClusterPropagationPolicy object read as policies of the rule language."""

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
        elif spec.get("propagateDeps") is True and mapping_of(spec.get("failover")).get("application") is None:
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
