"""The Karmada control plane's flags and feature gates, as karmada-controller-manager and karmada-scheduler take
them (cmd/controller-manager/app/options, cmd/scheduler/app/options, pkg/features/features.go): ``Controllers``,
what every stage that depends on the control plane is given.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, ClassVar

from engine.detector.templates import DEFAULT_SKIPPED_NAMESPACES, SkippedNamespaces
from engine.errors import UsageError
from engine.inputs.controlplane import BOOL_FLAGS, INERT_FLAGS, KNOWN_FLAGS, MODELLED_FLAGS, UNMODELLED_FLAGS
from engine.kube import featuregate, gojson, gotime
from engine.kube.featuregate import Spec, Stage, go_bool
from engine.kube.goregexp import compile_anchored

GRACEFUL_EVICTION_TIMEOUT = 600  # --graceful-eviction-timeout (10m)


# Karmada's feature gates, their defaults and stages (pkg/features/features.go DefaultFeatureGates), as the
# controller manager and the scheduler both know them
KARMADA_GATES: dict[str, Spec] = {
    "Failover": Spec(False, Stage.BETA),
    "GracefulEviction": Spec(True, Stage.BETA),
    "PropagateDeps": Spec(True, Stage.BETA),
    "CustomizedClusterResourceModeling": Spec(True, Stage.BETA),
    "PropagationPolicyPreemption": Spec(False, Stage.ALPHA),
    "MultiClusterService": Spec(False, Stage.ALPHA),
    "ResourceQuotaEstimate": Spec(False, Stage.ALPHA),
    "StatefulFailoverInjection": Spec(False, Stage.ALPHA),
    "PriorityBasedScheduling": Spec(True, Stage.BETA),
    "FederatedQuotaEnforcement": Spec(False, Stage.ALPHA),
    "LoggingAlphaOptions": Spec(False, Stage.ALPHA),
    "LoggingBetaOptions": Spec(True, Stage.BETA),
    "ContextualLogging": Spec(True, Stage.BETA),
    "MultiplePodTemplatesScheduling": Spec(False, Stage.ALPHA),
    "ControllerPriorityQueue": Spec(True, Stage.BETA),
    "WorkloadAffinity": Spec(False, Stage.ALPHA),
    "SchedulingOvercommitProtection": Spec(False, Stage.ALPHA),
}
# gates that change nothing fleetrules computes (logging, the order controllers work in, multi-cluster Services)
INERT_GATES = frozenset({"ContextualLogging", "ControllerPriorityQueue", "LoggingAlphaOptions", "LoggingBetaOptions",
                         "MultiClusterService"})  # fmt: skip


@dataclass(frozen=True)
class Controllers:
    """The Karmada control plane's flags that change failover, policy choice and scheduling, by their flag names
    (karmada-controller-manager's; the feature gates taken to be the same in every component).

    The defaults are Karmada's (v1.18 and v1.19, pkg/features/features.go and the controller manager's options):
    the taint manager off (``enable-no-execute-taint-eviction=false``, the Failover gate off), and the alpha gates
    PropagationPolicyPreemption, StatefulFailoverInjection, WorkloadAffinity and MultiplePodTemplatesScheduling off.
    Inputs that would need one on say which and how to turn it on, once (``gate_notes``)."""

    no_execute_taint_eviction: bool = False  # --enable-no-execute-taint-eviction
    # --no-execute-taint-eviction-purge-mode: for policies without a failover.cluster block
    taint_purge_mode: str = "Gracefully"
    graceful_eviction_timeout: int = GRACEFUL_EVICTION_TIMEOUT  # --graceful-eviction-timeout, seconds
    # --feature-gates
    policy_preemption: bool = False
    failover: bool = False  # the taint manager and the ClusterTaintPolicy controller start only with it
    stateful_failover_injection: bool = False  # statePreservation: tasks keep state, new Works get it
    workload_affinity: bool = False  # off: the detector records no groups on bindings, nothing is co-located
    multiple_pod_templates: bool = False  # off: the scheduler takes a binding's spec.components as absent
    priority_based_scheduling: bool = True  # beta, on: the scheduler's queue orders bindings by schedulePriority
    # --skipped-propagating-namespaces: the detector's namespaces never propagated (karmada's reserved ones too)
    skipped_namespaces: SkippedNamespaces = DEFAULT_SKIPPED_NAMESPACES
    # --enable-taint-manager (default true): the taint manager starts only with it and the Failover gate
    enable_taint_manager: bool = True
    # the gates on (not by default) that fleetrules does not model, said once in a note (``unmodelled_gate_note``)
    unmodelled_gates: tuple[str, ...] = ()
    # flags of the components that fleetrules does not model (the answer is as with Karmada's defaults), and those
    # that change nothing it computes: said in the same note
    unmodelled_flags: tuple[str, ...] = ()
    ignored_flags: tuple[str, ...] = ()

    FLAGS = MODELLED_FLAGS
    # the feature gates fleetrules models, by Karmada's name, and the field each sets
    GATES: ClassVar[dict[str, str]] = {
        "Failover": "failover",
        "MultiplePodTemplatesScheduling": "multiple_pod_templates",
        "PropagationPolicyPreemption": "policy_preemption",
        "PriorityBasedScheduling": "priority_based_scheduling",
        "StatefulFailoverInjection": "stateful_failover_injection",
        "WorkloadAffinity": "workload_affinity",
    }
    # gates fleetrules evaluates as on (Karmada's default): refused off, which it cannot model
    ASSUMED = ("CustomizedClusterResourceModeling", "GracefulEviction", "PropagateDeps")

    @classmethod
    def parse(cls, settings: Sequence[str]) -> Controllers:
        """``FLAG=VALUE`` items, as the controller manager takes them; ValueError names the bad one, UsageError
        says what was given when ``settings`` is no list of strings (a single string is not its characters)."""
        if isinstance(settings, (str, bytes)) or not isinstance(settings, Sequence):
            found = type(settings).__name__
            raise UsageError(f"settings: expected a list of FLAG=VALUE strings (['feature-gates=…']), found {found}")
        for item in settings:
            if not isinstance(item, str):
                raise UsageError(f"settings: expected FLAG=VALUE strings, found {type(item).__name__} {item!r:.60}")
        out = cls()
        skipped: list[str] | None = None  # pflag's StringSlice: the first use replaces the default, later ones add
        gates: dict[str, bool] = {}  # what the uses of --feature-gates set (component-base's enabled map)
        unmodelled: dict[str, None] = {}
        ignored: dict[str, None] = {}
        for item in settings:
            flag, sep, value = item.lstrip("-").partition("=")
            if not sep and flag in BOOL_FLAGS:
                sep, value = "=", "true"  # pflag: a bool flag alone is true
            if flag not in KNOWN_FLAGS:
                raise ValueError(f"unknown flag: --{flag} (of karmada-controller-manager and karmada-scheduler; "
                                 f"fleetrules models {', '.join(cls.FLAGS)})")  # fmt: skip
            if not sep:
                raise ValueError(f"flag needs an argument: --{flag} (as --{flag}=VALUE)")
            if flag in UNMODELLED_FLAGS:
                unmodelled[flag] = None
            elif flag in INERT_FLAGS:
                ignored[flag] = None
            elif flag == "enable-taint-manager":
                on = go_bool(value)
                if on is None:
                    raise ValueError(f"{item!r}: expected true or false")
                out = replace(out, enable_taint_manager=on)
            elif flag == "skipped-propagating-namespaces":
                skipped = (skipped or []) + _string_slice(item, value)
                out = replace(out, skipped_namespaces=skipped_namespaces(skipped))
            elif flag == "enable-no-execute-taint-eviction":
                on = go_bool(value)
                if on is None:
                    raise ValueError(f"{item!r}: expected true or false")
                out = replace(out, no_execute_taint_eviction=on)
            elif flag == "no-execute-taint-eviction-purge-mode":
                if value not in ("Directly", "Gracefully"):
                    raise ValueError(f'{item!r}: Invalid mode: supported values are "Directly" and "Gracefully"')
                out = replace(out, taint_purge_mode=value)
            elif flag == "feature-gates":
                try:
                    featuregate.apply_use(KARMADA_GATES, gates, featuregate.parse_use(value))
                except featuregate.FeatureGateError as exc:
                    named = str(exc).endswith(": PolicyPreemption")  # fleetrules' own name for it until 2026-12
                    hint = "; Karmada names it PropagationPolicyPreemption" if named else ""
                    raise ValueError(f'invalid argument "{value}" for "--feature-gates" flag: {exc}{hint}') from None
            else:  # a duration flag (pflag: time.ParseDuration); Karmada takes zero and negative ones too
                try:
                    seconds = gotime.parse_duration(value)
                except ValueError as exc:
                    raise ValueError(f'invalid argument "{value}" for "--{flag}" flag: {exc}') from None
                if seconds.denominator != 1:
                    raise ValueError(f"{item!r}: fleetrules counts time in whole seconds, and {value} is not")
                out = replace(out, graceful_eviction_timeout=int(seconds))
        out = replace(out, unmodelled_flags=tuple(unmodelled), ignored_flags=tuple(ignored))
        return out._gates(gates) if gates else out

    def _gates(self, enabled: Mapping[str, bool]) -> Controllers:
        """The gates as component-base leaves them (``enabled``, over Karmada's defaults): each modelled one sets its
        field; one fleetrules takes as on (Karmada's default) and cannot model off is a ValueError; the others on
        by these settings are kept to be said (``unmodelled_gates``)."""
        values = featuregate.effective(KARMADA_GATES, enabled)
        off = [name for name in self.ASSUMED if not values[name]]
        if off:
            raise ValueError(
                f"feature-gates: fleetrules evaluates with {off[0]} on (Karmada's default); it cannot model it off"
            )
        fields: dict[str, Any] = {field: values[name] for name, field in self.GATES.items()}
        others = [n for n, on in values.items() if on and not KARMADA_GATES[n].default and n not in self.GATES]
        return replace(self, **fields, unmodelled_gates=tuple(sorted(others)))

    @property
    def taint_manager(self) -> bool:
        """The taint manager evicts: it starts with --enable-taint-manager and the Failover gate
        (cmd/controller-manager/app/controllermanager.go startClusterController), and evicts with
        --enable-no-execute-taint-eviction (NoExecuteTaintManager.EnableNoExecuteTaintEviction)."""
        return self.enable_taint_manager and self.no_execute_taint_eviction and self.failover


DEFAULT_CONTROLLERS = Controllers()


def _string_slice(item: str, value: str) -> list[str]:
    """A StringSlice flag's value as pflag reads it (readAsCSV: one CSV record; "" is no value at all)."""
    if not value:
        return []
    try:
        return next(csv.reader([value], strict=True))
    except csv.Error as exc:
        raise ValueError(f"{item!r}: not a comma-separated list: {exc}") from None


def skipped_namespaces(patterns: Sequence[str]) -> SkippedNamespaces:
    """--skipped-propagating-namespaces, each pattern checked as the controller manager's options validation
    does (cmd/controller-manager/app/options/validation.go: "Invalid namespace regular expression")."""
    compiled = []
    for index, pattern in enumerate(patterns):
        try:
            compiled.append(compile_anchored(pattern))
        except ValueError as exc:
            raise ValueError(
                f"SkippedPropagatingNamespaces[{index}]: Invalid value: {gojson.quote(pattern)}: "
                f"Invalid namespace regular expression ({exc})"
            ) from None
    return SkippedNamespaces(tuple(patterns), tuple(compiled))
