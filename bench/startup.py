"""Start-up time: ``import aieval`` and ``aieval --help`` in fresh processes.

Usage::

    python bench/startup.py              # 15 runs of each, median and best
    python bench/startup.py --runs 30

Each figure is the wall time of a new interpreter (``sys.executable``), so it includes Python's
own start-up, which is shown apart (``python -c pass``) with the ratio of each command to it and
to its budget (0.15 s for the import, 0.30 s for ``--help``, on an idle machine). Installed
peers are timed the same way when present (``import inspect_ai``, ``import deepeval``,
``import ragas``).
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import subprocess
import sys
import time

BUDGETS = {"import aieval": 0.15, "aieval --help": 0.30}
PEERS = ("inspect_ai", "deepeval", "ragas", "promptfoo")


def wall(argv: list[str], runs: int) -> tuple[float, float]:
    """Median and best wall time of ``argv`` over ``runs`` fresh processes."""
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        times.append(time.perf_counter() - start)
    return statistics.median(times), min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    args = parser.parse_args()
    py = sys.executable
    commands = {
        "python -c pass": [py, "-c", "pass"],
        "import aieval": [py, "-c", "import aieval"],
        "aieval --help": [py, "-m", "aieval", "--help"],
        "from aieval import run": [py, "-c", "from aieval import run"],
    }
    for peer in PEERS:
        if importlib.util.find_spec(peer) is not None:
            commands[f"import {peer} (peer)"] = [py, "-c", f"import {peer}"]
    bare, _ = wall(commands.pop("python -c pass"), args.runs)
    print(f"python -c pass: median {bare:.3f} s")
    print(f"{'command':<28}{'median':>9}{'best':>9}{'x bare':>9}{'x budget':>10}")
    for label, argv in commands.items():
        median, best = wall(argv, args.runs)
        budget = BUDGETS.get(label)
        ratio = f"{median / budget:.2f}" if budget else "-"
        print(f"{label:<28}{median:>8.3f}s{best:>8.3f}s{median / bare:>9.1f}{ratio:>10}")


if __name__ == "__main__":
    main()
