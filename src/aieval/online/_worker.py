"""The online scoring engine: examine settled traces, claim matched ones, score them into their
rule's window runs, and backfill a rule over stored traces (docs/online.md).

Every step is a short transaction of the store's work queue (:mod:`aieval.store._online_work`):
a trace is examined once (by whichever server records it first), a matched trace's row is
claimed by one worker under a lease and finished only while that claim is held, and a scored
trace's sample is keyed by its trace id in the window run, so a killed worker's trace is
scored again by another once its lease runs out, and stored once."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import logging
import os
import socket
import time
import uuid
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any

from aieval.errors import AievalError, BudgetExhausted, ConfigError, StoreError
from aieval.online._budget import BUDGET_PURPOSE, budget_for, hit_budget
from aieval.online._filter import trace_matches
from aieval.online._model import (
    OnlineRule,
    sampled,
    window_end,
    window_run_name,
    window_start,
)
from aieval.online._review import send_to_review
from aieval.online._rules import rule_from_json
from aieval.store import (
    OnlineWork,
    ReceivedTraces,
    SettledTrace,
    Store,
    StoreLocation,
    WorkItem,
)

if TYPE_CHECKING:  # the traces extra is needed only when traces arrive
    from aieval.core import SampleRecord
    from aieval.traces import Span
    from aieval.workflows import WorkflowRun

__all__ = ["BudgetSeam", "OnlineWorker"]

log = logging.getLogger("aieval")

#: Traces examined, or work rows claimed, per step.
BATCH = 50
#: Seconds a claim holds its rows; a worker killed mid-batch loses them to others after it.
LEASE_S = 300.0
#: Seconds an incomplete trace waits before it is looked at again (at most: never past its
#: rule's ``incomplete_after_s``).
RECHECK_S = 30.0
#: Seconds between two heartbeats of the open windows' runs (well within the store's
#: ``STALE_AFTER_S``, after which a running run whose owner is silent reads as interrupted).
BEAT_S = 30.0
#: What a budget gives the scoring of one trace: a context manager around it.
BudgetSeam = Callable[[OnlineRule], AbstractContextManager[object]]


def _sample_index(trace_id: str) -> int:
    """A trace's place in its window run: the same on every server, within 63 bits."""
    return int.from_bytes(hashlib.blake2b(trace_id.encode(), digest_size=7).digest(), "big")


class OnlineWorker:
    """One worker of online scoring on the store at ``store_location`` (its id ``worker_id``:
    unique among the servers sharing the store; default: host, process and a random part).

    ``budget`` gives the scoring of each trace a context manager: the call gate of the rule's
    budget; it raises :class:`BudgetExhausted` (on leaving) when it refused a call, and the
    trace is then skipped as ``budget_exhausted`` with no sample stored.
    """

    def __init__(
        self,
        store_location: str | os.PathLike[str] | StoreLocation,
        worker_id: str | None = None,
        *,
        budget: BudgetSeam | None = None,
        batch: int = BATCH,
        lease_s: float = LEASE_S,
    ) -> None:
        self.store = Store(store_location)
        self.traces = ReceivedTraces(self.store.location)
        self.worker_id = worker_id or f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:8]}"
        self.budget = budget or budget_for(self.store, self.worker_id)
        self.batch = batch
        self.lease_s = lease_s
        self._beat_at = -BEAT_S

    def close(self) -> None:
        """Close the worker's store connection."""
        self.store.close()

    # -- rules -------------------------------------------------------------------------------

    def rules(self) -> list[OnlineRule]:
        """The stored rules (paused ones too, as the row's ``paused`` says: a rules file's
        ``paused: true`` stays in its spec after a resume over the API); a spec that no longer
        reads is logged, named, and left aside (its traces wait)."""
        found = []
        for name, spec, paused in self.store.online_rule_specs():
            try:
                rule = rule_from_json(spec)
            except ConfigError as exc:
                log.error("online rule %r: its stored spec does not read: %s", name, exc)
                continue
            found.append(dataclasses.replace(rule, paused=bool(paused)))
        return found

    def active_rules(self) -> list[OnlineRule]:
        """The stored rules that are not paused."""
        return [rule for rule in self.rules() if not rule.paused]

    # -- examination -------------------------------------------------------------------------

    def examine(self, now: float | None = None, rules: Sequence[OnlineRule] | None = None) -> int:
        """Take in the traces received since the last cycle, then examine those due by ``now``:
        each against every active rule it has settled for (that rule's ``settle_s`` after its
        last request, or its ``incomplete_after_s`` after its first when spans keep coming),
        adding a work row per matching rule, pending or ``sampled_out`` (a rule that matched
        keeps its row). A trace is examined again when more of its spans arrive, and when the
        next rule settles for it. Answers how many traces this worker examined; none while no
        rule is active (traces wait for one, or for a backfill)."""
        at = time.time() if now is None else now
        active = list(self.active_rules() if rules is None else rules)
        if not active:
            return 0
        self.store.take_in_received(self.batch)
        examined = 0
        while True:
            due = self.store.traces_to_examine(at, self.lease_s, self.batch)
            if not due:
                return examined
            settled = {t.trace_id: _settled(active, t, at) for t in due}
            spans = self._spans(t for t in settled if settled[t])
            for trace in due:
                ready = settled[trace.trace_id]
                items = self._items(ready, trace, spans.get(trace.trace_id, [])) if ready else []
                done = {rule.name for rule in ready}
                later = [_due_at(rule, trace) for rule in active if rule.name not in done]
                self.store.record_examination(trace, items, min(later, default=None), at)
                examined += bool(ready)

    def _spans(self, trace_ids: Iterable[str]) -> dict[str, list[Span]]:
        from aieval.traces import stored_spans

        found: dict[str, list[Span]] = defaultdict(list)
        for span in stored_spans(self.traces, list(trace_ids)):
            found[span.trace_id].append(span)
        return found

    def _items(
        self, rules: Sequence[OnlineRule], trace: SettledTrace, spans: Sequence[Span]
    ) -> list[WorkItem]:
        """The work rows of ``trace`` for every rule whose filter it matches."""
        items = []
        for rule in rules:
            start = window_start(trace.last_received, rule.window)
            try:
                if not trace_matches(rule.filter, spans, rule=rule.name):
                    continue
            except Exception as exc:  # a hostile value stopped the filter: said, not skipped
                items.append(
                    WorkItem(rule.name, trace.trace_id, start, "skipped", "error", str(exc))
                )
                continue
            if sampled(trace.trace_id, rule.sampling_rate):
                items.append(WorkItem(rule.name, trace.trace_id, start))
            else:
                items.append(WorkItem(rule.name, trace.trace_id, start, "skipped", "sampled_out"))
        return items

    # -- backfill ----------------------------------------------------------------------------

    def backfill(self, rule: str, since: float, until: float, now: float | None = None) -> int:
        """Enqueue ``rule``'s matches among the traces received in ``[since, until)`` (those
        it has already are left as they are), resuming a backfill of the same range where it
        stopped; then put its ``budget_exhausted`` and ``error`` skips of that range back to
        pending. Answers how many work rows it added or put back.

        Raises:
            ConfigError: no stored rule ``rule``.
        """
        at = time.time() if now is None else now
        found = {r.name: r for r in self.rules()}
        if rule not in found:
            raise ConfigError(
                f"backfill: no online rule {rule!r} (aieval online status lists them)"
            )
        chosen = found[rule]
        state = self.store.online_backfill(rule, since, until, now=at)
        added = 0
        cursor = state.cursor
        while state.done_at is None:
            traces = self.store.received_between(since, until, cursor, self.batch)
            if not traces:
                break
            spans = self._spans(t.trace_id for t in traces)
            items = [
                item
                for trace in traces
                for item in self._items([chosen], trace, spans.get(trace.trace_id, []))
            ]
            added += self.store.enqueue_online(items, at)
            cursor = traces[-1].trace_id
            self.store.advance_backfill(state, cursor, now=at)
        if state.done_at is None:
            added += self.store.requeue_online(
                rule,
                window_start(since, chosen.window),
                until,
                ("budget_exhausted", "error"),
                at,
            )
            self.store.advance_backfill(state, cursor, done=True, now=at)
        return added

    # -- work --------------------------------------------------------------------------------

    def work_once(self, now: float | None = None) -> int:
        """Claim one batch of due work of the active rules and finish each row (scored,
        skipped, or put back to wait for its spans); then close the windows that ended with
        nothing left to do. Answers how many rows it claimed."""
        at = time.time() if now is None else now
        rules = {rule.name: rule for rule in self.active_rules()}
        claimed = (
            self.store.claim_online(self.worker_id, self.batch, self.lease_s, at, list(rules))
            if rules
            else []
        )
        by_rule: dict[str, list[OnlineWork]] = defaultdict(list)
        for work in claimed:
            by_rule[work.rule].append(work)
        for name, works in by_rule.items():
            self._work(rules[name], works, at)
        self.close_windows(at)
        return len(claimed)

    def _work(self, rule: OnlineRule, works: Sequence[OnlineWork], now: float) -> None:
        from aieval.traces import runs_from_spans

        trace_ids = [w.trace_id for w in works]
        times = self.store.received_times(trace_ids)
        spans = self._spans(trace_ids)
        for work in works:
            try:
                runs = runs_from_spans(spans.get(work.trace_id, []))
            except Exception as exc:  # one trace's spans never stop the others
                self._skip(work, "error", f"its spans cannot be read: {exc}", now)
                continue
            if not runs:
                self._skip(work, "error", "no stored spans (deleted since it arrived?)", now)
                continue
            missing = _incomplete(runs[0])
            if missing is not None:
                first, last = times.get(work.trace_id, (now, now))
                self._incomplete(rule, work, missing, first, last, now)
                continue
            self._score(rule, work, runs[0], now)

    def _incomplete(
        self,
        rule: OnlineRule,
        work: OnlineWork,
        missing: str,
        first: float,
        last: float,
        now: float,
    ) -> None:
        """Wait for the rest of an incomplete trace, or skip it once its rule's
        ``incomplete_after_s`` passed since its last span arrived (for a trace whose spans
        keep coming, twice that since its first: it ends, never waits for ever)."""
        wait = rule.incomplete_after_s
        give_up = min(last + wait, first + 2 * wait)
        if now >= give_up:
            self._skip(work, "incomplete", missing, now)
        else:
            self.store.release_online(self.worker_id, work, min(now + RECHECK_S, give_up))

    def _score(
        self, rule: OnlineRule, work: OnlineWork, trace_run: WorkflowRun, now: float
    ) -> None:
        end = window_end(work.window_start, rule.window)
        name = window_run_name(rule.name, work.window_start, rule.window)
        window = self.store.online_window_run(rule.name, work.window_start, end, create=name)
        assert window is not None  # created when absent
        if self.store.online_sample_stored(window.run_id, work.trace_id):
            # scored by a worker that died (or lost its lease) before finishing the row
            self.store.finish_online(self.worker_id, work, "scored", run_id=window.run_id, now=now)
            return
        try:
            with self.budget(rule) as gate:
                sample = _score_one(rule, trace_run, name)
        except BudgetExhausted as exc:
            self._skip(work, "budget_exhausted", str(exc), now)
            return
        except Exception as exc:  # this trace's error, never the batch's
            self._skip(work, "error", f"{type(exc).__name__}: {exc}", now)
            return
        if getattr(gate, "refused", 0) or hit_budget(sample):
            # a refused call: no partial sample is kept, whatever the scorer made of the error
            refusal = next((c.error for c in sample.calls if c.purpose == BUDGET_PURPOSE), None)
            self._skip(work, "budget_exhausted", refusal or "the rule's budget is reached", now)
            return
        if sample.error:
            self._skip(work, "error", sample.error, now)
            return
        failed = _score_errors(sample)
        if failed is not None:
            # a judge outage or a broken scorer is not a quality drop: no sample is counted
            self._skip(work, "error", failed, now)
            return
        sample = dataclasses.replace(sample, id=work.trace_id, index=_sample_index(work.trace_id))
        try:
            self.store.record_samples(window.run_id, [sample])
        except StoreError:
            # another worker that took the row over when this one's lease ran out stored it
            if not self.store.online_sample_stored(window.run_id, work.trace_id):
                raise
        if self.store.finish_online(self.worker_id, work, "scored", run_id=window.run_id, now=now):
            self._review(rule, window.run_id, work.trace_id)

    def _review(self, rule: OnlineRule, run_id: str, trace_id: str) -> None:
        """Send the trace's sample to the rule's review queue when it failed or its judge was
        unsure (``review:``); a queue that cannot take it is said in the log, the trace stays
        scored."""
        if rule.review is None:
            return
        try:
            send_to_review(self.store, rule, run_id, [trace_id])
        except AievalError as exc:
            log.error("online rule %r: trace %s not sent to review: %s", rule.name, trace_id, exc)

    def _summary(self, run_id: str) -> dict[str, Any]:
        return _summary_of(self.store.iter_samples(run_id))

    def _skip(self, work: OnlineWork, reason: str, message: str, now: float) -> None:
        self.store.finish_online(
            self.worker_id, work, "skipped", reason=reason, message=message, now=now
        )

    def close_windows(self, now: float | None = None) -> int:
        """Finish the runs of the windows that ended by ``now`` with no work pending or
        claimed (their summaries built); how many this worker closed. The windows still open
        are kept ``running`` (a heartbeat: their runs are being written, not interrupted)."""
        at = time.time() if now is None else now
        closed = 0
        for window in self.store.windows_to_close(at):
            if self.store.close_online_window(window.rule, window.window_start):
                self.store.finish_run(
                    window.run_id, status="completed", metrics=self._summary(window.run_id)
                )
                closed += 1
        if time.monotonic() - self._beat_at >= BEAT_S:
            for window in self.store.open_online_windows():
                self.store.heartbeat(window.run_id)
            self._beat_at = time.monotonic()
        return closed


def _summary_of(samples: Iterable[SampleRecord]) -> dict[str, Any]:
    """A run's summary over ``samples``, as the runner stores it when a run ends."""
    from aieval.runner import Aggregator

    kept = list(samples)
    aggregator = Aggregator(sorted({name for s in kept for name in s.scores}))
    for sample in kept:
        aggregator.add(sample)
    return aggregator.summary().to_dict()


def _score_errors(sample: SampleRecord) -> str | None:
    """The scorers that could not score ``sample`` (raised, every judge call failed, or a
    judge's verdict did not read), each named with its error; ``None`` when all scored."""
    failed = [
        f"scorer {name!r}: {score.error or score.unreadable}"
        for name, score in sample.scores.items()
        if score.error or score.unreadable
    ]
    return "; ".join(failed) if failed else None


def _due_at(rule: OnlineRule, trace: SettledTrace) -> float:
    """When ``trace`` is settled for ``rule``: ``settle_s`` after its last request, or, for a
    trace whose spans keep coming, ``incomplete_after_s`` after its first (then counted)."""
    return min(trace.last_received + rule.settle_s, trace.first_received + rule.incomplete_after_s)


def _settled(rules: Sequence[OnlineRule], trace: SettledTrace, now: float) -> list[OnlineRule]:
    """The ``rules`` ``trace`` has settled for by ``now``."""
    return [rule for rule in rules if _due_at(rule, trace) <= now]


def _incomplete(trace_run: WorkflowRun) -> str | None:
    """What a trace's run lacks, as the ``trace_complete`` gate reads it (``None``: nothing)."""
    trace = trace_run.metadata.get("trace")
    if not isinstance(trace, Mapping):
        return None
    missing = trace.get("missing")
    if not isinstance(missing, list):
        return "metadata.trace.missing is not a list: cannot tell"
    return "; ".join(map(str, missing)) if missing else None


def _score_one(rule: OnlineRule, trace_run: WorkflowRun, name: str) -> SampleRecord:
    """Score one trace's run as :func:`aieval.runner.run` scores a row, in memory: with a
    workflow or profile, the trace's run graded as the trace evaluator grades it; without,
    the trace's final output text as a recorded prediction (its input as the row's input, no
    expected), graded by the threshold grader (or the rule's ``grader``)."""
    from aieval.runner import run

    scoring = rule.scoring
    graded = scoring.workflow is not None or scoring.profile is not None
    row: dict[str, Any] = {"id": trace_run.workflow_id, "input": trace_run.inputs or {}}
    if graded:
        row["run"] = trace_run.to_dict()
    else:
        row["input"] = _text((trace_run.inputs or {}).get("input"))
        row["prediction"] = _text((trace_run.outputs or {}).get("output"))
    result = run(
        name=name,
        dataset=[row],
        scorers=[*scoring.scorers, *scoring.default_checks],
        # each row a trace's run: graded as the trace evaluator grades it
        evaluator="traces" if graded else None,
        workflow=scoring.workflow,
        profile=scoring.profile,
        grader=scoring.grader,
        imports=list(scoring.imports),
        pass_threshold=scoring.pass_threshold,
        enforce_hard_gates=scoring.enforce_hard_gates,
        store=False,
    )
    [sample] = result.samples
    return sample


def _text(value: object) -> str:
    """A trace's input or output as text: a string as it is, a decoded JSON value (an
    ``output.value`` holding JSON) as JSON again, none as the empty string."""
    if value is None:
        return ""
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
