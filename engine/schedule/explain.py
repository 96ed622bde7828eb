"""Explanations: the rules and facts behind a decision, built only when asked for."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence

from engine.backend import Decision, DecisionKind, Program, Session
from engine.compile import encoding
from engine.results import Explanation, FactRef


class Explainer:
    def __init__(self, program: Program, session: Session) -> None:
        self.compiled = program.compiled
        self.session = session

    def fact(self, alias: str, fact_id: str, seen: frozenset[str] = frozenset()) -> FactRef:
        fact = self.session.fact(fact_id) or {}
        fact_type, fields = encoding.shown(self.compiled.symbols, fact)
        description = " ".join(f"{k}={v}" for k, v in sorted(fields.items()))
        derived_by: tuple[Explanation, ...] = ()
        derivation = self.session.derivation(fact_id)
        if derivation is not None and fact_id not in seen:
            derived_by = (self.explanation(derivation, seen | {fact_id}),)
        return FactRef(alias.removeprefix("v_"), fact_type, description, derived_by)

    def explanation(
        self,
        d: Decision,
        seen: frozenset[str] = frozenset(),
        binding: str = "",
        match: tuple[tuple[tuple[str, str], ...], int] | None = None,
    ) -> Explanation:
        """What ``d`` matched (or ``match``, one of the matches a grouped decision stands for, with its
        weight); a scoped rule's policy_scope fact is shown as the ``binding`` it applied to."""
        rule = self.compiled.rules[d.rule]
        matched, weight = match if match is not None else (d.matched, d.weight)
        action = {
            DecisionKind.REJECT: "rejected",
            DecisionKind.PREFER: f"preferred ({weight:+d})",
            DecisionKind.DERIVE: "derived",
            DecisionKind.EVICT: "evicted",
        }[d.kind]
        matched = matched or tuple(sorted(("?", i) for i in d.deps))
        if rule.scoped and binding:
            matched = tuple((alias, binding if fact_id == d.binding else fact_id) for alias, fact_id in matched)
        facts = tuple(self.fact(alias, fact_id, seen) for alias, fact_id in matched if not alias.startswith("m"))
        return Explanation(rule.name, f"{rule.span.file}:{rule.span.line}", action, facts)

    def by_cluster(self, decisions: Sequence[Decision], binding: str) -> dict[str, tuple[Explanation, ...]]:
        out: dict[str, list[Explanation]] = defaultdict(list)
        for d in decisions:
            for match in d.each():
                out[d.cluster].append(self.explanation(d, binding=binding, match=match))
        return {c: tuple(sorted(e, key=_order)) for c, e in sorted(out.items())}


def _order(e: Explanation) -> tuple[object, ...]:
    """A total order: two peers' placements on one cluster give two explanations of one rule, listed in
    the same order whichever the engine (or the indexed joins) found first."""
    return (e.rule, e.source, e.action, tuple((f.alias, f.fact_type, f.description) for f in e.facts))


class Explanations(Mapping[str, tuple[Explanation, ...]]):
    """One placement's explanations (cluster → the explanations of every decision about it), built on first use:
    only `explain` and tests read them, and building them for every decision took a quarter of the evaluation
    time (docs/performance.md). A handle on what they are made of, the decisions that applied to the binding and
    the session's facts as asserted, which outlive later changes and the session (Session.fact): read after
    failover at ``now`` moved a peer, they name the peer's placement the decision matched."""

    __slots__ = ("_binding", "_data", "_decisions", "_explainer")

    def __init__(self, explainer: Explainer, decisions: Sequence[Decision], binding: str) -> None:
        self._explainer: Explainer | None = explainer
        self._decisions, self._binding = decisions, binding
        self._data: dict[str, tuple[Explanation, ...]] = {}

    def _get(self) -> dict[str, tuple[Explanation, ...]]:
        if self._explainer is not None:
            self._data = self._explainer.by_cluster(self._decisions, self._binding)
            self._explainer, self._decisions = None, ()
        return self._data

    def __getitem__(self, cluster: str) -> tuple[Explanation, ...]:
        return self._get()[cluster]

    def __iter__(self) -> Iterator[str]:
        return iter(self._get())

    def __len__(self) -> int:
        return len(self._get())
