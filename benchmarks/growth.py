"""How costs grow with the input: each command end to end on an input of size n, 2n and 4n, and the ratios of
their times (and peak RSS) from one size to the next. Linear growth is a ratio near 2 per doubling (1 at most for
what an early stop bounds); quadratic growth, 4.

    .venv/bin/python benchmarks/growth.py                  # every shape: about 3 minutes
    .venv/bin/python benchmarks/growth.py --shapes nesting

The shapes are those that once grew faster than their input (issue 45):
``warnings``   one fact file of n NoExecute ClusterTaintPolicies, one warning each (`eval`): every diagnostic
               re-split its whole file (2,000 / 4,000 / 8,000 warnings: 1.8 / 5.4 / 19.8 s);
``errors``     one fact file of n Clusters with a taint of no effect Karmada knows, one error each (`eval`);
``nesting``    a rule nested n parentheses deep (`check`): parsed quadratically, 40,000 deep in 9.2 s; now
               refused at the 101st level, so the time is the lexer's, linear in the text;
``tolerations`` one cluster of n NoExecute taints and a policy of n tolerations, none matching (`eval` with the
               taint manager on): matched pairwise, 1,000 x 1,000 in 20 s;
``timeline``   `simulate` of a 200-cluster, 2,000-workload fleet through n events (taint and untaint in turn):
               the whole timeline held (1,000 x 10,000 and 600 events: 95 s, 2.3 GB).
Times are the best of ``--runs`` (the machines are shared and noisy); the start-up of the interpreter, the same
at every size, is measured once (`fleetrules --version`) and taken off before the ratios are formed.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import fleets  # noqa: E402

FLEETRULES = [sys.executable, "-m", "engine"]
TAINT_MANAGER = ["--controller", "enable-no-execute-taint-eviction=true", "--controller", "feature-gates=Failover=true"]
POLICY = "policy all {\n  select { kind Deployment }\n}\n"


def _deployment() -> str:
    return "apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: web, namespace: default}\nspec: {replicas: 1}\n"


def warnings(n: int, folder: Path) -> list[str]:
    policy = (
        "apiVersion: policy.karmada.io/v1alpha1\nkind: ClusterTaintPolicy\nmetadata: {{name: p{i}}}\nspec:\n"
        "  targetClusters: {{clusterNames: [c1]}}\n  addOnConditions: [{{conditionType: Ready, operator: In, "
        "statusValues: ['False']}}]\n  taints: [{{key: k{i}, effect: NoExecute}}]\n"
    )
    cluster = "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: c1}\nspec: {}\n"
    (folder / "facts.yaml").write_text("---\n".join([cluster, _deployment(), *(policy.format(i=i) for i in range(n))]))
    (folder / "p.fr").write_text(POLICY)
    return ["eval", str(folder / "p.fr"), "--facts", str(folder / "facts.yaml")]


def errors(n: int, folder: Path) -> list[str]:
    cluster = (
        "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {{name: c{i}}}\n"
        "spec:\n  taints: [{{key: k, effect: Sometimes}}]\n"
    )
    (folder / "facts.yaml").write_text("---\n".join(cluster.format(i=i) for i in range(n)))
    (folder / "p.fr").write_text(POLICY)
    return ["eval", str(folder / "p.fr"), "--facts", str(folder / "facts.yaml")]


def nesting(n: int, folder: Path) -> list[str]:
    inner = "(" * n + 'b.name == "a"' + ")" * n
    rule = f'rule x {{\n  when binding b and cluster c ({inner})\n  then reject c for b "x"\n}}\n'
    (folder / "p.fr").write_text(rule)
    return ["check", str(folder / "p.fr")]


def tolerations(n: int, folder: Path) -> list[str]:
    taints = "".join(f"    - {{key: k{i}, value: v, effect: NoExecute}}\n" for i in range(n))
    cluster = "apiVersion: cluster.karmada.io/v1alpha1\nkind: Cluster\nmetadata: {name: c1}\n"
    cluster += "spec:\n  taints:\n" + taints
    binding = (
        "apiVersion: work.karmada.io/v1alpha2\nkind: ResourceBinding\nmetadata: {name: web-deployment, namespace: "
        "default}\nspec:\n  resource: {apiVersion: apps/v1, kind: Deployment, name: web, namespace: default}\n"
        "  clusters: [{name: c1, replicas: 1}]\n"
    )
    (folder / "facts.yaml").write_text("---\n".join([cluster, _deployment(), binding]))
    tolerate = "".join(f"  tolerate x{i} = v : NoExecute\n" for i in range(n))
    (folder / "p.fr").write_text("policy p {\n  select { kind Deployment }\n" + tolerate + "}\n")
    return ["eval", str(folder / "p.fr"), "--facts", str(folder / "facts.yaml"), *TAINT_MANAGER]


def timeline(n: int, folder: Path) -> list[str]:
    fleet = folder / "fleet.yaml"
    if not fleet.exists():
        with fleet.open("w") as handle:
            fleets.write(fleets.SHAPES["regional"](200, 2000), handle)
    events = []
    for i in range(n):
        cluster = f"member-{(i // 2) % 200:05d}"
        kind = "taint" if i % 2 == 0 else "untaint"
        events.append({"at": f"{i + 1}m", kind: {"cluster": cluster, "key": "outage", "effect": "NoExecute"}})
    (folder / "events.yaml").write_text(yaml.safe_dump({"start": "2026-01-01T00:00:00Z", "events": events}))
    return ["simulate", str(fleet), "--events", str(folder / "events.yaml"), "-o", "json", *TAINT_MANAGER]


# each shape, its smallest size, and the exit code its command ends with (anything else is a failure)
SHAPES: dict[str, tuple[Callable[[int, Path], list[str]], int, int]] = {
    "warnings": (warnings, 2000, 0),
    "errors": (errors, 2000, 2),
    "nesting": (nesting, 20000, 1),
    "tolerations": (tolerations, 1000, 0),
    "timeline": (timeline, 150, 0),
}


def timed(command: list[str], code: int = 0) -> tuple[float, float]:
    """Seconds and peak RSS (MiB) of ``command``, its output thrown away; it must exit with ``code``."""
    with tempfile.TemporaryFile() as stderr:  # a file: a pipe left unread would stall a command that says much
        t0 = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=stderr)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - t0
        if os.waitstatus_to_exitcode(status) != code:
            stderr.seek(0)
            said = stderr.read().decode(errors="replace")[-500:]
            raise RuntimeError(f"{' '.join(command)[:200]}: exit {os.waitstatus_to_exitcode(status)}: {said}")
    return seconds, usage.ru_maxrss / 1024


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--shapes", default=",".join(SHAPES))
    parser.add_argument("--runs", type=int, default=2, help="runs of each command; the best is kept")
    args = parser.parse_args()
    os.chdir(HERE.parent)
    start_up = min(timed([*FLEETRULES, "--version"])[0] for _ in range(args.runs))
    print(f"start-up (fleetrules --version): {start_up:.2f} s, taken off each time below")
    print(f"{'shape':>12} {'n':>7} {'seconds':>8} {'x prev':>7} {'RSS MiB':>8} {'x prev':>7}")
    for name in args.shapes.split(","):
        make, smallest, code = SHAPES[name]
        previous: tuple[float, float] | None = None
        with tempfile.TemporaryDirectory(prefix="fleetrules-growth-") as tmp:
            for n in (smallest, 2 * smallest, 4 * smallest):
                command = [*FLEETRULES, *make(n, Path(tmp))]
                runs = [timed(command, code) for _ in range(args.runs)]
                seconds, rss = max(0.01, min(s for s, _ in runs) - start_up), max(m for _, m in runs)
                ratio = f"{seconds / previous[0]:7.2f}" if previous else f"{'':>7}"
                rss_ratio = f"{rss / previous[1]:7.2f}" if previous else f"{'':>7}"
                print(f"{name:>12} {n:>7} {seconds:8.2f} {ratio} {rss:8.0f} {rss_ratio}", flush=True)
                previous = (seconds, rss)


if __name__ == "__main__":
    main()
