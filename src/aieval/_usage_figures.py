"""Cost, tokens and cache figures: per-call pricing and the run-level tallies.

Unknown is ``None``, never zero: a call costs what its provider reported (e.g. an
OpenAI-compatible gateway's ``usage.cost``), else what the run's price table gives for its
model and tokens, else ``None``. A total cost is known only when every sample that made a model
call has a known cost. Tokens are split into the target's and the judges' (and their total).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from aieval._records import CallRecord, SampleRecord

__all__ = [
    "CacheTally",
    "CostTally",
    "ModelPrice",
    "TokenTally",
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


class TokenTally:
    """Input and output tokens of the target, of the judges, and their total."""

    def __init__(self) -> None:
        self.target = [0, 0]
        self.judges = [0, 0]

    def add(self, sample: SampleRecord) -> None:
        self.target[0] += sample.input_tokens or 0
        self.target[1] += sample.output_tokens or 0
        for call in sample.calls:
            if call.purpose != "target":
                self.judges[0] += call.input_tokens or 0
                self.judges[1] += call.output_tokens or 0

    def to_dict(self) -> dict[str, Any]:
        """``{input, output, total}`` of everything, plus ``target`` and ``judges`` alike."""

        def block(pair: Iterable[int]) -> dict[str, int]:
            i, o = pair
            return {"input": i, "output": o, "total": i + o}

        overall = [self.target[0] + self.judges[0], self.target[1] + self.judges[1]]
        return block(overall) | {"target": block(self.target), "judges": block(self.judges)}


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
    shows its total only.
    """

    def pair(block: Any) -> str:
        block = block if isinstance(block, Mapping) else {}
        return f"{block.get('input', 0)}/{block.get('output', 0)}"

    parts = [f"target {pair(tokens['target'])}"] if "target" in tokens else []
    judges = tokens.get("judges")
    if isinstance(judges, Mapping) and judges.get("total"):
        parts.append(f"judges {pair(judges)}")
    parts.append(f"total {pair(tokens)}")
    return "tokens in/out " + " · ".join(parts)


def format_cost(cost: float | None) -> str:
    """``$0.0123``, or ``-`` when the cost is unknown."""
    return "-" if cost is None else f"${cost:.4f}"


def format_cache(cache: Mapping[str, Any] | None) -> str | None:
    """``cache 100% (4/4 calls)``, or None when no call came from the cache."""
    if not cache or not cache.get("cached"):
        return None
    return f"cache {cache['share']:.0%} ({cache['cached']}/{cache['calls']} calls)"
