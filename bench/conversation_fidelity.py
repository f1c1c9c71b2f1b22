"""Recall and false-flag rate of the simulator fidelity checks on generated conversations.

Usage::

    python bench/conversation_fidelity.py                    # 500 conversations, 20% injected
    python bench/conversation_fidelity.py --count 2000 --seed 3 --error-rate 0.3

It generates seeded support conversations (``bench/_conversation_corpus.py``), injects a
simulator error into ``--error-rate`` of them (early stop, goal leak, persona break, in turn,
each in several wordings), runs ``aieval.conversations.check_fidelity`` over every record (with
whether the goal was met, as a run's goal check would give it), and prints recall per injected
kind and overall (target >= 90%) and the rate of clean conversations flagged (target <= 5%),
each with its 95% Wilson interval, then the CPU seconds. A flag of another kind than the one
injected still counts for recall (the conversation is invalid either way); the table shows it.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _conversation_corpus import KINDS, generate

from aieval.conversations import check_fidelity
from aieval.stats import wilson_interval


def _rate(hits: int, total: int) -> str:
    if total == 0:
        return "n/a"
    ci = wilson_interval(hits, total)
    low, high = ci.low, ci.high
    return f"{hits}/{total} = {hits / total:.1%} [{low:.1%}, {high:.1%}]"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=500)
    parser.add_argument("--error-rate", type=float, default=0.2)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    cpu = time.process_time()
    cases = generate(args.count, args.error_rate, args.seed)
    found: Counter[str] = Counter()
    total: Counter[str] = Counter()
    same_kind: Counter[str] = Counter()
    clean_flagged: Counter[str] = Counter()
    for case in cases:
        fidelity = check_fidelity(case.conversation, case.scenario, goal_met=case.goal_met)
        kind = case.injected or "clean"
        total[kind] += 1
        if not fidelity.valid:
            found[kind] += 1
            same_kind[kind] += any(f.kind == kind for f in fidelity.flags)
            if case.injected is None:
                clean_flagged.update(f.kind for f in fidelity.flags)
    cpu = time.process_time() - cpu
    print(f"{args.count} conversations, seed {args.seed}, {sum(total[k] for k in KINDS)} with an"
          f" injected error; load {os.getloadavg()[0]:.2f}")  # fmt: skip
    print("| injected | flagged (recall) | flagged as that kind |")
    print("|---|---|---|")
    for kind in KINDS:
        print(f"| {kind} | {_rate(found[kind], total[kind])} | {same_kind[kind]} |")
    errors = sum(total[k] for k in KINDS)
    print(f"| all injected | {_rate(sum(found[k] for k in KINDS), errors)} | |")
    flags = ", ".join(f"{k} {n}" for k, n in sorted(clean_flagged.items())) or "none"
    print(f"| clean (false flags) | {_rate(found['clean'], total['clean'])} | {flags} |")
    print(f"cpu {cpu:.3f} s ({cpu / max(args.count, 1) * 1e6:.0f} us per conversation)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
