"""durable-rules 2.0.28 as measured here; the compiler and runtime are built around these
(docs/architecture.md). Each probe runs in a subprocess,
since some of them crash the interpreter."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

PRELUDE = """
from durable import engine
out = []
def run(name):
    return lambda c: out.append((name, sorted(f["id"] for f in c._m.values())))
host = engine.Host()
def load(rules, facts):
    host.set_rulesets({"rs": {name: dict(body, run=run(name)) for name, body in rules.items()}})
    for fact in facts:
        host.assert_fact("rs", fact)
    print(sorted(out))
"""


def probe(code: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", PRELUDE + textwrap.dedent(code)], capture_output=True, text=True, timeout=timeout
    )


def test_an_or_mixing_a_literal_and_a_join_loses_the_literal_branch() -> None:
    result = probe(
        """
        rule = {"all": [{"b": {"t": "b"}}, {"x": {"$and": [{"t": "x"}, {"$or": [{"k": ""}, {"k": {"b": "k"}}]}]}}]}
        facts = [{"id": "b", "t": "b", "k": "v"}, {"id": "x1", "t": "x", "k": "v"}, {"id": "x2", "t": "x", "k": ""}]
        load({"r": rule}, facts)
        """
    )
    assert result.stdout.strip() == "[('r', ['b', 'x1'])]"  # x2 (k == "") should have matched too


def test_a_fact_fills_one_pattern_of_a_match() -> None:
    result = probe(
        """
        rule = {"all": [{"c": {"t": "c"}}, {"d": {"$and": [{"t": "c"}, {"n": {"c": "n"}}]}}]}
        load({"r": rule}, [{"id": "c1", "t": "c", "n": "a"}])
        """
    )
    assert result.stdout.strip() == "[]"


def test_a_join_on_a_property_the_other_fact_lacks_fails_the_assert() -> None:
    result = probe(
        """
        rule = {"all": [{"b": {"t": "b"}}, {"c": {"$and": [{"t": "c"}, {"$neq": {"r": {"b": "home"}}}]}}]}
        facts = [{"id": "c1", "t": "c", "r": "eu"}, {"id": "b1", "t": "b", "home": "us"}, {"id": "b2", "t": "b"}]
        load({"r": rule}, facts)
        """
    )
    # "Could not assert fact, error code: 311": fleetrules sets every referenced property (engine.ir.ABSENT)
    assert result.returncode == 1 and "error code: 311" in result.stderr


def test_order_joins_the_compiler_no_longer_emits() -> None:
    """Alone, a `$lt` join answers right; in larger rule sets such joins crashed (fleetrules evaluates
    joins other than equality in Python, see engine.compile._is_guard)."""
    result = probe(
        """
        lt = {"all": [{"b": {"t": "b"}}, {"c": {"$and": [{"t": "c"}, {"$lt": {"r": {"b": "home"}}}]}}]}
        gt = {"all": [{"b": {"t": "b"}}, {"c": {"$and": [{"t": "c"}, {"$gt": {"r": {"b": "home"}}}]}}]}
        facts = [{"id": "c1", "t": "c", "r": "eu"}, {"id": "c2", "t": "c", "r": "us"}]
        facts.append({"id": "b1", "t": "b", "home": "us"})
        load({"lt": lt, "gt": gt}, facts)
        """
    )
    assert result.stdout.strip() == "[('lt', ['b1', 'c1'])]"


def test_rules_with_order_and_inequality_joins_run_reliably(tmp_path: Path) -> None:
    """This rule set crashed durable-rules in 7 to 10 of 10 runs while `!=` joins ran in the engine."""
    (tmp_path / "r.fr").write_text(
        "policy p { select { kind Deployment } }\n"
        'rule far { when binding b and cluster c (c.region != b.labels.home) then reject c for b "far" }\n'
        'rule other { when binding b and cluster c (c.name != b.name and c.region < "z")'
        " then prefer c for b weight 1 }\n"
    )
    script = textwrap.dedent(
        f"""
        from engine import evaluate, load_facts, load_rules
        objects = [
            {{"kind": "Cluster", "metadata": {{"name": "a"}}, "spec": {{"region": "eu"}}}},
            {{"kind": "Cluster", "metadata": {{"name": "gold"}}, "spec": {{"region": "us"}}}},
            {{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {{"name": "x", "labels": {{"home": "us"}}}}}},
            {{"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {{"name": "y"}}}},
        ]
        result = evaluate(load_rules([{str(tmp_path / "r.fr")!r}]), load_facts(objects=objects))
        print([p.feasible for p in result.placements])
        """
    )
    for _ in range(5):
        run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stderr[-2000:]
        assert run.stdout.strip() == "[('gold',), ()]"  # y has no home label: it differs from every region


def test_more_than_511_tests_under_one_node_hang_ruleset_creation() -> None:
    """A node's children live in a 512-slot open-addressing table searched until a free slot turns
    up (rete.c, NEXT_BUCKET_LENGTH): the 512th distinct test of one field never returns."""
    code = """
        rules = {f"r{i}": {"all": [{"m": {"$and": [{"t": "b"}, {"team": f"t{i}"}]}}]} for i in range(%d)}
        load(rules, [])
        """
    assert probe(code % 500).returncode == 0
    try:
        hung = probe(code % 520, timeout=10).returncode != 0  # it registers in milliseconds when it works
    except subprocess.TimeoutExpired:
        hung = True
    assert hung


def test_a_program_larger_than_one_ruleset_is_split(tmp_path: Path) -> None:
    """engine.runtime.PATTERNS_PER_RULESET: 600 rules testing one label against distinct values
    register (one ruleset would hang, above) and decide as one program."""
    from engine.backend.durable import PATTERNS_PER_RULESET
    from tests.helpers import cluster, key, run, workload

    rules = "policy p { select { kind Deployment } }\n" + "".join(
        f'rule r{i} {{ when binding b (b.labels.team == "t{i}") and cluster c (c.labels.tier == "x")'
        f' then reject c for b "team {i}" }}\n'
        for i in range(600)
    )
    result = run(
        tmp_path,
        rules,
        [cluster("a", {"tier": "x"}), cluster("b"), workload("w", {"team": "t599"}), workload("v", {"team": "t3"})],
    )
    assert PATTERNS_PER_RULESET < 600 * 2  # two rulesets at least
    assert [r.message for r in result.placement(key("w")).rejected["a"]] == ["team 599"]
    assert [r.message for r in result.placement(key("v")).rejected["a"]] == ["team 3"]
