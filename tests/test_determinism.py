"""Same rules and facts, byte-identical output, whatever the order of files and facts; each
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


def test_the_same_rules_in_another_file_or_line_name_their_own_place(tmp_path: Path) -> None:
    """Syntax trees are equal whatever their spans: the compiled program was cached by them alone, so the same
    policy read from a second file (or moved down a line) named the first file's place in every rejection."""
    facts = load_facts([ROOT / "examples" / "flink-ha" / "facts"])
    text = (ROOT / "examples" / "flink-ha" / "policy.fr").read_text()
    first, second, moved = tmp_path / "first.fr", tmp_path / "second.fr", tmp_path / "moved.fr"
    first.write_text(text)
    second.write_text(text)
    moved.write_text("# a comment above\n" + text)

    def sources(path: Path) -> set[str]:
        result = evaluate(load_rules([path]), facts)
        found = {r.source for p in result.placements for rs in p.rejected.values() for r in rs}
        return {s for s in found if "builtin" not in s}

    assert sources(first) and all(s.startswith(f"{first}:") for s in sources(first))
    assert all(s.startswith(f"{second}:") for s in sources(second))
    lines = {s.rsplit(":", 1)[1] for s in sources(first)}
    assert {s.rsplit(":", 1)[1] for s in sources(moved)} == {str(int(n) + 1) for n in lines}
