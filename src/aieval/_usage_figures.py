"""Cost, tokens and cache figures: per-call pricing and the run-level tallies.

Unknown is ``None``, never zero: a call costs what its provider reported (e.g. an
OpenAI-compatible gateway's ``usage.cost``), else what the run's price table gives for its
model and tokens, else ``None``. A total cost is known only when every sample that made a model
call has a known cost. Tokens are split into the target's and the judges' (and their total).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from aieval._records import CallRecord, SampleRecord

__all__ = [
    "CacheTally",
    "CostTally",
    "ModelPrice",
    "TokenTally",
    "TokenTotal",
    "call_cost",
    "format_cache",
    "format_cost",
    "format_tokens",
]


class ModelPrice(BaseModel):
    """What one model costs, in USD per million tokens (``prices: {model: {...}}``)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    input_per_mtok: float = Field(ge=0, description="USD per million input (prompt) tokens")
    output_per_mtok: float = Field(ge=0, description="USD per million output tokens")


def call_cost(call: CallRecord, prices: Mapping[str, ModelPrice]) -> float | None:
    """The call's cost: its reported cost, else priced from ``prices`` by model, else None.

    A model missing from ``prices``, or a call whose token counts are unknown, has no cost.
    """
    if call.cost is not None:
        return call.cost
    price = prices.get(call.model) if call.model is not None else None
    if price is None or call.input_tokens is None or call.output_tokens is None:
        return None
    return (
        call.input_tokens * price.input_per_mtok + call.output_tokens * price.output_per_mtok
    ) / 1_000_000


def spent(sample: SampleRecord) -> bool:
    """Whether the sample made a model call that answered, or its target reported tokens."""
    return any(c.error is None for c in sample.calls) or (
        sample.input_tokens is not None or sample.output_tokens is not None
    )


class CostTally:
    """Sums sample costs; the total is ``None`` when any sample that spent has no cost."""

    def __init__(self) -> None:
        self.known = 0.0
        self.priced = 0
        self.unpriced = 0

    def add(self, sample: SampleRecord) -> None:
        if sample.cost is not None:
            self.known += sample.cost
            self.priced += 1
        elif spent(sample):
            self.unpriced += 1

    @property
    def total(self) -> float | None:
        """The run's cost in USD, or ``None`` when unknown (not every call was priced)."""
        return self.known if self.priced and not self.unpriced else None


@dataclass(slots=True)
class TokenTotal:
    """Tokens summed over model calls, and how many of the calls did not report theirs.

    Unknown parts make the total unknown: :attr:`input` and :attr:`output` are the sums of the
    calls that reported (a lower bound while any did not), :attr:`complete` says whether they
    are the total. A call reports its usage when it gives both its input and output tokens.

    >>> t = TokenTotal()
    >>> t.add_call(120, 30); t.add_call(None, None)
    >>> t.complete, t.text()
    (False, 'at least 120/30 (1 of 2 calls unreported)')
    """

    input: int = 0
    output: int = 0
    #: model calls counted (those that answered)
    calls: int = 0
    #: of them, the calls that did not report both token counts
    unreported: int = 0

    @property
    def complete(self) -> bool:
        """Whether every call reported its tokens (the sums are the total)."""
        return not self.unreported

    def add_call(self, input_tokens: int | None, output_tokens: int | None) -> None:
        """Count one call that answered, with what it reported (``None``: unreported)."""
        self.add_known(input_tokens, output_tokens)
        self.calls += 1
        self.unreported += input_tokens is None or output_tokens is None

    def add_known(self, input_tokens: int | None, output_tokens: int | None) -> None:
        """Add reported tokens without counting a call (a call that failed yet reported)."""
        self.input += input_tokens or 0
        self.output += output_tokens or 0

    def __add__(self, other: TokenTotal) -> TokenTotal:
        return TokenTotal(
            self.input + other.input,
            self.output + other.output,
            self.calls + other.calls,
            self.unreported + other.unreported,
        )

    def to_dict(self) -> dict[str, Any]:
        """``{input, output, total}``; when a call did not report, those are ``null`` (unknown,
        like a cost) and ``at_least`` holds the sums of the calls that did, ``calls`` and
        ``unreported_calls`` the counts."""
        known = {"input": self.input, "output": self.output, "total": self.input + self.output}
        if self.complete:
            return known
        return dict.fromkeys(known) | {
            "at_least": known,
            "calls": self.calls,
            "unreported_calls": self.unreported,
        }

    @classmethod
    def from_dict(cls, block: Any) -> TokenTotal:
        """Read a block written by :meth:`to_dict` (or an older bare ``{input, output}``)."""
        if not isinstance(block, Mapping):
            return cls()
        unreported = _whole(block.get("unreported_calls"))
        known = block.get("at_least") if unreported else block
        known = known if isinstance(known, Mapping) else {}
        return cls(
            _whole(known.get("input")),
            _whole(known.get("output")),
            _whole(block.get("calls")),
            unreported,
        )

    def text(self) -> str:
        """``141/15`` (in/out), or ``at least 141/15 (2 of 30 calls unreported)``."""
        pair = f"{self.input}/{self.output}"
        if self.complete:
            return pair
        if self.unreported == self.calls and not (self.input or self.output):
            return f"unknown ({self.unreported} of {self.calls} calls unreported)"
        return f"at least {pair} ({self.unreported} of {self.calls} calls unreported)"


def _whole(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


class TokenTally:
    """Input and output tokens of the target, of the judges, and their total.

    The model calls that reported no tokens are counted, so that the totals read as unknown
    (``at least N``) while any is missing.
    """

    def __init__(self) -> None:
        self.target = TokenTotal()
        self.judges = TokenTotal()

    def add(self, sample: SampleRecord) -> None:
        target = [c for c in sample.calls if c.purpose == "target"]
        if target:
            for call in target:
                if call.error is None:
                    self.target.add_call(call.input_tokens, call.output_tokens)
                else:
                    self.target.add_known(call.input_tokens, call.output_tokens)
        elif sample.input_tokens is not None or sample.output_tokens is not None:
            # usage the target reported itself (a recorded workflow run's), as one call
            self.target.add_call(sample.input_tokens, sample.output_tokens)
        for call in sample.calls:
            if call.purpose == "target":
                continue
            if call.error is None:
                self.judges.add_call(call.input_tokens, call.output_tokens)
            else:
                self.judges.add_known(call.input_tokens, call.output_tokens)

    @property
    def overall(self) -> TokenTotal:
        """The target's and the judges' together."""
        return self.target + self.judges

    def to_dict(self) -> dict[str, Any]:
        """``{input, output, total}`` of everything, plus ``target`` and ``judges`` alike (see
        :meth:`TokenTotal.to_dict`: ``null`` and ``at_least`` where a call did not report)."""
        return self.overall.to_dict() | {
            "target": self.target.to_dict(),
            "judges": self.judges.to_dict(),
        }


class CacheTally:
    """Model calls that answered, and how many of them came from the response cache."""

    def __init__(self) -> None:
        self.calls = 0
        self.cached = 0

    def add(self, sample: SampleRecord) -> None:
        for call in sample.calls:
            if call.error is None:
                self.calls += 1
                self.cached += call.cached

    def to_dict(self) -> dict[str, Any]:
        """``{calls, cached, share}``; ``share`` is None when no model call answered."""
        share = self.cached / self.calls if self.calls else None
        return {"calls": self.calls, "cached": self.cached, "share": share}


def format_tokens(tokens: Mapping[str, Any]) -> str:
    """``tokens in/out target 141/15 · judges 959/133 · total 1100/148``.

    The judges' part is left out when they used no tokens; a run stored before the split
    shows its total only. A part some calls did not report reads ``at least 141/15 (2 of 30
    calls unreported)``.
    """
    parts = (
        [f"target {TokenTotal.from_dict(tokens['target']).text()}"] if "target" in tokens else []
    )
    judges = TokenTotal.from_dict(tokens.get("judges"))
    if judges.input or judges.output or judges.calls:
        parts.append(f"judges {judges.text()}")
    parts.append(f"total {TokenTotal.from_dict(tokens).text()}")
    return "tokens in/out " + " · ".join(parts)


def format_cost(cost: float | None) -> str:
    """``$0.0123``, or ``-`` when the cost is unknown."""
    return "-" if cost is None else f"${cost:.4f}"


def format_cache(cache: Mapping[str, Any] | None) -> str | None:
    """``cache 100% (4/4 calls)``, or None when no call came from the cache."""
    if not cache or not cache.get("cached"):
        return None
    return f"cache {cache['share']:.0%} ({cache['cached']}/{cache['calls']} calls)"
