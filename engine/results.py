"""Typed evaluation results (shared/spec/semantics.md S7)."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from engine.errors import Diagnostic


@dataclass(frozen=True)
class Reason:
    """Why a cluster was rejected for a binding: the rule, where it is written, and its message."""

    rule: str
    source: str  # FILE:LINE
    message: str


@dataclass(frozen=True)
class FactRef:
    """A fact a decision matched, as shown in explanations."""

    alias: str
    fact_type: str
    description: str
    derived_by: tuple[Explanation, ...] = ()


@dataclass(frozen=True)
class Explanation:
    rule: str
    source: str
    action: str  # what the rule did: "rejected", "preferred (+W)", "derived FACT"
    facts: tuple[FactRef, ...]


@dataclass(frozen=True)
class Placement:
    binding: str  # NS/NAME
    policy: str | None
    clusters: tuple[str, ...]  # selected
    # sorted by cluster name; shared views for large fleets (engine.views), equal to plain tuples and dicts
    feasible: Sequence[str]
    scores: Mapping[str, int]
    rejected: Mapping[str, tuple[Reason, ...]]
    unschedulable: bool
    message: str = ""  # why it is unschedulable, as the scheduler's condition message
    previous: tuple[str, ...] = ()  # spec.clusters before this evaluation
    affinity_term: str | None = None  # the clusterAffinities term used
    # (cluster → explanations of every decision about it), for `fleetrules explain`
    explanations: Mapping[str, tuple[Explanation, ...]] = field(default_factory=dict, compare=False, repr=False)


@dataclass(frozen=True)
class Result:
    placements: tuple[Placement, ...]
    evictions: tuple[Any, ...] = ()
    unmatched: tuple[str, ...] = ()  # bindings no policy selects
    now: dt.datetime | None = None
    warnings: tuple[Diagnostic, ...] = field(default=(), compare=False)

    def placement(self, binding: str) -> Placement:
        for p in self.placements:
            if p.binding == binding:
                return p
        raise KeyError(binding)
