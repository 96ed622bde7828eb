"""Same rules and facts, byte-identical output, whatever the order of files and facts (S7); each
evaluation isolated from every other (no state leaks between evaluations or programs)."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import evaluate, load_facts, load_rules, to_json
from engine.backend.durable import _SESSIONS

ROOT = Path(__file__).resolve().parent.parent
STORIES = ["flink-ha", "training-colocation"]
RULES = [ROOT / "examples" / s / "policy.fr" for s in STORIES]


def _objects() -> list[dict[str, Any]]:
    out = []
    for story in STORIES:
        for path in sorted((ROOT / "examples" / story / "facts").glob("*.yaml")):
            out += [d for d in yaml.safe_load_all(path.read_text()) if d]
    return out


OBJECTS = _objects()
BASELINE = to_json(evaluate(load_rules(RULES), load_facts(objects=OBJECTS)))


@settings(max_examples=15, deadline=None)
@given(st.randoms(use_true_random=False))
def test_shuffled_facts_and_rule_files_give_identical_output(rng: random.Random) -> None:
    objects = list(OBJECTS)
    rng.shuffle(objects)
    rules = list(RULES)
    rng.shuffle(rules)
    assert to_json(evaluate(load_rules(rules), load_facts(objects=objects))) == BASELINE


def test_evaluating_twice_gives_the_same_result_and_leaves_nothing_behind() -> None:
    rules, facts = load_rules(RULES), load_facts(objects=OBJECTS)
    first, second = evaluate(rules, facts), evaluate(rules, facts)
    assert first == second and to_json(first) == BASELINE
    assert not _SESSIONS, "sessions are closed after each evaluation"


def test_two_programs_side_by_side(tmp_path: Path) -> None:
    """Two rule sets in one process do not see each other's facts or decisions."""
    strict = tmp_path / "strict.fr"
    strict.write_text("policy flink-ha { select { kind FlinkDeployment } clusters { names member3 } }\n")
    loose = load_rules(RULES)
    tight = load_rules([strict])
    facts = load_facts(objects=OBJECTS)
    a1 = evaluate(loose, facts)
    b1 = evaluate(tight, facts)
    a2 = evaluate(loose, facts)
    assert a1 == a2
    assert {p.clusters for p in b1.placements} == {("member3",)}
