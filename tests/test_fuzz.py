"""Fuzzing the fact loader (issue 6): whatever bytes or YAML structure a fact file holds, loading
gives facts or a FactError naming the problem, never another exception. The parser's fuzzing is in
test_properties.py. Bounded here; for a longer run:

    FLEETRULES_FUZZ_EXAMPLES=20000 .venv/bin/python -m pytest tests/test_fuzz.py tests/test_properties.py
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import FactError, FleetrulesError, evaluate, load_facts, load_rules

EXAMPLES = int(os.environ.get("FLEETRULES_FUZZ_EXAMPLES", "150"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
FACTS = sorted((Path(__file__).parent.parent / "examples").glob("*/facts/*.yaml"))
KEYS = [
    "apiVersion",
    "kind",
    "metadata",
    "name",
    "namespace",
    "labels",
    "spec",
    "status",
    "clusters",
    "taints",
    "key",
    "effect",
    "value",
    "replicas",
    "resource",
    "gracefulEvictionTasks",
    "fromCluster",
    "conditions",
    "type",
    "aggregatedStatus",
    "health",
    "zones",
    "region",
    "timeAdded",
    "purgeMode",
]
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**70), 2**70),
    st.floats(allow_nan=True),
    st.text(max_size=12),
    st.sampled_from(
        ["Cluster", "ResourceBinding", "Deployment", "NoExecute", "2026-12-02T10:00:00Z", "True", "False", "apps/v1"]
    ),
)
VALUES = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=5)
    ),
    max_leaves=25,
)


def _load(text: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "facts.yaml"
        path.write_bytes(text)
        try:
            load_facts([path])
        except FactError as exc:
            assert exc.render()


@FUZZ
@given(st.binary(max_size=400))
def test_random_bytes(data: bytes) -> None:
    _load(data)


@FUZZ
@given(st.lists(VALUES, min_size=1, max_size=3))
def test_random_structures(documents: list[Any]) -> None:
    _load(yaml.safe_dump_all(documents).encode())


@FUZZ
@given(st.data())
def test_mutated_example_objects(data: st.DataObject) -> None:
    """An example's objects with one value replaced somewhere: facts or a FactError; and if the facts
    load, evaluating them with the example's rules gives a result or a rule/fact error."""
    path = data.draw(st.sampled_from(FACTS))
    documents = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    target: Any = data.draw(st.sampled_from(documents))
    for _ in range(data.draw(st.integers(0, 4))):
        if isinstance(target, dict) and target:
            key = data.draw(st.sampled_from(sorted(target, key=str)))
            if isinstance(target[key], (dict, list)) and data.draw(st.booleans()):
                target = target[key]
                continue
            target[key] = data.draw(VALUES)
            break
        if isinstance(target, list) and target:
            index = data.draw(st.integers(0, len(target) - 1))
            target[index] = data.draw(VALUES)
            break
    try:
        facts = load_facts(objects=documents)
    except FactError as exc:
        assert exc.render()
        return
    rules = sorted(path.parent.parent.glob("*.fr"))[:1]
    if rules:
        try:
            evaluate(load_rules(rules), facts)
        except FleetrulesError as exc:  # e.g. a mutated object no rule can use
            assert exc.render()
