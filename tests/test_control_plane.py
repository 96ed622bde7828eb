"""The control plane's own flags among the facts (issue 46): Karmada's deploy manifests (tests/data/controlplane:
artifacts/deploy/karmada-controller-manager.yaml and karmada-scheduler.yaml at Karmada's tip, as
hack/local-up-karmada.sh applies them) and a Karmada operator object (operator/pkg/apis/operator/v1alpha1)."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from engine import load_facts
from engine.cli import main
from engine.inputs.controlplane import MODELLED_FLAGS, command_line_flags

ROOT = Path(__file__).resolve().parent.parent
HA = ROOT / "examples" / "flink-ha"
PLANE = Path(__file__).resolve().parent / "data" / "controlplane"
OPERATOR = """apiVersion: operator.karmada.io/v1alpha1
kind: Karmada
metadata: {name: karmada, namespace: karmada-system}
spec:
  components:
    karmadaControllerManager:
      featureGates: {Failover: true, WorkloadAffinity: true}
      extraArgs: {enable-no-execute-taint-eviction: "true", v: "4"}
    karmadaScheduler:
      featureGates: {WorkloadAffinity: false}
"""


def test_the_deploy_manifests_flags_are_read_as_pflag_reads_them() -> None:
    facts = load_facts([PLANE])
    taken = [(f.flag, f.component) for f in facts.control_plane]
    modelled = [(f, c) for f, c in taken if f.split("=")[0] in MODELLED_FLAGS]
    assert modelled == [
        ("feature-gates=AllAlpha=true,AllBeta=true", "karmada-controller-manager"),
        ("enable-no-execute-taint-eviction=true", "karmada-controller-manager"),
        ("feature-gates=AllAlpha=true,AllBeta=true", "karmada-scheduler"),
    ]
    assert ("controllers=*,hpaScaleTargetMarker,deploymentReplicasSyncer", "karmada-controller-manager") in taken
    assert ("v=4", "karmada-controller-manager") in taken  # every flag the components know, said as it is
    assert facts.control_plane[0].source.startswith("Deployment karmada-system/karmada-controller-manager (")
    known = ("feature-gates", "enable-no-execute-taint-eviction", "graceful-eviction-timeout")
    words = ["/bin/x", "--v=4", "--graceful-eviction-timeout", "5m", "--enable-no-execute-taint-eviction", "x"]
    assert command_line_flags(words, known) == ["graceful-eviction-timeout=5m", "enable-no-execute-taint-eviction=true"]


def test_eval_runs_as_the_control_plane_among_the_facts_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLEETRULES_CONTROLLER")
    args = ["eval", str(HA / "policy.fr"), "--facts", str(HA / "facts"), "--facts", str(PLANE)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "control plane: warning: the control plane's flags taken" in result.stderr
    assert "WorkloadAffinity feature gate" not in result.stderr  # AllAlpha: on
    over = CliRunner().invoke(main, [*args, "--controller", "feature-gates=WorkloadAffinity=false"])
    assert "WorkloadAffinity feature gate (alpha) is off" in over.stderr  # --controller over the control plane


def test_a_karmada_operator_objects_components_and_their_differences(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("FLEETRULES_CONTROLLER")
    (tmp_path / "karmada.yaml").write_text(OPERATOR)
    facts = load_facts([tmp_path / "karmada.yaml"])
    assert [f.flag for f in facts.control_plane] == [
        "feature-gates=Failover=true,WorkloadAffinity=true",
        "enable-no-execute-taint-eviction=true",
        "v=4",
        "feature-gates=WorkloadAffinity=false",
    ]
    args = ["eval", str(HA / "policy.fr"), "--facts", str(HA / "facts"), "--facts", str(tmp_path / "karmada.yaml")]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "the controller manager and the scheduler run with different feature gates (WorkloadAffinity)" in (
        result.stderr
    )
    assert "WorkloadAffinity feature gate (alpha) is off" in result.stderr  # the scheduler's, which come after


def test_the_control_plane_given_apart_from_the_facts(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("FLEETRULES_CONTROLLER")
    args = ["eval", str(HA / "policy.fr"), "--facts", str(HA / "facts")]
    given = CliRunner().invoke(main, [*args, "--control-plane", str(PLANE / "karmada-scheduler.yaml")])
    assert given.exit_code == 0 and "from Deployment karmada-system/karmada-scheduler" in given.stderr
    assert "WorkloadAffinity feature gate" not in given.stderr
    wrong = CliRunner().invoke(main, [*args, "--control-plane", str(HA / "facts" / "clusters.yaml")])
    assert wrong.exit_code == 2 and "holds no karmada-controller-manager or karmada-scheduler" in wrong.stderr


def test_every_flag_of_the_components_is_known_modelled_or_said(monkeypatch: pytest.MonkeyPatch) -> None:
    """cmd/controller-manager/app/options and cmd/scheduler/app/options: a flag that changes nothing fleetrules
    computes is taken and said to be ignored, one that it does not model is said so, an unknown one is refused in
    pflag's words; --enable-taint-manager=false keeps the taint manager from starting (controllermanager.go)."""
    from engine import Controllers

    flags = Controllers.parse(["v=4", "leader-elect", "controllers=*,-taint-manager", "enable-taint-manager=false"])
    assert flags.ignored_flags == ("v", "leader-elect") and flags.unmodelled_flags == ("controllers",)
    on = ["enable-no-execute-taint-eviction=true", "feature-gates=Failover=true"]
    assert (
        Controllers.parse(on).taint_manager and not Controllers.parse([*on, "enable-taint-manager=false"]).taint_manager
    )
    with pytest.raises(ValueError, match="unknown flag: --nope"):
        Controllers.parse(["nope=1"])
    monkeypatch.delenv("FLEETRULES_CONTROLLER")
    args = ["eval", str(HA / "policy.fr"), "--facts", str(HA / "facts"), "--controller", "v=4", "--controller"]
    result = CliRunner().invoke(main, [*args, "plugins=*"])
    assert "--plugins is set and not modelled" in result.stderr and "--v is set and ignored" in result.stderr


def test_the_taint_manager_note_names_enable_taint_manager_when_it_is_off() -> None:
    from engine import Controllers, load_rules
    from engine.karmada.notes import gate_notes

    policies = load_rules([ROOT / "examples" / "flink-checkpoint" / "policy.fr"]).policies
    off = Controllers.parse(["enable-taint-manager=false", "enable-no-execute-taint-eviction=true"])
    (note,) = [d for d in gate_notes(off, policies) if "NoExecute" in d.message]
    assert (
        "--enable-taint-manager and the Failover feature gate (beta) are off (the taint manager needs all three)"
        in (note.message)
    )
