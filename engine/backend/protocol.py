"""The backend protocol: sessions, programs and the decisions rules make (see engine.backend)."""

from __future__ import annotations

import enum
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from engine.compile.program import CompiledProgram


class DecisionKind(enum.StrEnum):
    REJECT = "reject"
    PREFER = "prefer"
    EVICT = "evict"
    DERIVE = "derive"


# the dependencies of a planned rule's decision: none kept, as it is made anew whenever a fact changes
NO_DEPS: frozenset[str] = frozenset()


@dataclass(slots=True, unsafe_hash=True)
class Decision:
    """One action of one rule firing: the rule's index, what it matched, and what it decided. A fleet makes
    millions of them (slots: a fifth of the memory of a dict-backed instance). Never changed once made, but
    not ``frozen``: a frozen dataclass sets each field through ``object.__setattr__``, which made creating
    one six times as slow (1.9 µs against 0.3 µs; a fifth of a 1,000-cluster fleet's evaluation)."""

    rule: int
    # the fact ids the decision depends on (retracting one withdraws it); NO_DEPS for a planned rule's
    # decision, which the session makes anew whenever a fact changes (engine.backend.durable)
    deps: frozenset[str]
    binding: str = ""  # the binding fact id (reject, prefer, evict), or the policy_scope fact id (scoped rules)
    cluster: str = ""  # the cluster name
    message: str = ""  # the rendered message; of a derivation, the derived fact's id
    weight: int = 0
    kind: DecisionKind = DecisionKind.REJECT
    reason: str = ""
    matched: tuple[tuple[str, str], ...] = ()  # (alias, fact id), for explanations
    # of a scoped rule: (list field, value): not for a binding whose list field holds the value
    exempt: tuple[tuple[str, str], ...] = ()
    # a preference standing for several matches that differ in one fact (an indexed join counted them):
    # (alias, fact id) of each; ``weight`` is their sum, and ``matched`` names the first
    group: Sequence[tuple[str, str]] = ()  # any sequence; an engine may give one that is listed only when read

    def each(self) -> tuple[tuple[tuple[tuple[str, str], ...], int], ...]:
        """The matches the decision stands for, each with its weight: (matched, weight)."""
        if not self.group:
            return ((self.matched, self.weight),)
        weight = self.weight // len(self.group)
        return tuple(
            (tuple(sorted((a, fact if a == alias else i) for a, i in self.matched)), weight)
            for alias, fact in self.group
        )


# a batch (Session.place) whose facts are asserted one by one: its common part, and each fact's part and id
OneByOne = tuple[dict[str, Any], list[tuple[Mapping[str, Any], str]]]


def place_each(
    session: Session,
    old: OneByOne | None,
    fact_type: str,
    common: Mapping[str, Any],
    parts: Sequence[Mapping[str, Any]],
) -> OneByOne:
    """``Session.place`` as facts asserted one by one, in ``session``: those of the batch ``old``'s facts alike (the
    same common part, an equal part) staying asserted (a binding leaving one of fifty clusters changes one fact, not
    a hundred), the others retracted in reverse order, then the new ones asserted in order; the batch now."""
    alike: dict[tuple[Any, ...], list[str]] = defaultdict(list)
    before = old[1] if old is not None and old[0] == common else []
    try:
        for part, fact_id in before:
            alike[tuple(part.items())].append(fact_id)
        kept = [alike[key].pop(0) if alike.get(key := tuple(part.items())) else None for part in parts]
    except TypeError:  # a list among the values: every fact anew, none alike
        kept = [None] * len(parts)
    staying = set(kept)
    for _, fact_id in reversed(old[1] if old is not None else []):
        if fact_id not in staying:
            session.retract(fact_id)
    made = [
        (part, fact_id if fact_id is not None else session.assert_fact(fact_type, {**common, **part}))
        for part, fact_id in zip(parts, kept, strict=True)
    ]
    return dict(common), made


class Session(Protocol):
    """The facts and decisions of one evaluation."""

    def assert_fact(self, fact_type: str, props: Mapping[str, Any]) -> str:
        """Assert a fact (and what rules derive from it); returns its id."""

    def place(
        self, batch_id: str | None, fact_type: str, common: Mapping[str, Any], parts: Sequence[Mapping[str, Any]]
    ) -> str:
        """Make the facts of the batch ``batch_id`` (None: a new one) ``common | part`` for each of ``parts`` (a
        binding's placements: its part and each cluster's); returns the batch's id, which ``retract`` takes.
        How the facts are kept is the session's (a Batch: its facts made as plans visit them)."""

    def retract(self, fact_id: str) -> None:
        """Retract a fact (or a batch), withdrawing every decision and derived fact that depended on it."""

    def decisions(self, owner: str, asking: str | None = None) -> Sequence[Decision]:
        """The reject and prefer decisions about the binding (or scope) fact ``owner``. ``asking``: the name of the
        binding they are for, a hint that the decisions its name exempts (``("name", asking)``: its own placements,
        engine.compile.lift) may be left out. The caller drops them itself: an engine may ignore the hint."""

    def decision_parts(self, owner: str) -> tuple[Sequence[Decision], ...]:
        """The same decisions in parts, always as many and in the same order (the engine's, then each planned
        rule's). An engine may hand back the very part object while its decisions do not change: the caller then
        skips reading it again (shared results are updated from the parts that are new objects alone). A saving,
        never a condition: an engine that makes every part anew gives the same answers
        (tests/test_backend_protocol.py)."""

    def revision(self, owner: str) -> int:
        """A number that changes whenever the decisions about ``owner`` change."""

    def release(self, owner: str) -> None:
        """Let go of what is kept of the decisions about ``owner`` (made again if asked for again): an evaluation
        does for a policy's scope once the policy's last binding is scheduled."""

    def evictions(self) -> Sequence[Decision]:
        """The evict decisions in force."""

    def fact(self, fact_id: str) -> Mapping[str, Any] | None:
        """A fact as asserted: one retracted too, in an explained session (an explanation read after later
        changes names the facts its decision matched, as they were; an id is never used twice)."""

    def derivation(self, fact_id: str) -> Decision | None:
        """The decision that derived the fact, if a rule derived it."""

    def close(self) -> None:
        """Release the session's rules; it takes no more facts, and ``fact`` and ``derivation`` still answer
        (explanations are read after the evaluation)."""


class Program(Protocol):
    """A compiled program registered with the backend, run by as many sessions as needed."""

    compiled: CompiledProgram

    def session(self, explained: bool = True) -> Session:
        """A new session; ``explained``: its decisions name every match they stand for (Decision.group), as
        explanations need; without, a decision standing for many matches keeps their count alone."""
