"""Building rule sets and facts for table tests."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from engine import Result, evaluate, load_facts, load_rules
from tests.gates import ON


def cluster(name: str, labels: Mapping[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.karmada.io/v1alpha1",
        "kind": "Cluster",
        "metadata": {"name": name, "labels": dict(labels or {})},
        "spec": spec,
    }


def workload(
    name: str, labels: Mapping[str, str] | None = None, namespace: str = "default", kind: str = "Deployment"
) -> dict[str, Any]:
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace, "labels": dict(labels or {})},
    }


def binding(
    name: str, clusters: Iterable[str] = (), namespace: str = "default", kind: str = "Deployment", **spec: Any
) -> dict[str, Any]:
    return {
        "apiVersion": "work.karmada.io/v1alpha2",
        "kind": "ResourceBinding",
        "metadata": {"name": f"{name}-{kind.lower()}", "namespace": namespace},
        "spec": {
            "resource": {"apiVersion": "apps/v1", "kind": kind, "name": name, "namespace": namespace},
            "clusters": [{"name": c} for c in clusters],
            **spec,
        },
    }


def run(tmp_path: Path, rules: str, objects: Iterable[Mapping[str, Any]]) -> Result:
    path = tmp_path / "rules.fr"
    path.write_text(rules)
    return evaluate(load_rules([path]), load_facts(objects=list(objects)), controllers=ON)


def key(name: str, namespace: str = "default", kind: str = "Deployment") -> str:
    return f"{namespace}/{name}-{kind.lower()}"
