"""A rule's hard budget as a call gate over the store's spend ledger (docs/online.md, "Budgets").

The engine scores one trace (or one claimed batch) of a rule inside ``budget(rule)``, the
callable :func:`budget_for` gives: every model call made inside, by any judge, first reserves
itself in ``online_spend`` (so no call starts once a limit is reached, on any server sharing
the store) and adds its tokens and cost when it ends. A refused call raises
:class:`~aieval.errors.BudgetExhausted` and is counted on the gate (:attr:`BudgetGate.refused`),
so a scorer that caught the error cannot hide it: the engine skips such a trace as
``budget_exhausted`` (no partial sample is kept) and a backfill can put it back later.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager

from aieval._calls import record_call
from aieval.core import CallRecord, SampleRecord
from aieval.errors import BudgetExhausted
from aieval.online._model import Budget, OnlineRule, window_start
from aieval.providers import using_gate
from aieval.store import Reservation, Store

__all__ = ["BUDGET_PURPOSE", "BudgetGate", "budget_for", "hit_budget", "spending"]

#: the purpose of the call record a refusal leaves on the sample being scored
BUDGET_PURPOSE = "budget"

log = logging.getLogger("aieval.online")


class BudgetGate:
    """The call gate of one rule's scoring on one worker (``worker_id``), over ``store``.

    Once it refused a call it refuses every later one without asking the store: the trace
    being scored is skipped anyway, and its other calls would only spend the budget for
    nothing.

    Attributes:
        refused: calls refused (the trace hit its budget when this is not 0).
        calls / tokens / cost: what this gate's calls spent (reserved; reported when ended).
    """

    def __init__(
        self,
        store: Store,
        rule: OnlineRule,
        worker_id: str,
        *,
        clock: Callable[[], float] = time.time,
        flight: object = None,
    ) -> None:
        self.store = store
        #: gates sharing it share one call in flight (a worker's gates: see budget_for)
        self.flight = flight
        self.rule = rule
        self.worker_id = worker_id
        self.clock = clock
        self.refused = 0
        self.calls = 0
        self.tokens = 0
        self.cost = 0.0
        self._lock = threading.Lock()
        self._warned = False

    def __repr__(self) -> str:
        return f"BudgetGate(rule={self.rule.name!r}, worker={self.worker_id!r})"

    def reserve(self) -> Reservation | None:
        """Reserve one call in the ledger; a rule without a budget has its calls counted all
        the same (the status shows what it spends), never refused.

        Raises:
            BudgetExhausted: a limit of the rule's hour or day is reached (or this gate refused
                already); the message names the rule and the limit.
        """
        budget = self.rule.budget
        if self.refused:
            self._refuse(f"the rule {self.rule.name!r} already ran out of budget for this trace")
        now = self.clock()
        reservation = self.store.reserve_online_call(self.rule.name, budget, now)
        if reservation is None:
            self._refuse(self._why(budget, now))
        self._count(1, 0, 0.0)
        return reservation

    def settle(self, ticket: object, tokens: int | None, cost: float | None) -> None:
        """Add the ended call's ``tokens`` and ``cost`` (unknown: nothing) to the ledger."""
        self._count(0, tokens or 0, cost or 0.0)
        if isinstance(ticket, Reservation):
            self.store.settle_online_call(ticket, tokens, cost)
            self._unmeasured(tokens, cost)

    def _unmeasured(self, tokens: int | None, cost: float | None) -> None:
        """Warn once per gate of a cost limit the provider's answers cannot feed: a call that
        answered (its tokens reported) without a cost adds nothing to it, so for such calls
        only the calls and tokens limits hold."""
        budget = self.rule.budget
        limited = budget.cost_per_hour is not None or budget.cost_per_day is not None
        if limited and tokens is not None and cost is None and not self._warned:
            self._warned = True
            log.warning(
                "online rule %r: its judge's provider reports no cost (usage.cost), so the "
                "rule's cost limit counts nothing for its calls; limit its calls or tokens",
                self.rule.name,
            )

    def _count(self, calls: int, tokens: int, cost: float) -> None:
        with self._lock:
            self.calls += calls
            self.tokens += tokens
            self.cost += cost

    def _refuse(self, why: str) -> None:
        with self._lock:
            self.refused += 1
        error = BudgetExhausted(
            f"{why}: the call was not sent (raise the rule's budget, or backfill the trace "
            "once the budget allows)"
        )
        # on the sample being scored, whatever the scorer does with the error
        record_call(CallRecord(BUDGET_PURPOSE, error=f"BudgetExhausted: {error}"))
        raise error

    def _why(self, budget: Budget, now: float) -> str:
        """Which limit of the rule is reached, read back from the ledger."""
        for row in self.store.online_spend(self.rule.name, since=window_start(now, "day")):
            if row.period_start != window_start(now, row.period):
                continue
            calls, tokens, cost = budget.limits(row.period)
            for name, limit, spent in (
                ("calls", calls, row.calls),
                ("tokens", tokens, row.tokens),
                ("cost", cost, row.cost),
            ):
                if limit is not None and spent >= limit:
                    return (
                        f"the rule {self.rule.name!r} reached its {name}_per_{row.period} "
                        f"limit ({spent:g} of {limit:g})"
                    )
        return f"the rule {self.rule.name!r} reached a limit of its budget"


def hit_budget(sample: SampleRecord) -> bool:
    """Whether a call made for ``sample`` was refused by its rule's budget (the sample is then
    not kept: the trace is skipped as ``budget_exhausted``)."""
    return any(call.purpose == BUDGET_PURPOSE for call in sample.calls)


@contextmanager
def spending(gate: BudgetGate) -> Iterator[BudgetGate]:
    """Pass every model call made in this block (its tasks and threads too) through ``gate``."""
    with using_gate(gate):
        yield gate


def budget_for(
    store: Store, worker_id: str
) -> Callable[[OnlineRule], AbstractContextManager[BudgetGate]]:
    """The engine's ``budget(rule)``: a fresh gate of ``rule`` on this worker, set for the
    block (its :attr:`BudgetGate.refused` tells whether the block hit the budget). The gates
    it gives share one call in flight, whatever rule they hold and however many blocks run
    at once."""
    flight = _Flight(worker_id)

    def budget(rule: OnlineRule) -> AbstractContextManager[BudgetGate]:
        return spending(BudgetGate(store, rule, worker_id, flight=flight))

    return budget


class _Flight:
    """A worker's one call in flight, shared by its gates (weakly referenced by the gate)."""

    def __init__(self, worker_id: str) -> None:
        self.worker_id = worker_id
