"""The per-sample work: produce the output, score it, grade it, and record it."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

from aieval._calls import collect_calls, note_latency
from aieval._json import too_deep
from aieval._records import CallRecord, SampleRecord, ScoreRecord, redact_record
from aieval._types import Example
from aieval._usage_figures import ModelPrice, call_cost
from aieval.core import GradeInput, Reason, ThresholdGrader, Verdict, drop_unstorable_counts
from aieval.errors import ScorerError, StoreError
from aieval.runner._evaluator import SampleEvaluator
from aieval.runner._grading import run_grader
from aieval.runner._prescore import MAX_METADATA_DEPTH, Item, Prescorer
from aieval.runner._rowchecks import RowScorers, RowScoring
from aieval.runner._target import Output, ProviderTarget, RecordedTarget, Target, Usage
from aieval.scorers import Scorer, sample_budget

__all__ = ["SampleProcessor", "failed_record", "unstorable_record"]


class SampleProcessor:
    """Turns one ``(index, example)`` into its finished :class:`SampleRecord`.

    A call without a reported cost is priced from ``prices`` (``{model: ModelPrice}``).
    The target's failure, a scorer's failure and an ``exit()`` in user code are recorded on
    the sample; the record's text is redacted of ``secrets`` before it is returned. The same
    object runs in the run's process or, built from the run's spec, on a Ray worker.
    """

    def __init__(
        self,
        scorers: Sequence[Scorer],
        target: Target,
        *,
        model: str | None,
        pass_threshold: float,
        evaluator: SampleEvaluator | None = None,
        grader: str | None = None,
        secrets: frozenset[str] = frozenset(),
        prices: Mapping[str, ModelPrice] | None = None,
    ) -> None:
        self.prices: Mapping[str, ModelPrice] = prices or {}
        self.scorers = list(scorers)
        self.target = target
        self.model = model
        self.pass_threshold = pass_threshold
        self.evaluator = evaluator
        self.grader = run_grader(grader, pass_threshold, evaluator)
        self.thresholds = {s.name: s.threshold for s in self.scorers if s.threshold is not None}
        self.weights = {s.name: s.weight for s in self.scorers if s.weight != 1.0}
        self.row_scorers = RowScorers()
        self.secrets = secrets
        self.provider_name = target.name if isinstance(target, ProviderTarget) else None
        #: batch scores for recorded predictions (known before each sample is processed)
        prescorer = Prescorer(self.scorers) if isinstance(target, RecordedTarget) else None
        self.prescorer = prescorer if prescorer is not None and prescorer.batched else None

    def feed(self, items: Iterator[Item]) -> Iterator[Item]:
        """The samples to process, in order: with recorded predictions and a scorer that has a
        batch implementation, each chunk is batch-scored as it is read (the same scores as
        one call per sample)."""
        return items if self.prescorer is None else self.prescorer.feed(items)

    async def __call__(self, item: tuple[int, Example]) -> SampleRecord:
        index, example = item
        ready = self.prescorer.take(index) if self.prescorer is not None else None
        calls = collect_calls(self.prices)
        try:
            output = await self.target.produce(example)
        except (KeyboardInterrupt, asyncio.CancelledError, StoreError):
            raise  # a store failure (the response cache's) is the run's, not the target's
        except BaseException as exc:
            output = Output(None, error=f"{type(exc).__name__}: {exc}")
        record = _answered(example, index, output, calls)
        own = RowScoring()
        if example.checks:
            # a row's pattern, schema or expression is checked in a worker (each under the
            # expression limit, outside the sample's budget: the outcome is cached by entry)
            own = await asyncio.to_thread(self.row_scorers.of, example)
        with sample_budget():  # all of this sample's bounded checks share one time budget
            await self._score(example, output, record, own, ready)
        redact_record(record, self.secrets)
        return record

    async def _score(
        self,
        example: Example,
        output: Output,
        record: SampleRecord,
        own: RowScoring,
        ready: dict[int, ScoreRecord] | None,
    ) -> None:
        """Score, price and grade ``record`` (scored only when the target answered)."""
        if output.error is None:
            context = {
                "example": example,
                "model": self.model,
                "provider": self.provider_name,
                "prompt": example.prompt,
                "output": output.value,
                "run": None,
            }
            record.scores = await _score_all(
                [*self.scorers, *own.scorers], output.text, example.expected, context, ready
            )
            for key, message in own.errors.items():
                record.scores[key] = ScoreRecord(None, error=message)
        self._grade(example, output, record, own)

    def recorded(self, item: Item) -> SampleRecord | None:
        """The finished record of a recorded sample whose every score its scorers' batches
        gave (no checks of its own), made here and now without the event loop: the same
        record as :meth:`__call__` makes. ``None``: the sample takes :meth:`__call__`."""
        index, example = item
        prescorer = self.prescorer
        if prescorer is None or example.checks or type(self.target) is not RecordedTarget:
            return None
        ready = prescorer.peek(index)
        try:
            output = self.target.output(example)
        except Exception:
            return None  # the per-sample path records the target's failure, as ever
        if output.error is None and (ready is None or len(ready) != len(self.scorers)):
            return None  # a score to make on its own: the sample's own path
        prescorer.take(index)
        calls = collect_calls(self.prices)  # what a grader may read of the sample's calls
        record = _answered(example, index, output, calls)
        if output.error is None:
            assert ready is not None
            record.scores = {s.name: ready[position] for position, s in enumerate(self.scorers)}
        if type(self.grader) is ThresholdGrader:
            self._grade(example, output, record, RowScoring(), self.grader)
        else:  # a grader of its own may run bounded checks: the sample's budget, as in __call__
            with sample_budget():
                self._grade(example, output, record, RowScoring())
        redact_record(record, self.secrets)
        return record

    def _grade(
        self,
        example: Example,
        output: Output,
        record: SampleRecord,
        own: RowScoring,
        threshold: ThresholdGrader | None = None,
    ) -> None:
        """Price and grade ``record``, scored already (``threshold``: the run's grader, the
        threshold grader itself, asked without its :class:`GradeInput`)."""
        # no call and no usage of its own (a recorded row without usage): nothing to sum,
        # price or clear, and the record's counts keep their defaults
        if record.calls or output.usage is not None:
            unstorable = _fill_usage(record, output.usage, self.prices)
            if unstorable:  # this sample's error, never a failed commit of its batch
                message = "usage not stored: " + "; ".join(unstorable)
                record.error = message if record.error is None else f"{record.error}; {message}"
        if output.extra:
            record.extra.update(output.extra)
        thresholds, weights = self.thresholds, self.weights
        if example.checks:
            thresholds = {**thresholds, **_own(own.scorers, "threshold")}
            weights = {**weights, **_own(own.scorers, "weight")}
        if threshold is not None and not example.checks:
            record.verdict = threshold.decide(record, thresholds, weights)
        else:
            record.verdict = self.grader.grade(
                GradeInput(record, example, output.value, thresholds=thresholds, weights=weights)
            )
        # an invalid sample (say, a simulated user that failed fidelity) neither passed nor
        # failed: its pass flag stays unset and the run counts it apart
        record.passed = None if record.verdict.invalid else record.verdict.passed

    async def aclose(self) -> None:
        """Release the target's and the scorers' resources (never raises)."""
        # best effort: the samples are already recorded
        with contextlib.suppress(Exception):
            await self.target.aclose()
        for item in [*self.scorers, *self.row_scorers.resolved()]:
            closer = getattr(item.fn, "aclose", None)
            if closer is not None:
                with contextlib.suppress(Exception):
                    await closer()


def _own(scorers: list[Scorer], key: str) -> dict[str, float]:
    """The scorers' own ``threshold`` or ``weight`` (see :attr:`Scorer.grading`), by name."""
    return {s.name: s.grading[key] for s in scorers if key in s.grading}


def failed_record(index: int, example: Example, error: str) -> SampleRecord:
    """The record of a sample whose processing itself failed (its worker died, say)."""
    return _failed(example.sample_id, index, example, error)


def _failed(id: str, index: int, row: Example | SampleRecord, error: str) -> SampleRecord:
    """A failed sample with ``row``'s input, expected answer, metadata and epoch only."""
    return SampleRecord(
        id=id,
        index=index,
        input=row.input,
        expected=row.expected,
        metadata=row.metadata,
        error=error,
        passed=False,
        verdict=Verdict(False, (Reason("error", "target", error),), weighted_score=0.0),
        epoch=row.epoch,
    )


async def _score_all(
    scorers: list[Scorer],
    prediction: Any,
    expected: Any,
    context: dict[str, Any],
    ready: dict[int, ScoreRecord] | None = None,
) -> dict[str, ScoreRecord]:
    """Every scorer's record, by name; ``ready``: records already computed, by position."""
    results: dict[str, ScoreRecord] = {}
    pending: list[tuple[str, asyncio.Task[ScoreRecord]]] = []
    for position, item in enumerate(scorers):
        if ready is not None and position in ready:
            results[item.name] = ready[position]
        elif item.is_async:
            pending.append(
                (item.name, asyncio.ensure_future(_score_one(item, prediction, expected, context)))
            )
        else:
            results[item.name] = await _score_one(item, prediction, expected, context)
    for scorer_name, task in pending:
        results[scorer_name] = await task
    return {s.name: results[s.name] for s in scorers}


async def _score_one(
    item: Scorer, prediction: Any, expected: Any, context: dict[str, Any]
) -> ScoreRecord:
    try:
        score = await item.score(prediction, expected, context)
    except ScorerError as exc:
        return ScoreRecord(None, error=str(exc))
    except SystemExit as exc:  # exit() in user code ends this score, not the run
        return ScoreRecord(None, error=f"scorer {item.name!r} called exit({exc.code!r})")
    except (KeyboardInterrupt, asyncio.CancelledError, StoreError):
        raise  # a store failure (the judge cache's) is the run's, not the scorer's
    except BaseException as exc:  # a user's own BaseException subclass, GeneratorExit
        return ScoreRecord(None, error=f"scorer {item.name!r} raised {type(exc).__name__}: {exc}")
    if too_deep(score.metadata, MAX_METADATA_DEPTH):  # the store's JSON encoder would give up
        return ScoreRecord(
            None,
            error=f"scorer {item.name!r} returned metadata nested deeper than "
            f"{MAX_METADATA_DEPTH} levels, too deep to store",
        )
    return ScoreRecord(
        score.value, score.raw, score.reason, metadata=score.metadata, unreadable=score.unreadable
    )


def _fill_usage(
    record: SampleRecord, own: Usage | None, prices: Mapping[str, ModelPrice]
) -> list[str]:
    """Sum the sample's tokens, retries and cost from its calls (or the target's own usage);
    returns the counts cleared as out of the store's range."""
    # the calls' counts first, so that none is summed or priced
    unstorable = drop_unstorable_counts(record)
    target_calls = [call for call in record.calls if call.purpose == "target"]
    target_called = bool(target_calls)
    for call in record.calls:
        record.retries += call.retries
    if target_calls:  # one call, or one per model a recorded sample names
        record.cached = target_calls[-1].cached
        record.input_tokens = _total((c.input_tokens, c.error is None) for c in target_calls)
        record.output_tokens = _total((c.output_tokens, c.error is None) for c in target_calls)
    for call in record.calls:
        call.cost = call_cost(call, prices)
    costs = [c.cost for c in record.calls if c.error is None]
    if own is not None and not target_called:
        record.input_tokens, record.output_tokens = own.input_tokens, own.output_tokens
        record.retries += own.retries
        if own.cost is not None or own.input_tokens is not None or own.output_tokens is not None:
            costs.append(own.cost)
    # unknown is None, never 0: one unpriced call leaves the sample's cost unknown
    record.cost = sum(c for c in costs if c is not None) if costs and None not in costs else None
    return unstorable + drop_unstorable_counts(record)  # the sums and the target's own usage


def _total(counts: Iterable[tuple[int | None, bool]]) -> int | None:
    """The sum of the ``(count, answered)`` calls' counts; ``None`` when none is known, or
    when a call that answered did not report its count (a part unknown: the sum is too)."""
    pairs = list(counts)
    if any(count is None and answered for count, answered in pairs):
        return None
    known = [count for count, _ in pairs if count is not None]
    return sum(known) if known else None


def unstorable_record(record: SampleRecord, why: Exception) -> SampleRecord:
    """What is stored of a sample holding a value the store cannot keep: its id, input and
    expected answer, failed with the reason (its output, scores and calls are dropped)."""
    return _failed(record.id, record.index, record, f"the sample could not be stored: {why}")


def _answered(
    example: Example, index: int, output: Output, calls: list[CallRecord]
) -> SampleRecord:
    """The sample's record as its target answered, before scoring: the target's own calls
    first in ``calls`` (those collected while it answered), its latency noted for the run."""
    calls[:0] = output.calls
    note_latency(output.latency_s if output.error is None else None)
    return SampleRecord(
        id=example.sample_id,
        index=index,
        input=example.input,
        expected=example.expected,
        prediction=output.text,
        metadata=example.metadata,
        error=output.error,
        latency_s=output.latency_s,
        calls=calls,
        epoch=example.epoch,
    )
