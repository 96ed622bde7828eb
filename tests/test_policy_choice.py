"""Which policy claims a workload: the cases of karmada pkg/detector/compare_test.go
(Test_getHighestPriorityPropagationPolicies), the detector's order (pkg/detector/policy.go
propagateResource: a claim first, then PropagationPolicies of the namespace, then
ClusterPropagationPolicies) and policy identity (NAMESPACE/NAME)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from engine import evaluate, load_facts, load_rules
from engine.karmada.gates import Controllers

META: dict[str, Any] = {"name": "nginx", "namespace": "test"}
NGINX: dict[str, Any] = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": META}
NGINX_LABELLED = {**NGINX, "metadata": {**META, "labels": {"app": "nginx"}}}
CLUSTER = {"apiVersion": "cluster.karmada.io/v1alpha1", "kind": "Cluster", "metadata": {"name": "m1"}}


def chosen(tmp_path: Path, rules: str, *objects: dict[str, Any]) -> str | None:
    (tmp_path / "rules.fr").write_text(rules)
    result = evaluate(load_rules([tmp_path / "rules.fr"]), load_facts(objects=[CLUSTER, *objects]))
    return result.placements[0].policy if result.placements else None


BY_NAME = "select { kind Deployment name nginx }"
BY_LABEL = "select { kind Deployment labels { app = nginx } }"
ALL = "select { kind Deployment }"

CASES = [
    # compare_test.go "mo policy match for resource": the workload is in another namespace
    ("no policy of the workload's namespace", f"policy test01/by-name {{ {BY_NAME} }}", None),
    # "different implicit priority policy": a name match beats a label match beats a match of everything
    (
        "name over label over all",
        f"policy test/match-all {{ {ALL} }}\npolicy test/match-with-label {{ {BY_LABEL} }}\n"
        f"policy test/match-with-name {{ {BY_NAME} }}",
        "test/match-with-name",
    ),
    # "same implicit priority policy": the alphabetically first name
    (
        "same implicit priority: by name",
        f"policy test/b-pp {{ {BY_NAME} }}\npolicy test/a-pp {{ {BY_NAME} }}",
        "test/a-pp",
    ),
    # "one policy with implicit priority, one policy with explicit priority 1"
    (
        "explicit priority first",
        f"policy test/a-pp {{ {BY_NAME} }}\npolicy test/b-pp {{ {BY_NAME} priority 1 }}",
        "test/b-pp",
    ),
    # "explicit priority 1 (name match), explicit priority 2 (label selector match)"
    (
        "a higher explicit priority beats a better match",
        f"policy test/a-pp {{ {BY_NAME} priority 1 }}\npolicy test/b-pp {{ {BY_LABEL} priority 2 }}",
        "test/b-pp",
    ),
    # "two policies with explicit priority 1 (name match), select the one with lower alphabetical order"
    (
        "equal explicit and implicit priority: by name",
        f"policy test/b-pp {{ {BY_NAME} priority 1 }}\npolicy test/a-pp {{ {BY_NAME} priority 1 }}",
        "test/a-pp",
    ),
    # "explicit priority 1 (name match), explicit priority 1 (label selector match)"
    (
        "equal explicit priority: the better match",
        f"policy test/a-pp {{ {BY_LABEL} priority 1 }}\npolicy test/b-pp {{ {BY_NAME} priority 1 }}",
        "test/b-pp",
    ),
    # "explicit priority -1 (name match), implicit priority (label selector match)"
    (
        "a negative explicit priority loses to the default 0",
        f"policy test/a-pp {{ {BY_NAME} priority -1 }}\npolicy test/b-pp {{ {BY_LABEL} }}",
        "test/b-pp",
    ),
    # propagateResource: a PropagationPolicy of the namespace before any ClusterPropagationPolicy
    (
        "a PropagationPolicy before a ClusterPropagationPolicy, whatever the priority",
        f"policy cluster-wide {{ {BY_NAME} priority 100 }}\npolicy test/local {{ {ALL} }}",
        "test/local",
    ),
    (
        "a ClusterPropagationPolicy when no PropagationPolicy matches",
        f"policy cluster-wide {{ {ALL} }}",
        "cluster-wide",
    ),
    # ResourceSelectorPriority case 1: a name given, the label selector is not consulted
    (
        "a name match ignores the label selector",
        "policy test/p { select { kind Deployment name nginx labels { app = other } } }",
        "test/p",
    ),
    # several resourceSelectors: OR-ed, the best match counts
    (
        "several select blocks, one matching",
        "policy test/p { select { kind StatefulSet } select { kind Deployment name nginx } }",
        "test/p",
    ),
]


@pytest.mark.parametrize(("rules", "expected"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_policy_choice(tmp_path: Path, rules: str, expected: str | None) -> None:
    assert chosen(tmp_path, rules, NGINX_LABELLED) == expected


def claimed(by: str) -> dict[str, Any]:
    namespace, name = by.split("/")
    meta = {
        **META,
        "labels": {"propagationpolicy.karmada.io/permanent-id": "a1b2"},
        "annotations": {"propagationpolicy.karmada.io/namespace": namespace, "propagationpolicy.karmada.io/name": name},
    }
    return {**NGINX, "metadata": meta}


def test_a_claimed_workload_stays_with_its_policy(tmp_path: Path) -> None:
    """propagateResource step 1: the claim decides, even against a higher-priority policy."""
    rules = f"policy test/old {{ {ALL} }}\npolicy test/new {{ {BY_NAME} priority 5 }}"
    assert chosen(tmp_path, rules, claimed("test/old")) == "test/old"


def test_a_claim_by_a_policy_that_no_longer_selects_it_leaves_it_alone(tmp_path: Path) -> None:
    """getAndApplyPolicy: the claimed policy exists but does not match: nothing is applied."""
    rules = f"policy test/old {{ select {{ kind StatefulSet }} }}\npolicy test/new {{ {ALL} }}"
    (tmp_path / "rules.fr").write_text(rules)
    result = evaluate(load_rules([tmp_path / "rules.fr"]), load_facts(objects=[CLUSTER, claimed("test/old")]))
    assert result.unmatched == ("test/nginx-deployment",)
    assert any("claimed by policy test/old, which no longer selects it" in w.message for w in result.warnings)


def test_a_claim_by_a_policy_not_given_is_warned_about(tmp_path: Path) -> None:
    (tmp_path / "rules.fr").write_text(f"policy test/new {{ {ALL} }}")
    result = evaluate(load_rules([tmp_path / "rules.fr"]), load_facts(objects=[CLUSTER, claimed("test/gone")]))
    assert result.placements[0].policy == "test/new"
    assert any("test/gone, which is not among the evaluated policies" in w.message for w in result.warnings)


def test_two_propagation_policies_of_one_name_in_two_namespaces_are_two_policies(tmp_path: Path) -> None:
    """Policy identity is NAMESPACE/NAME: `ha` of namespace a and `ha` of namespace b each select
    their own namespace's workload, and neither is a duplicate of the other."""
    policies = "".join(
        "---\napiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\n"
        f"metadata: {{name: ha, namespace: {ns}}}\n"
        f"spec:\n  resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment}}]\n"
        f"  placement: {{clusterAffinity: {{clusterNames: [{cluster}]}}}}\n"
        for ns, cluster in (("a", "m1"), ("b", "m2"))
    )
    (tmp_path / "pp.yaml").write_text(policies)
    clusters = [{**CLUSTER, "metadata": {"name": n}} for n in ("m1", "m2")]
    workloads = [{**NGINX, "metadata": {"name": "web", "namespace": ns}} for ns in ("a", "b")]
    result = evaluate(load_rules([tmp_path / "pp.yaml"]), load_facts(objects=[*clusters, *workloads]))
    assert [(p.binding, p.policy, p.clusters) for p in result.placements] == [
        ("a/web-deployment", "a/ha", ("m1",)),
        ("b/web-deployment", "b/ha", ("m2",)),
    ]


def test_a_policy_with_several_resource_selectors_stays_one_policy(tmp_path: Path) -> None:
    (tmp_path / "pp.yaml").write_text(
        "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: web, namespace: test}\n"
        "spec:\n  resourceSelectors:\n  - {apiVersion: apps/v1, kind: Deployment, name: nginx}\n"
        "  - {apiVersion: apps/v1, kind: StatefulSet, labelSelector: {matchLabels: {app: db}}}\n"
    )
    rules = load_rules([tmp_path / "pp.yaml"])
    assert [p.name.value for p in rules.policies] == ["test/web"]


def cluster_claimed(by: str) -> dict[str, Any]:
    meta = {
        **META,
        "labels": {"clusterpropagationpolicy.karmada.io/permanent-id": "c3d4"},
        "annotations": {"clusterpropagationpolicy.karmada.io/name": by},
    }
    return {**NGINX, "metadata": meta}


GATE_ON = Controllers.parse(["feature-gates=PropagationPolicyPreemption=true"])

# pkg/detector/preemption.go: preemptPropagationPolicy, preemptClusterPropagationPolicyDirectly,
# preemptClusterPropagationPolicy (the template is fetched by each resource selector's name)
PREEMPTION = [
    (
        "a PropagationPolicy of higher priority takes it from a PropagationPolicy",
        f"policy test/old {{ {ALL} }}\npolicy test/new {{ {BY_NAME} priority 5 preemption always }}",
        claimed("test/old"),
        "test/new",
    ),
    (
        "not with equal priority (policy.ExplicitPriority() <= claimedPolicy.ExplicitPriority())",
        f"policy test/old {{ {ALL} priority 5 }}\npolicy test/new {{ {BY_NAME} priority 5 preemption always }}",
        claimed("test/old"),
        "test/old",
    ),
    (
        "not without preemption Always (preemptionEnabled)",
        f"policy test/old {{ {ALL} }}\npolicy test/new {{ {BY_NAME} priority 5 preemption never }}",
        claimed("test/old"),
        "test/old",
    ),
    (
        "not by a label selector: the template is fetched by the selector's name",
        f"policy test/old {{ {ALL} }}\npolicy test/new {{ {BY_LABEL} priority 5 preemption always }}",
        claimed("test/old"),
        "test/old",
    ),
    (
        "a PropagationPolicy takes it from a ClusterPropagationPolicy whatever the priorities",
        f"policy old {{ {ALL} priority 100 }}\npolicy test/new {{ {BY_NAME} priority -3 preemption always }}",
        cluster_claimed("old"),
        "test/new",
    ),
    (
        "a ClusterPropagationPolicy of higher priority takes it from a ClusterPropagationPolicy",
        f"policy old {{ {ALL} priority 1 }}\npolicy new {{ {BY_NAME} priority 2 preemption always }}",
        cluster_claimed("old"),
        "new",
    ),
    (
        "a ClusterPropagationPolicy never takes it from a PropagationPolicy",
        f"policy test/old {{ {ALL} }}\npolicy new {{ {BY_NAME} priority 9 preemption always }}",
        claimed("test/old"),
        "test/old",
    ),
    (
        "preemptions in turn end with the preemptor of highest priority",
        f"policy test/old {{ {ALL} }}\npolicy test/mid {{ {BY_NAME} priority 3 preemption always }}\n"
        f"policy test/top {{ {BY_NAME} priority 7 preemption always }}",
        claimed("test/old"),
        "test/top",
    ),
    (
        "from a ClusterPropagationPolicy, the PropagationPolicy preemptor wins over a higher ClusterPropagationPolicy",
        f"policy old {{ {ALL} }}\npolicy new {{ {BY_NAME} priority 9 preemption always }}\n"
        f"policy test/local {{ {BY_NAME} priority 1 preemption always }}",
        cluster_claimed("old"),
        "test/local",
    ),
]


@pytest.mark.parametrize(("rules", "workload", "expected"), [c[1:] for c in PREEMPTION], ids=[c[0] for c in PREEMPTION])
def test_preemption_with_the_policy_preemption_gate(
    tmp_path: Path, rules: str, workload: dict[str, Any], expected: str
) -> None:
    (tmp_path / "rules.fr").write_text(rules)
    result = evaluate(load_rules([tmp_path / "rules.fr"]), load_facts(objects=[CLUSTER, workload]), controllers=GATE_ON)
    assert result.placements[0].policy == expected
    preempted = [w.message for w in result.warnings if "preempted from policy" in w.message]
    notes = workload["metadata"]["annotations"]
    holder = notes.get("clusterpropagationpolicy.karmada.io/name") or "/".join(
        (notes["propagationpolicy.karmada.io/namespace"], notes["propagationpolicy.karmada.io/name"])
    )
    assert bool(preempted) == (expected != holder)
    assert not any("PropagationPolicyPreemption feature gate" in w.message for w in result.warnings)


def test_without_the_gate_a_preempting_policy_is_warned_about_and_the_claim_holds(tmp_path: Path) -> None:
    """pkg/features PropagationPolicyPreemption {Default: false, Alpha}: preemptionEnabled is false without the gate."""
    rules = f"policy test/old {{ {ALL} }}\npolicy test/new {{ {BY_NAME} priority 5 preemption always }}"
    (tmp_path / "rules.fr").write_text(rules)
    result = evaluate(load_rules([tmp_path / "rules.fr"]), load_facts(objects=[CLUSTER, claimed("test/old")]))
    assert result.placements[0].policy == "test/old"
    (said,) = [w for w in result.warnings if "PropagationPolicyPreemption feature gate" in w.message]
    assert said.span is not None and said.span.line == 2


@pytest.mark.parametrize(
    ("flag", "message"),
    [  # component-base's words (vendor/k8s.io/component-base/featuregate/feature_gate.go SetWithLogger,
        # unsafeSetFromMap), as pflag wraps them
        (
            "feature-gates=PropagationPolicyPreemption=maybe",
            'invalid argument "PropagationPolicyPreemption=maybe" for "--feature-gates" flag: invalid value of '
            'PropagationPolicyPreemption=maybe, err: strconv.ParseBool: parsing "maybe": invalid syntax',
        ),
        ("feature-gates=Unheard=true", "unrecognized feature gate: Unheard"),
        ("feature-gates=PolicyPreemption=true", "unrecognized feature gate: PolicyPreemption; Karmada names it Prop"),
        ("feature-gates=GracefulEviction=false", "fleetrules evaluates with GracefulEviction on"),
        ("feature-gates=PropagationPolicyPreemption", "missing bool value for PropagationPolicyPreemption"),
    ],
)
def test_feature_gates_are_parsed_as_the_controller_manager_does(flag: str, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        Controllers.parse([flag])
    assert Controllers.parse(
        ["feature-gates=PropagationPolicyPreemption=false,PropagationPolicyPreemption=1"]
    ).policy_preemption
    assert Controllers.parse(
        ["feature-gates= PropagationPolicyPreemption=true ,"]
    ).policy_preemption  # as mapStringBool
    assumed = Controllers.parse(["feature-gates=GracefulEviction=true,Failover=false"])
    assert not assumed.failover and not assumed.taint_manager and not assumed.policy_preemption
