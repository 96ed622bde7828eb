"""`--feature-gates` as Karmada's components take it: Kubernetes' component-base (vendor/k8s.io/component-base/
featuregate/feature_gate.go, SetWithLogger and unsafeSetFromMap) over Karmada's gates (pkg/features/features.go
DefaultFeatureGates), AllAlpha and AllBeta as Karmada's own deploy manifests use them (issue 46)."""

from __future__ import annotations

import pytest
from click.testing import CliRunner

from engine import Controllers
from engine.cli import main
from engine.karmada.gates import KARMADA_GATES
from engine.kube.featuregate import FeatureGateError, Spec, Stage, apply_use, effective, parse_use

KNOWN = {"A1": Spec(False, Stage.ALPHA), "A2": Spec(True, Stage.ALPHA), "B1": Spec(False, Stage.BETA)}


@pytest.mark.parametrize(
    ("uses", "expected"),
    [
        ([], {"A1": False, "A2": True, "B1": False}),
        (["AllAlpha=true"], {"A1": True, "A2": True, "B1": False}),
        (["AllAlpha=false"], {"A1": False, "A2": False, "B1": False}),
        (["AllBeta=true"], {"A1": False, "A2": True, "B1": True}),
        # a gate named beside AllAlpha keeps its value, whichever Go's map visits first
        (["AllAlpha=true,A1=false"], {"A1": False, "A2": True, "B1": False}),
        (["A1=false,AllAlpha=true"], {"A1": False, "A2": True, "B1": False}),
        # an earlier use of the flag is kept by a later AllAlpha; a later named gate overrides an earlier AllAlpha
        (["A1=false", "AllAlpha=true"], {"A1": False, "A2": True, "B1": False}),
        (["AllAlpha=true", "A1=false"], {"A1": False, "A2": True, "B1": False}),
        ([" A1 = true ,,B1=1,"], {"A1": True, "A2": True, "B1": True}),  # trimmed, empty items skipped
        (["A1=true,A1=false"], {"A1": False, "A2": True, "B1": False}),  # the later of one use wins
    ],
)
def test_component_base_applies_uses_of_the_flag(uses: list[str], expected: dict[str, bool]) -> None:
    enabled: dict[str, bool] = {}
    for use in uses:
        apply_use(KNOWN, enabled, parse_use(use))
    assert effective(KNOWN, enabled) == expected


@pytest.mark.parametrize(
    ("use", "said"),
    [
        ("Nope=true", "unrecognized feature gate: Nope"),
        ("A1", "missing bool value for A1"),
        ("A1=true, ,", "missing bool value for "),  # a blank item is not an empty one
        ("A1=yes", 'invalid value of A1=yes, err: strconv.ParseBool: parsing "yes": invalid syntax'),
    ],
)
def test_component_base_refuses_in_its_words(use: str, said: str) -> None:
    enabled = {"A1": True}
    with pytest.raises(FeatureGateError, match=f"^{said}$".replace("(", r"\(")):
        apply_use(KNOWN, enabled, parse_use(use))
    assert enabled == {"A1": True}  # an unrecognized gate fails the whole use


def test_karmadas_gates_their_defaults_and_stages() -> None:
    """pkg/features/features.go DefaultFeatureGates at Karmada's tip."""
    assert {n: (s.default, str(s.stage)) for n, s in KARMADA_GATES.items()} == {
        "Failover": (False, "beta"),
        "GracefulEviction": (True, "beta"),
        "PropagateDeps": (True, "beta"),
        "CustomizedClusterResourceModeling": (True, "beta"),
        "PropagationPolicyPreemption": (False, "alpha"),
        "MultiClusterService": (False, "alpha"),
        "ResourceQuotaEstimate": (False, "alpha"),
        "StatefulFailoverInjection": (False, "alpha"),
        "PriorityBasedScheduling": (True, "beta"),
        "FederatedQuotaEnforcement": (False, "alpha"),
        "LoggingAlphaOptions": (False, "alpha"),
        "LoggingBetaOptions": (True, "beta"),
        "ContextualLogging": (True, "beta"),
        "MultiplePodTemplatesScheduling": (False, "alpha"),
        "ControllerPriorityQueue": (True, "beta"),
        "WorkloadAffinity": (False, "alpha"),
        "SchedulingOvercommitProtection": (False, "alpha"),
    }


def test_karmadas_deploy_manifests_flags_are_taken() -> None:
    """artifacts/deploy/karmada-controller-manager.yaml and karmada-scheduler.yaml (hack/local-up-karmada.sh) run
    with --feature-gates=AllAlpha=true,AllBeta=true: every gate fleetrules models is then on."""
    flags = Controllers.parse(["feature-gates=AllAlpha=true,AllBeta=true"])
    assert (flags.failover, flags.workload_affinity, flags.stateful_failover_injection) == (True, True, True)
    assert (flags.policy_preemption, flags.multiple_pod_templates, flags.priority_based_scheduling) == (True,) * 3
    assert flags.unmodelled_gates == (
        "FederatedQuotaEnforcement",
        "LoggingAlphaOptions",
        "MultiClusterService",
        "ResourceQuotaEstimate",
        "SchedulingOvercommitProtection",
    )
    assert not Controllers.parse(["feature-gates=AllAlpha=true,WorkloadAffinity=false"]).workload_affinity
    with pytest.raises(ValueError, match="cannot model it off"):
        Controllers.parse(["feature-gates=AllBeta=false"])  # GracefulEviction, PropagateDeps … off


def test_the_unmodelled_gates_on_are_said_once(tmp_path: object) -> None:
    from pathlib import Path

    ha = Path(__file__).resolve().parent.parent / "examples" / "flink-ha"
    args = ["eval", str(ha / "policy.fr"), "--facts", str(ha / "facts"), "--controller"]
    result = CliRunner().invoke(main, [*args, "feature-gates=AllAlpha=true,AllBeta=true"])
    assert result.exit_code == 0, result.output
    (note,) = [line for line in result.stderr.splitlines() if line.startswith("feature gates: warning")]
    assert "FederatedQuotaEnforcement, ResourceQuotaEstimate and SchedulingOvercommitProtection are on and not " in note
    assert "LoggingAlphaOptions and MultiClusterService are on and ignored" in note
    quiet = CliRunner().invoke(main, [*args, "feature-gates=ControllerPriorityQueue=true"])  # its default
    assert "feature gates: warning" not in quiet.stderr
    old = CliRunner().invoke(main, [*args, "feature-gates=PolicyPreemption=true"])
    assert old.exit_code == 2 and "Karmada names it PropagationPolicyPreemption" in old.stderr
