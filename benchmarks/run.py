"""Benchmark: generated fleets, fleetrules against a plain-Python baseline making the same decisions.

    .venv/bin/python benchmarks/run.py --sizes 20x200,100x1000

For each size (clusters x bindings) it reports: parse+check of the rules, loading the facts from
YAML, the full evaluation and decisions per second, peak RSS of a fresh process, and the same
placements computed by an indexed plain-Python baseline (cluster affinity by label, required
anti-affinity by group, one cluster per binding), measured in the same run; the result must be
identical. Figures are also given as ratios to the baseline, since the machines are shared.
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import yaml

RULES = """policy fleet {
  select { kind Deployment }
  clusters { labels { env = prod } }
  tolerate dedicated = batch : NoSchedule
  spread by cluster max 1
  workload anti-affinity by app.example.com/group
}
"""


def fleet(clusters: int, bindings: int, seed: int = 7) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    objects: list[dict[str, Any]] = []
    for i in range(clusters):
        taints = [{"key": "dedicated", "value": "batch", "effect": "NoSchedule"}] if i % 10 == 0 else []
        taints += [{"key": "maintenance", "effect": "NoSchedule"}] if i % 25 == 0 else []
        objects.append(
            {
                "apiVersion": "cluster.karmada.io/v1alpha1",
                "kind": "Cluster",
                "metadata": {"name": f"c{i:05d}", "labels": {"env": "prod" if i % 5 else "dev", "region": f"r{i % 7}"}},
                "spec": {"region": f"r{i % 7}", "zones": [f"z{i % 3}"], "taints": taints},
            }
        )
    groups = max(1, bindings // 8)
    for i in range(bindings):
        labels = {"app.example.com/group": f"g{rng.randrange(groups)}"}
        metadata = {"name": f"w{i:06d}", "namespace": f"ns{i % 5}", "labels": labels}
        objects.append({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": metadata})
    return objects


def baseline(objects: list[dict[str, Any]]) -> dict[str, list[str]]:
    """The same placements, computed directly with indexes: the yardstick."""
    clusters = [o for o in objects if o["kind"] == "Cluster"]
    feasible = []
    for c in clusters:
        if c["metadata"]["labels"].get("env") != "prod":
            continue
        if any(t["key"] != "dedicated" for t in c["spec"]["taints"]):  # only dedicated=batch is tolerated
            continue
        feasible.append(c["metadata"]["name"])
    feasible.sort()
    used: dict[tuple[str, str], set[str]] = defaultdict(set)
    out = {}
    workloads = sorted(
        (o for o in objects if o["kind"] == "Deployment"),
        key=lambda o: (o["metadata"]["namespace"], o["metadata"]["name"]),
    )
    for w in workloads:
        group = (w["metadata"]["namespace"], w["metadata"]["labels"]["app.example.com/group"])
        taken = used[group]
        choice = next((c for c in feasible if c not in taken), None)
        key = f"{w['metadata']['namespace']}/{w['metadata']['name']}-deployment"
        out[key] = [choice] if choice else []
        if choice:
            taken.add(choice)
    return out


def measure(clusters: int, bindings: int) -> dict[str, Any]:
    """Runs in a fresh process (so peak RSS is this size's)."""
    from engine import evaluate, load_facts, load_rules

    objects = fleet(clusters, bindings)
    with tempfile.TemporaryDirectory() as tmp:
        rules_path, facts_path = Path(tmp) / "fleet.fr", Path(tmp) / "facts.yaml"
        rules_path.write_text(RULES)
        facts_path.write_text(yaml.safe_dump_all(objects))
        t0 = time.perf_counter()
        rules = load_rules([rules_path])
        t1 = time.perf_counter()
        facts = load_facts([facts_path])
        t2 = time.perf_counter()
        result = evaluate(rules, facts)
        t3 = time.perf_counter()
    b0 = time.perf_counter()
    expected = baseline(objects)
    b1 = time.perf_counter()
    actual = {p.binding: list(p.clusters) for p in result.placements}
    return {
        "size": f"{clusters}x{bindings}",
        "check_s": t1 - t0,
        "load_s": t2 - t1,
        "eval_s": t3 - t2,
        "decisions_per_s": bindings / (t3 - t2),
        "baseline_s": b1 - b0,
        "ratio": (t3 - t2) / max(b1 - b0, 1e-9),
        "peak_rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "same_placements": actual == expected,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="20x200,100x1000", help="comma-separated CLUSTERSxBINDINGS")
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        c, b = (int(x) for x in args.one.split("x"))
        print(json.dumps(measure(c, b)))
        return
    columns = ("size", "check", "load", "eval", "dec/s", "baseline", "ratio", "RSS MiB")
    widths = (12, 7, 7, 8, 8, 9, 8, 8)
    print(" ".join(f"{c:>{w}}" for c, w in zip(columns, widths, strict=True)) + " same")
    for size in args.sizes.split(","):
        run = subprocess.run([sys.executable, __file__, "--one", size], capture_output=True, text=True, check=True)
        r = json.loads(run.stdout.strip().splitlines()[-1])
        print(
            f"{r['size']:>12} {r['check_s']:7.2f} {r['load_s']:7.2f} {r['eval_s']:8.2f} {r['decisions_per_s']:8.0f}"
            f" {r['baseline_s']:9.4f} {r['ratio']:7.0f}x {r['peak_rss_mib']:8.0f} {r['same_placements']}"
        )


if __name__ == "__main__":
    main()
