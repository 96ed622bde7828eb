"""End to end, as users run it: `fleetrules eval SNAPSHOT` on fleets shaped like real ones (benchmarks/fleets.py),
against the plain-Python reference (benchmarks/reference.py) reading the same YAML, in the same run.

    .venv/bin/python benchmarks/e2e.py                      # regional shapes at 1000x10000: a few minutes
    .venv/bin/python benchmarks/e2e.py --sizes 5000x50000   # the large fleet

For each shape and size: the snapshot written once; then, each a fresh process timed whole (interpreter start,
reading, deciding, writing the answer to a file): the reference, `fleetrules eval -o json`, `-o text`, and
the same with `--rejections all` where asked; their peak RSS; the answer's bytes per binding; whether
fleetrules' clusters are the reference's for every binding. Ratios are to the reference of the same run, the
best of ``--runs`` runs each (the machines are shared and noisy).
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import fleets

HERE = Path(__file__).resolve().parent
FLEETRULES = [sys.executable, "-m", "engine"]
# the control plane the fleets are shaped for (Karmada ships these off): fleetrules' commands read it
CONTROL_PLANE = "enable-no-execute-taint-eviction=true feature-gates=Failover=true,WorkloadAffinity=true"
# the shapes the reference decides (divided is timed against fleetrules alone)
REFERENCE_SHAPES = {"regional", "unschedulable", "spread", "preferred", "interleaved", "namespaces"}
T = TypeVar("T")


def apart(function: Callable[..., T], *args: Any) -> T:
    """``function(*args)`` in a fresh interpreter, so that the fleets and answers it builds and reads never swell
    this process: a command started from it counts this process's pages in its own peak RSS (a forked child's
    ru_maxrss starts at its parent's), and the fleet generated here made a 940 MiB run of `eval` read 1,192."""
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        return pool.apply(function, args)


def write_fleet(shape: str, clusters: int, workloads: int, path: Path) -> None:
    with path.open("w") as handle:
        fleets.write(fleets.SHAPES[shape](clusters, workloads), handle)


def write_review(shape: str, clusters: int, workloads: int, snapshot: Path, base: Path, head: Path) -> None:
    """The fleet, its policies, and the policies with one namespace's moved to another region."""
    objects = fleets.SHAPES[shape](clusters, workloads)
    policies = [o for o in objects if o["kind"] == "PropagationPolicy"]
    changed = json.loads(json.dumps(policies))
    changed[0]["spec"]["placement"]["clusterAffinity"]["labelSelector"]["matchLabels"][fleets.REGION] = "region-01"
    for path, items in ((snapshot, objects), (base, policies), (head, changed)):
        with path.open("w") as handle:
            fleets.write(items, handle)


def same_clusters(ours: Path, theirs: Path) -> bool:
    return clusters_of(ours) == clusters_of(theirs)


def timed(command: list[str], out: Path) -> tuple[float, float]:
    """Seconds and peak RSS (MiB) of ``command`` run alone, its stdout to ``out``."""
    with out.open("wb") as handle:
        t0 = time.perf_counter()
        process = subprocess.Popen(command, stdout=handle, stderr=subprocess.DEVNULL)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - t0
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode not in (0, 1):
        raise RuntimeError(f"{' '.join(command)}: exit {process.returncode}")
    return seconds, usage.ru_maxrss / 1024


def best(command: list[str], out: Path, runs: int) -> tuple[float, float]:
    results = [timed(command, out) for _ in range(runs)]
    return min(s for s, _ in results), max(m for _, m in results)


def clusters_of(path: Path) -> dict[str, list[str]]:
    data = json.loads(path.read_text())
    return {p["binding"]: p["clusters"] for p in data["placements"]}


def review(shape: str, clusters: int, workloads: int) -> dict[str, float]:
    """Seconds of one `eval -o json`, a `diff` of two versions of the policies (one namespace's policy moved
    to another region) and a `resilience` N-1 sweep by cluster, each end to end on the same snapshot."""
    with tempfile.TemporaryDirectory(prefix="fleetrules-e2e-") as tmp:
        snapshot, base, head = Path(tmp) / "fleet.yaml", Path(tmp) / "base.yaml", Path(tmp) / "head.yaml"
        apart(write_review, shape, clusters, workloads, snapshot, base, head)
        out = Path(tmp) / "out"
        commands = {
            "eval": [*FLEETRULES, "eval", str(snapshot), "-o", "json"],
            "diff": [*FLEETRULES, "diff", "--base", str(base), "--head", str(head), "--facts", str(snapshot)],
            "resilience": [*FLEETRULES, "resilience", str(snapshot), "-o", "json"],
        }
        times = {}
        for name, command in commands.items():
            times[name], times[f"{name}_rss"] = timed(command, out)
        return times


def measure(shape: str, clusters: int, workloads: int, runs: int, every: bool) -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="fleetrules-e2e-") as tmp:
        snapshot = Path(tmp) / "fleet.yaml"
        apart(write_fleet, shape, clusters, workloads, snapshot)
        row: dict[str, Any] = {"shape": shape, "size": f"{clusters}x{workloads}", "mb": snapshot.stat().st_size / 1e6}
        answers = {}
        commands = {
            "json": [*FLEETRULES, "eval", str(snapshot), "-o", "json"],
            "text": [*FLEETRULES, "eval", str(snapshot)],
        }
        if every:
            commands["json-all"] = [*commands["json"], "--rejections", "all"]
        if shape in REFERENCE_SHAPES:
            commands = {"reference": [sys.executable, str(HERE / "reference.py"), str(snapshot)], **commands}
        for name, command in commands.items():
            answers[name] = Path(tmp) / f"{name}.out"
            row[name], row[f"{name}_rss"] = best(command, answers[name], runs)
            row[f"{name}_kb_per_binding"] = answers[name].stat().st_size / workloads / 1024
        if "reference" in row:
            row["same"] = apart(same_clusters, answers["json"], answers["reference"])
        return row


def main() -> None:
    os.environ["FLEETRULES_CONTROLLER"] = CONTROL_PLANE
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", default="regional,interleaved,spread,unschedulable,preferred,divided,namespaces")
    parser.add_argument("--sizes", default="1000x10000", help="comma-separated CLUSTERSxWORKLOADS")
    parser.add_argument("--runs", type=int, default=2, help="runs of each command; the best is kept")
    parser.add_argument("--all", action="store_true", help="also time --rejections all")
    parser.add_argument("--review", action="store_true", help="time diff and resilience against one eval instead")
    args = parser.parse_args()
    os.chdir(HERE.parent)
    if args.review:
        for size in args.sizes.split(","):
            c, w = (int(x) for x in size.split("x"))
            for shape in args.shapes.split(","):
                t = review(shape, c, w)
                print(
                    f"{shape} {size}: eval {t['eval']:.2f} s; diff {t['diff']:.2f} s ({t['diff'] / t['eval']:.1f}x);"
                    f" resilience N-1 {t['resilience']:.2f} s ({t['resilience'] / t['eval']:.1f}x);"
                    f" peak RSS MiB: eval {t['eval_rss']:.0f}, diff {t['diff_rss']:.0f},"
                    f" resilience {t['resilience_rss']:.0f} (the largest of its processes)",
                    flush=True,
                )
        return
    print("seconds end to end (best of runs), ratio to the reference, peak RSS, answer KB per binding")
    print(
        f"{'shape':>14} {'size':>11} {'MB':>6} {'reference':>9} {'json':>14} {'text':>14} {'RSS MiB':>8}"
        f" {'ref RSS':>8} {'KB/b':>5} same"
    )
    for size in args.sizes.split(","):
        c, w = (int(x) for x in size.split("x"))
        for shape in args.shapes.split(","):
            r = measure(shape, c, w, args.runs, args.all)
            ref = r.get("reference")

            def cell(name: str, r: dict[str, Any] = r, ref: float | None = ref) -> str:
                return f"{r[name]:6.2f}" + (f" ({r[name] / ref:4.1f}x)" if ref else "       ")

            line = (
                f"{shape:>14} {r['size']:>11} {r['mb']:6.1f} {ref or 0:9.2f} {cell('json')} {cell('text')}"
                f" {r['json_rss']:8.0f} {r.get('reference_rss', 0):8.0f} {r['json_kb_per_binding']:5.2f}"
                f" {r.get('same', '-')}"
            )
            if args.all:
                line += f"  --rejections all: {cell('json-all')}, {r['json-all_kb_per_binding']:.1f} KB/b"
            print(line, flush=True)


if __name__ == "__main__":
    main()
