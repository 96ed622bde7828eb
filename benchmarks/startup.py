"""Start-up: the commands that should answer at once, against an interpreter that imports what any of them
must (``python -c "import yaml, json"``), in the same run. Target: `--version` and `--help` within 4x that
baseline (issue 47: 10.7x before verbs were loaded when run).

    .venv/bin/python benchmarks/startup.py            # about 20 seconds
    .venv/bin/python benchmarks/startup.py --runs 20

Each command is a fresh process timed whole, in turn with the baseline (A B A B …); the figure is the median of
the ratios pair by pair, so that a machine's drift during the run cancels out.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPT = Path(sys.executable).parent / "fleetrules"
FLEETRULES = [str(SCRIPT)] if SCRIPT.exists() else [sys.executable, "-m", "engine"]
BASELINE = [sys.executable, "-c", "import yaml, json"]
COMMANDS = {
    "--version": ["--version"],
    "--help": ["--help"],
    "eval --help": ["eval", "--help"],
    "fmt (one file)": ["fmt", "--check", str(HERE.parent / "examples" / "flink-ha" / "policy.fr")],
}
TARGET = 4.0


def wall(command: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    return time.perf_counter() - start


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=10)
    args = parser.parse_args()
    wall(BASELINE)  # warm the file cache
    print(f"{'command':<18} {'median s':>9} {'baseline s':>11} {'ratio':>7}  target")
    slow = 0
    for name, arguments in COMMANDS.items():
        command = FLEETRULES + arguments
        wall(command)
        pairs = [(wall(command), wall(BASELINE)) for _ in range(args.runs)]
        ratio = statistics.median(a / b for a, b in pairs)
        shown = f"{TARGET:.0f}x" if name in ("--version", "--help") else ""
        slow += bool(shown) and ratio > TARGET
        print(
            f"{name:<18} {statistics.median(a for a, _ in pairs):>9.3f} "
            f"{statistics.median(b for _, b in pairs):>11.3f} {ratio:>6.2f}x  {shown}"
        )
    return 1 if slow else 0


if __name__ == "__main__":
    sys.exit(main())
