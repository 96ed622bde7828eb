"""Karmada ClusterTaintPolicy objects (pkg/apis/policy/v1alpha1/clustertaintpolicy_types.go) read as the taint
policies the ClusterTaintPolicy controller applies, with what Karmada's webhook refuses said in its words.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from engine.errors import Diagnostic
from engine.inputs.converting import Converting, PolicyObject
from engine.inputs.facts import MatchCondition, Taint, TaintPolicy, cluster_taint_problem, parse_time
from engine.kube.gojson import quote


class _TaintPolicyConverter(Converting):
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
