"""Karmada PropagationPolicy YAML as rules (pkg/apis/policy/v1alpha1/propagation_types.go): translated to the same AST,
evaluated like DSL policies, printed back as DSL by `fleetrules convert`."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from engine import RuleError, evaluate, load_facts, load_rules
from engine.cli import main
from tests.gates import ON

EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "karmada-policy"
PP = """apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata:
  name: web
  namespace: shop
spec:
  propagateDeps: true
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment}
  - {apiVersion: apps/v1, kind: StatefulSet}
  placement:
    clusterAffinity:
      labelSelector:
        matchLabels: {env: prod}
        matchExpressions:
        - {key: tier, operator: NotIn, values: [spot]}
      fieldSelector:
        matchExpressions:
        - {key: region, operator: In, values: [eu-west-1]}
      exclude: [m9]
    clusterTolerations:
    - {key: dedicated, operator: Equal, value: web, effect: NoSchedule}
    - {key: cluster.karmada.io/not-ready, operator: Exists, effect: NoExecute, tolerationSeconds: 300}
    spreadConstraints:
    - {spreadByField: cluster, maxGroups: 1, minGroups: 1}
    workloadAffinity:
      antiAffinity: {groupByLabelKey: app.example.com/shard}
  failover:
    application:
      decisionConditions: {tolerationSeconds: 120}
      purgeMode: Gracefully
      gracePeriodSeconds: 600
      statePreservation:
        rules:
        - {aliasLabelName: example.com/last, jsonPath: "{.status.last}"}
"""
DSL = """policy shop/web {
  select {
    kind Deployment, StatefulSet
    namespace shop
  }
  clusters {
    exclude m9
    labels { env = prod, tier notin (spot) }
    fields { region in (eu-west-1) }
  }
  tolerate dedicated = web : NoSchedule
  tolerate cluster.karmada.io/not-ready : NoExecute for 5m
  spread by cluster min 1 max 1
  workload anti-affinity by app.example.com/shard
  failover application {
    toleration 2m
    purge Gracefully
    grace 10m
    preserve example.com/last = "{.status.last}"
  }
}
"""


def test_convert_prints_the_policy_as_dsl(tmp_path: Path) -> None:
    path = tmp_path / "pp.yaml"
    path.write_text(PP)
    result = CliRunner().invoke(main, ["convert", str(path)])
    assert result.exit_code == 0, result.stderr
    assert result.stdout == DSL


def test_a_policy_and_its_dsl_place_alike(tmp_path: Path) -> None:
    (tmp_path / "pp.yaml").write_text(PP)
    (tmp_path / "web.fr").write_text(DSL)
    facts = load_facts(
        objects=[
            {"kind": "Cluster", "metadata": {"name": "m1", "labels": {"env": "prod"}}, "spec": {"region": "eu-west-1"}},
            {
                "kind": "Cluster",
                "metadata": {"name": "m2", "labels": {"env": "prod", "tier": "spot"}},
                "spec": {"region": "eu-west-1"},
            },
            {"kind": "Cluster", "metadata": {"name": "m9", "labels": {"env": "prod"}}, "spec": {"region": "eu-west-1"}},
            {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "a", "namespace": "shop"}},
        ]
    )
    from_yaml = evaluate(load_rules([tmp_path / "pp.yaml"]), facts, controllers=ON)
    from_dsl = evaluate(load_rules([tmp_path / "web.fr"]), facts, controllers=ON)
    assert [p.clusters for p in from_yaml.placements] == [p.clusters for p in from_dsl.placements] == [("m1",)]
    reasons = from_yaml.placements[0].rejected
    assert reasons["m9"][0].source == f"{tmp_path}/pp.yaml:13"  # the YAML line of clusterAffinity


def test_acceptance_three_clusters_three_bindings_and_a_fourth(monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 3: anti-affinity over 3 clusters spreads 3 bindings of a group one per cluster; a
    fourth is unschedulable, and the reason names the anti-affinity term."""
    monkeypatch.chdir(EXAMPLE.parent.parent)
    result = evaluate(
        load_rules(["examples/karmada-policy/propagationpolicy.yaml"]),
        load_facts(["examples/karmada-policy/facts"]),
        controllers=ON,
    )
    placed = {p.binding.split("/")[1].split("-")[1]: p.clusters for p in result.placements}
    assert sorted(c for n in "abc" for c in placed[n]) == ["member1", "member2", "member3"]
    fourth = result.placement("streaming/pipeline-d-flinkdeployment")
    assert fourth.unschedulable and fourth.clusters == ()
    for reasons in fourth.rejected.values():
        assert [r.rule for r in reasons] == ["workload-anti-affinity"]
        assert "karmada.io/group=clickstream" in reasons[0].message


def test_policies_among_the_facts_are_used(tmp_path: Path) -> None:
    (tmp_path / "facts.yaml").write_text(
        PP + "---\nkind: Cluster\nmetadata: {name: m1, labels: {env: prod}}\nspec: {region: eu-west-1}\n"
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a, namespace: shop}\n"
    )
    (tmp_path / "none.fr").write_text("")
    result = evaluate(load_rules([tmp_path / "none.fr"]), load_facts([tmp_path / "facts.yaml"]), controllers=ON)
    assert [(p.policy, p.clusters) for p in result.placements] == [("shop/web", ("m1",))]


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ("resourceSelectors:", "resourceSelectors0:"),
        ("operator: NotIn", "operator: Gt"),
    ],
)
def test_bad_policy_files(tmp_path: Path, change: str, message: str) -> None:
    text = PP.replace(change, message)
    path = tmp_path / "pp.yaml"
    path.write_text(text)
    with pytest.raises(RuleError):
        load_rules([path])


def test_a_snapshot_given_as_rules_contributes_its_policies(tmp_path: Path) -> None:
    """Issue 11: a file may mix kinds; as rules it gives its policies, and the rest is passed over."""
    path = tmp_path / "snapshot.yaml"
    path.write_text(
        "apiVersion: v1\nkind: List\nitems:\n- {apiVersion: cluster.karmada.io/v1alpha1, kind: Cluster, "
        "metadata: {name: m1}}\n---\n" + PP
    )
    assert [p.name.value for p in load_rules([path]).policies] == ["shop/web"]
    only_facts = tmp_path / "facts.yaml"
    only_facts.write_text("apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: m1}\n")
    rules = load_rules([only_facts])
    assert not rules.policies and any("no rules, policies" in w.message for w in rules.warnings)


def test_eval_reads_rules_and_facts_from_one_snapshot(tmp_path: Path) -> None:
    path = tmp_path / "snapshot.yaml"
    path.write_text(
        PP + "---\nkind: Cluster\nmetadata: {name: m1, labels: {env: prod}}\nspec: {region: eu-west-1}\n"
        "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: a, namespace: shop}\n"
    )
    result = CliRunner().invoke(main, ["eval", str(path), "-o", "json"])
    assert result.exit_code == 0, result.stderr
    assert '"policy": "shop/web"' in result.stdout and '"m1"' in result.stdout


@pytest.mark.parametrize(
    ("change", "message"),
    [  # pkg/util/validation/validation.go ValidatePropagationSpec, ValidateApplicationFailover
        (
            "propagateDeps: true",
            "spec.propagateDeps: Invalid value: false: application failover is set, propagateDeps must be true",
        ),
        (
            "decisionConditions: {tolerationSeconds: 120}",
            "spec.failover.application.decisionConditions.tolerationSeconds: Invalid value: -100: "
            "must be greater than or equal to 0",
        ),
        (
            "- {apiVersion: apps/v1, kind: Deployment}",
            'spec.resourceSelectors[0].namespace: Invalid value: "other": namespace of resource selector must be the '
            "same as the namespace of the policy",
        ),
    ],
)
def test_karmada_validation_of_policies(tmp_path: Path, change: str, message: str) -> None:
    replacement = {
        "propagateDeps: true": "propagateDeps: false",
        "decisionConditions: {tolerationSeconds: 120}": "decisionConditions: {tolerationSeconds: -100}",
        "- {apiVersion: apps/v1, kind: Deployment}": "- {apiVersion: apps/v1, kind: Deployment, namespace: other}",
    }[change]
    path = tmp_path / "pp.yaml"
    path.write_text(PP.replace(change, replacement))
    with pytest.raises(RuleError) as caught:
        load_rules([path])
    assert message in caught.value.render()


WEBHOOK_POLICY = """apiVersion: policy.karmada.io/v1alpha1
kind: PropagationPolicy
metadata: {name: web, namespace: shop}
spec:
  resourceSelectors:
  - {apiVersion: apps/v1, kind: Deployment, name: web}
  placement:
    clusterAffinity: {clusterNames: [m1]}
"""


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [  # pkg/util/validation/validation.go, the words of the functions named; the CRD's enums before them
        (  # validateResourceSelectorsIfPreemptionEnabled
            ", name: web}",
            "}\n  preemption: Always",
            'spec.resourceSelectors[0].name: Invalid value: "": name cannot be empty if preemption is Always, '
            "the empty name may cause unexpected resources preemption",
        ),
        (  # validateSuspension (the field's name twice in the path, as Karmada writes it)
            "  placement:",
            "  suspension: {dispatching: true, dispatchingOnClusters: {clusterNames: [m1]}}\n  placement:",
            "spec.suspension.suspension: suspension dispatching cannot co-exist with "
            "dispatchingOnClusters.clusterNames",
        ),
        (  # ValidatePolicyFieldSelector: the key first
            "{clusterNames: [m1]}",
            "{fieldSelector: {matchExpressions: [{key: country, operator: Lt, values: [x]}]}}",
            'spec.placement.clusterAffinity.fieldSelector: unsupported key "country", must be provider, region, '
            "or zone",
        ),
        (  # ValidatePolicyFieldSelector: then the operator
            "{clusterNames: [m1]}",
            "{fieldSelector: {matchExpressions: [{key: region, operator: Exists}]}}",
            'spec.placement.clusterAffinity.fieldSelector: unsupported operator "Exists", must be In or NotIn',
        ),
        (  # validateClusterTolerations: field.NotSupported
            "    clusterAffinity",
            "    clusterTolerations: [{key: k, operator: Lt, value: '3'}]\n    clusterAffinity",
            'spec.placement.clusterTolerations[0].operator: Unsupported value: "Lt": supported values: "", '
            '"Exists", "Equal"',
        ),
        (  # the CRD's enum of spreadByField (propagation_types.go SpreadConstraint)
            "    clusterAffinity",
            "    spreadConstraints: [{spreadByField: country, maxGroups: 1}]\n    clusterAffinity",
            'spec.placement.spreadConstraints[0].spreadByField: Unsupported value: "country": supported values: '
            '"cluster", "region", "zone", "provider"',
        ),
        (  # ValidateApplicationFailover
            "  placement:",
            "  propagateDeps: true\n  failover:\n    application:\n      decisionConditions: {tolerationSeconds: 1}"
            "\n      purgeMode: Directly\n      gracePeriodSeconds: 10\n  placement:",
            "spec.failover.application.gracePeriodSeconds: Invalid value: 10: only takes effect when purgeMode is "
            "gracefully",
        ),
        (  # validateResourceSelectors, said once
            ", name: web}",
            ", name: web, namespace: other}",
            'spec.resourceSelectors[0].namespace: Invalid value: "other": namespace of resource selector must be '
            "the same as the namespace of the policy",
        ),
    ],
)
def test_the_webhooks_refusals_in_its_words(tmp_path: Path, old: str, new: str, message: str) -> None:
    """Issue 27: what Karmada's webhook denies is refused, in its words, once."""
    assert old in WEBHOOK_POLICY
    (tmp_path / "pp.yaml").write_text(WEBHOOK_POLICY.replace(old, new, 1))
    result = CliRunner().invoke(main, ["check", str(tmp_path / "pp.yaml")])
    assert result.exit_code == 1, result.stdout
    errors = [line for line in result.stdout.splitlines() if ": error: " in line]
    assert len(errors) == 1 and errors[0].endswith(f"error: {message}"), result.stdout


@pytest.mark.parametrize(
    "toleration",
    [
        "{key: k, operator: Exists, tolerationSeconds: 30}",  # no effect: every effect, the seconds for NoExecute
        "{key: k, operator: Exists}",
        "{operator: Exists, effect: NoExecute, tolerationSeconds: 30}",
        "{key: k, operator: Foo}",  # no enum: admitted, and Toleration.ToleratesTaint matches nothing (warned)
    ],
)
def test_what_the_webhook_admits_is_admitted(tmp_path: Path, toleration: str) -> None:
    """Issue 27: validateClusterTolerations checks only the operator; Karmada admits these."""
    text = WEBHOOK_POLICY.replace("    clusterAffinity", f"    clusterTolerations: [{toleration}]\n    clusterAffinity")
    (tmp_path / "pp.yaml").write_text(text)
    result = CliRunner().invoke(main, ["check", str(tmp_path / "pp.yaml")])
    assert result.exit_code == 0 and "error" not in result.stdout, result.stdout


@pytest.mark.parametrize(
    ("field", "said"),
    [
        # the gate off as Karmada ships it: check says so, as eval does (tests/test_gate_notes.py)
        ("preemption: Always", "the PropagationPolicyPreemption feature gate (alpha) is off"),
        ("preemption: Never", None),  # the default: nothing to say
        ("activationPreference: Lazy", None),
        ("activationPreference: Eager", 'Unsupported value: "Eager": supported values: "Lazy"'),
        ("preemption: Sometimes", 'Unsupported value: "Sometimes": supported values: "Always", "Never"'),
        ("schedulerName: my-scheduler", "bindings of this policy wait for scheduler 'my-scheduler'"),
        ("schedulerName: default-scheduler", None),
        ("association: true", "association is deprecated in favour of propagateDeps"),
        ("dependentOverrides: [op1]", "fleetrules evaluates as if they do (it does not read OverridePolicies)"),
    ],
)
def test_spec_fields_fleetrules_takes_at_their_default(tmp_path: Path, field: str, said: str | None) -> None:
    """The CRD's enums (pkg/apis/policy/v1alpha1/propagation_types.go: Preemption Always;Never,
    ActivationPreference Lazy); schedulerName other than Karmada's own is said."""
    (tmp_path / "p.yaml").write_text(
        "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: p, namespace: default}\n"
        f"spec:\n  {field}\n  resourceSelectors: [{{apiVersion: apps/v1, kind: Deployment, name: web}}]\n"
    )
    result = CliRunner().invoke(main, ["check", str(tmp_path / "p.yaml")])
    if said is None:
        assert result.exit_code == 0 and result.stdout == ""
    else:
        assert said in result.stdout


@pytest.mark.parametrize(
    ("constraint", "message"),
    [  # pkg/util/validation/validation.go ValidateSpreadConstraint
        ("{spreadByField: cluster, spreadByLabel: team}", "spreadByLabel should not co-exist with spreadByField"),
        ("{spreadByField: cluster, minGroups: -1, maxGroups: 2}", "minGroups lower than 0 is not allowed"),
        ("{spreadByField: cluster, maxGroups: -2}", "maxGroups lower than 0 is not allowed"),
        ("{spreadByField: cluster, minGroups: 3, maxGroups: 2}", "maxGroups lower than minGroups is not allowed"),
    ],
)
def test_karmada_validation_of_spread_constraints(tmp_path: Path, constraint: str, message: str) -> None:
    path = tmp_path / "pp.yaml"
    path.write_text(
        "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: web, namespace: shop}\n"
        "spec:\n  resourceSelectors:\n  - {apiVersion: apps/v1, kind: Deployment}\n"
        f"  placement:\n    spreadConstraints:\n    - {constraint}\n"
    )
    with pytest.raises(RuleError) as caught:
        load_rules([path])
    assert message in caught.value.render()


def test_max_groups_zero_is_not_set_to_the_webhook(tmp_path: Path) -> None:
    """maxGroups 0 with minGroups 2 passes Karmada's validation (0 is "not set"); the scheduler then selects no
    cluster, which fleetrules warns about."""
    path = tmp_path / "pp.yaml"
    path.write_text(
        "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: web, namespace: shop}\n"
        "spec:\n  resourceSelectors:\n  - {apiVersion: apps/v1, kind: Deployment}\n"
        "  placement:\n    spreadConstraints:\n    - {spreadByField: cluster, minGroups: 2, maxGroups: 0}\n"
    )
    rule_set = load_rules([path])
    assert any("Karmada takes maxGroups 0" in w.message for w in rule_set.warnings)


def test_preemption_and_activation_convert_both_ways(tmp_path: Path) -> None:
    """spec.preemption and spec.activationPreference are evaluated: they become statements of the language
    and come back as the same fields."""
    path = tmp_path / "p.yaml"
    path.write_text(
        "apiVersion: policy.karmada.io/v1alpha1\nkind: PropagationPolicy\nmetadata: {name: p, namespace: default}\n"
        "spec:\n  priority: 3\n  preemption: Always\n  activationPreference: Lazy\n"
        "  resourceSelectors: [{apiVersion: apps/v1, kind: Deployment, name: web}]\n"
    )
    dsl = CliRunner().invoke(main, ["convert", str(path)])
    assert dsl.exit_code == 0 and "  preemption always\n  activation lazy\n" in dsl.stdout
    (tmp_path / "p.fr").write_text(dsl.stdout)
    back = CliRunner().invoke(main, ["convert", "--to", "yaml", str(tmp_path / "p.fr")])
    assert (
        back.exit_code == 0 and "preemption: Always\n" in back.stdout and "activationPreference: Lazy\n" in back.stdout
    )


def test_a_toleration_with_an_unknown_operator_tolerates_nothing(tmp_path: Path) -> None:
    """Karmada admits any operator but Lt and Gt; corev1 Toleration.ToleratesTaint matches none other."""
    text = WEBHOOK_POLICY.replace(
        "    clusterAffinity", "    clusterTolerations: [{key: k, operator: Foo}]\n    clusterAffinity"
    )
    text += "---\napiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: m1}\n"
    text += "spec: {taints: [{key: k, effect: NoSchedule}]}\n"
    text += "---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: shop}\n"
    (tmp_path / "snap.yaml").write_text(text)
    rules = load_rules([tmp_path / "snap.yaml"])
    assert any("tolerates no taint" in w.message for w in rules.warnings)
    placement = evaluate(rules, load_facts([tmp_path / "snap.yaml"]), controllers=ON).placement("shop/web-deployment")
    assert placement.clusters == () and "m1" in placement.rejected
