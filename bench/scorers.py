"""Throughput of aieval's rouge_l and token_f1 against peer implementations, in one run.

Usage: ``python bench/scorers.py [--pairs 20000] [--seed 0] [--slow-pairs 2000] [--repeat 3]
[--rounds 7]``

Builds one corpus of prediction/reference pairs (20-200 whitespace tokens, Zipf-distributed
words, predictions edited from their references), times every implementation on it, checks that
aieval's rouge_l (per pair and ``rouge_l.batch``) equals rouge-score's on whitespace tokens for
every pair, and prints a table of pairs/s with ratios. Then, on a shared machine, the steadier
comparison with rouge-score-rs: blocks of 500 pairs timed in turn (rouge-score-rs per pair, aieval
per pair, ``rouge_l.batch``) for ``--rounds`` rounds, and the median of the per-block CPU-time
ratios. A peer that is not installed is skipped with a note.
"""

from __future__ import annotations

import argparse
import functools
import gc
import importlib.metadata
import os
import platform
import random
import statistics
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from aieval.scorers import rouge_l, token_f1

Pair = tuple[str, str]

_COMMON_TEXT = (
    "the of and to a in is you that it for on your with as we be this are or was by can not "
    "have will at from if order an all but more please our has one which when refund they so "
    "their there been would do about any out time shipping also only other may up days some new "
    "account payment item return what how after into like two within need should could back card "
    "email number us make just help support delivery package customer then these over business "
    "service first most product store price free like over charge policy status tracking free"
)
_SYLLABLES = "ka lo mi ner sto tra vel bi con dor ex fin gra hol ip jun"


@dataclass(frozen=True)
class Result:
    """One timed implementation."""

    group: str
    name: str
    pairs: int
    seconds: float
    #: CPU seconds of this process (all its threads) for the same run.
    cpu_seconds: float
    note: str = ""

    @property
    def rate(self) -> float:
        return self.pairs / self.seconds

    @property
    def cpu_rate(self) -> float:
        return self.pairs / self.cpu_seconds


def make_vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    """Common English words first, then made-up words for the long tail."""
    syllables = _SYLLABLES.split()
    words = list(dict.fromkeys(_COMMON_TEXT.split()))
    while len(words) < size:
        words.append("".join(rng.choices(syllables, k=rng.randint(1, 4))))
    return words


def make_text(rng: random.Random, vocab: list[str], weights: list[float], n: int) -> list[str]:
    """n tokens: Zipf-distributed words, sentence-initial capitals, some punctuation."""
    tokens = rng.choices(vocab, weights, k=n)
    sentence_start = True
    for i, token in enumerate(tokens):
        if sentence_start:
            tokens[i] = token.capitalize()
        sentence_start = rng.random() < 0.07
        if sentence_start:
            tokens[i] += "."
        elif rng.random() < 0.04:
            tokens[i] += ","
    return tokens


def edit(rng: random.Random, ref: list[str], vocab: list[str], weights: list[float]) -> list[str]:
    """A prediction: keep most reference tokens, substitute, drop, insert and swap some."""
    pred: list[str] = []
    for token in ref:
        roll = rng.random()
        if roll < 0.62:
            pred.append(token)
        elif roll < 0.80:
            pred.append(rng.choices(vocab, weights)[0])
        elif roll < 0.90:
            pred.extend([token, rng.choices(vocab, weights)[0]])
        # else: dropped
    for _ in range(len(pred) // 25):
        i = rng.randrange(len(pred) - 1)
        pred[i], pred[i + 1] = pred[i + 1], pred[i]
    while len(pred) < 20:
        pred.append(rng.choices(vocab, weights)[0])
    return pred[:200]


def make_corpus(n_pairs: int, seed: int) -> list[Pair]:
    """Prediction/reference pairs of 20-200 whitespace tokens (mean about 110)."""
    rng = random.Random(seed)
    vocab = make_vocabulary(rng)
    weights = [1.0 / (rank + 1) ** 1.05 for rank in range(len(vocab))]
    pairs = []
    for _ in range(n_pairs):
        ref = make_text(rng, vocab, weights, rng.randint(20, 200))
        pairs.append((" ".join(edit(rng, ref, vocab, weights)), " ".join(ref)))
    return pairs


class WhitespaceTokenizer:
    """rouge-score tokenizer protocol: split on whitespace, nothing else."""

    def tokenize(self, text: str) -> list[str]:
        return text.split()


def counter_token_f1(prediction: str, expected: str) -> float:
    """SQuAD-style token F1 with two Counters, on lower-cased whitespace tokens."""
    pred = prediction.lower().split()
    ref = expected.lower().split()
    if not pred or not ref:
        return 0.0
    common = sum((Counter(pred) & Counter(ref)).values())
    if common == 0:
        return 0.0
    precision = common / len(pred)
    recall = common / len(ref)
    return 2 * precision * recall / (precision + recall)


def timed(fn: Callable[[], list[float]], repeat: int) -> tuple[tuple[float, float], list[float]]:
    """Best wall time and best CPU time of ``repeat`` runs (the machine is shared: CPU time
    is the steadier figure), and the last run's scores."""
    best = best_cpu = float("inf")
    scores: list[float] = []
    for _ in range(repeat):
        gc.collect()
        start, start_cpu = time.perf_counter(), time.process_time()
        scores = fn()
        best_cpu = min(best_cpu, time.process_time() - start_cpu)
        best = min(best, time.perf_counter() - start)
    return (best, best_cpu), scores


def per_pair(
    score: Callable[[str, str], float], pairs: Sequence[Pair]
) -> Callable[[], list[float]]:
    return lambda: [score(p, r) for p, r in pairs]


def run(args: argparse.Namespace) -> tuple[list[Result], list[str]]:
    pairs = make_corpus(args.pairs, args.seed)
    slow = pairs[: args.slow_pairs]
    results: list[Result] = []
    notes: list[str] = []

    seconds, ours = timed(per_pair(rouge_l, pairs), args.repeat)
    results.append(Result("rouge_l", "aieval rouge_l, per pair", len(pairs), *seconds))
    preds = [p for p, _ in pairs]
    refs = [r for _, r in pairs]
    seconds, ours_batch = timed(lambda: rouge_l.batch(preds, refs), args.repeat)
    results.append(Result("rouge_l", "aieval rouge_l.batch", len(pairs), *seconds))
    unequal = sum(a.hex() != b.hex() for a, b in zip(ours, ours_batch, strict=True))
    notes.append(f"aieval rouge_l.batch vs per-pair rouge_l: {unequal} pairs not bit-identical")

    try:
        from rouge_score import rouge_scorer
    except ImportError:
        notes.append("rouge-score not installed (pip install rouge-score): skipped")
    else:
        ws = rouge_scorer.RougeScorer(
            ["rougeL"], use_stemmer=False, tokenizer=WhitespaceTokenizer()
        )
        seconds, theirs = timed(per_pair(lambda p, r: ws.score(r, p)["rougeL"].fmeasure, pairs), 1)
        results.append(
            Result("rouge_l", "rouge-score, whitespace tokenizer, per pair", len(pairs), *seconds)
        )
        diffs = [abs(a - b) for a, b in zip(ours, theirs, strict=True)]
        unequal = sum(a != b for a, b in zip(ours, theirs, strict=True))
        notes.append(
            f"aieval rouge_l vs rouge-score (whitespace tokens) on all {len(pairs)} pairs: "
            f"max abs diff {max(diffs):.3g}, {unequal} pairs not bit-identical"
        )
        default = rouge_scorer.RougeScorer(["rougeL"], use_stemmer=False)
        seconds, theirs_default = timed(
            per_pair(lambda p, r: default.score(r, p)["rougeL"].fmeasure, slow), 1
        )
        results.append(
            Result("rouge_l", "rouge-score, default tokenizer, per pair", len(slow), *seconds)
        )
        compatible = rouge_l.with_options(tokenizer="rouge_score")
        seconds, ours_default = timed(per_pair(compatible, slow), args.repeat)
        results.append(
            Result(
                "rouge_l", "aieval rouge_l tokenizer='rouge_score', per pair", len(slow), *seconds
            )
        )
        unequal = sum(a != b for a, b in zip(ours_default, theirs_default, strict=True))
        notes.append(
            f"aieval rouge_l(tokenizer='rouge_score') vs rouge-score default tokenizer on "
            f"{len(slow)} pairs: {unequal} pairs not bit-identical"
        )
    results.extend(time_rouge_score_rs(pairs, args.repeat, notes))
    batch = results[1]
    notes.extend(
        f"aieval rouge_l.batch / {r.name}: {batch.rate / r.rate:.2f}x by wall time, "
        f"{batch.cpu_rate / r.cpu_rate:.2f}x by CPU time"
        for r in results
        if r.name.startswith("rouge-score-rs, default")
    )

    seconds, ours_f1 = timed(per_pair(token_f1, pairs), args.repeat)
    results.append(Result("token_f1", "aieval token_f1, per pair", len(pairs), *seconds))
    seconds, theirs_f1 = timed(per_pair(counter_token_f1, pairs), args.repeat)
    results.append(
        Result("token_f1", "Counter-based SQuAD-style F1, per pair", len(pairs), *seconds)
    )
    diff = max(abs(a - b) for a, b in zip(ours_f1, theirs_f1, strict=True))
    notes.append(f"aieval token_f1 vs the Counter reference: max abs diff {diff:.3g}")
    squad = token_f1.with_options(normalize="squad")
    seconds, _ = timed(per_pair(squad, pairs), args.repeat)
    results.append(
        Result("token_f1", "aieval token_f1 normalize='squad', per pair", len(pairs), *seconds)
    )
    return results, notes


def time_rouge_score_rs(pairs: Sequence[Pair], repeat: int, notes: list[str]) -> list[Result]:
    try:
        from rouge_score_rs import rouge_scorer as rs_scorer
    except ImportError:
        notes.append("rouge-score-rs not installed (pip install rouge-score-rs): skipped")
        return []
    default = rs_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    refs = [r for _, r in pairs]
    preds = [p for p, _ in pairs]
    results = []
    seconds, _ = timed(per_pair(lambda p, r: default.score(r, p)["rougeL"].fmeasure, pairs), repeat)
    results.append(
        Result("rouge_l", "rouge-score-rs, default tokenizer, per pair", len(pairs), *seconds)
    )

    def batch() -> list[float]:
        return [s["rougeL"].fmeasure for s in default.score_batch(refs, preds)]

    seconds, _ = timed(batch, repeat)
    threads = os.environ.get("RAYON_NUM_THREADS", f"all {os.cpu_count()} cores")
    results.append(
        Result(
            "rouge_l",
            f"rouge-score-rs, default tokenizer, score_batch ({threads})",
            len(pairs),
            *seconds,
        )
    )
    ws = rs_scorer.RougeScorer(["rougeL"], use_stemmer=False, tokenizer=WhitespaceTokenizer())
    seconds, _ = timed(per_pair(lambda p, r: ws.score(r, p)["rougeL"].fmeasure, pairs), 1)
    results.append(
        Result("rouge_l", "rouge-score-rs, whitespace tokenizer, per pair", len(pairs), *seconds)
    )
    return results


def interleaved(pairs: Sequence[Pair], rounds: int, notes: list[str]) -> None:
    """Median per-block CPU-time ratios of aieval's rouge_l to rouge-score-rs, timed in turn."""
    try:
        from rouge_score_rs import rouge_scorer as rs_scorer
    except ImportError:
        return
    default = rs_scorer.RougeScorer(["rougeL"], use_stemmer=False)
    ratios: dict[str, list[float]] = {"rouge_l per pair": [], "rouge_l.batch": []}
    for _ in range(rounds):
        for start in range(0, len(pairs), 500):
            block = pairs[start : start + 500]
            preds = [p for p, _ in block]
            refs = [r for _, r in block]
            peer = _cpu(per_pair(lambda p, r: default.score(r, p)["rougeL"].fmeasure, block))
            ratios["rouge_l per pair"].append(peer / _cpu(per_pair(rouge_l, block)))
            batch = functools.partial(rouge_l.batch, preds, refs)
            ratios["rouge_l.batch"].append(peer / _cpu(batch))
    for name, values in ratios.items():
        values.sort()
        notes.append(
            f"aieval {name} / rouge-score-rs per pair, CPU time, blocks of 500 pairs "
            f"timed in turn, {rounds} rounds: median {statistics.median(values):.2f}x "
            f"(quartiles {values[len(values) // 4]:.2f}-{values[3 * len(values) // 4]:.2f}x)"
        )


def _cpu(fn: Callable[[], object]) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


def version(package: str) -> str:
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def render(results: list[Result], notes: list[str], args: argparse.Namespace) -> str:
    packages = ("aieval", "rapidfuzz", "rouge-score", "rouge-score-rs")
    lines = [
        f"{platform.python_implementation()} {platform.python_version()} on {platform.machine()}, "
        f"{os.cpu_count()} cores; " + ", ".join(f"{p} {version(p)}" for p in packages),
        f"corpus: {args.pairs} pairs, seed {args.seed}; rouge-score's default tokenizer timed on "
        f"the first {args.slow_pairs} pairs; fast implementations best of {args.repeat}",
        "",
        "| metric | implementation | pairs | pairs/s | pairs/CPU-s | aieval / this (CPU) |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for result in results:
        ours = next(r for r in results if r.group == result.group and r.name.startswith("aieval"))
        ratio = "-" if result is ours else f"{ours.cpu_rate / result.cpu_rate:.2f}x"
        lines.append(
            f"| {result.group} | {result.name} | {result.pairs} | {result.rate:,.0f} "
            f"| {result.cpu_rate:,.0f} | {ratio} |"
        )
    lines.append("")
    lines.extend(f"- {note}" for note in notes)
    return "\n".join(lines)


def corpus_summary(pairs: Sequence[Pair]) -> str:
    lengths = [len(text.split()) for pair in pairs for text in pair]
    mean = sum(lengths) / len(lengths)
    return f"token counts: min {min(lengths)}, mean {mean:.1f}, max {max(lengths)}"


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--pairs", type=int, default=20_000, help="corpus size")
    parser.add_argument("--seed", type=int, default=0, help="corpus seed")
    parser.add_argument(
        "--slow-pairs", type=int, default=2_000, help="pairs for rouge-score's default tokenizer"
    )
    parser.add_argument("--repeat", type=int, default=3, help="runs of each fast implementation")
    parser.add_argument("--rounds", type=int, default=7, help="rounds of the interleaved timing")
    args: Any = parser.parse_args(argv)
    print(corpus_summary(make_corpus(min(args.pairs, 2_000), args.seed)))
    results, notes = run(args)
    interleaved(make_corpus(args.pairs, args.seed)[:4_000], args.rounds, notes)
    print(render(results, notes, args))


if __name__ == "__main__":
    main()
