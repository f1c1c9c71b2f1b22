"""``multi_judge``: several judges vote; the median for scores, the majority for labels."""

from __future__ import annotations

import asyncio
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from aieval._types import Score
from aieval.errors import ConfigError, ScorerError
from aieval.scorers._scorer import Scorer, scorer

__all__ = ["multi_judge"]

_LABEL_VALUE = {"win": 1.0, "tie": 0.5, "loss": 0.0}


class _MultiJudge:
    """The callable behind a ``multi_judge`` scorer."""

    def __init__(self, judges: list[tuple[str, Scorer]], name: str) -> None:
        self.judges = judges
        self.name = name

    async def __call__(
        self,
        prediction: Any,
        expected: Any,
        *,
        example: Any = None,
        model: str | None = None,
        provider: str | None = None,
        prompt: str | None = None,
        output: Any = None,
        run: Any = None,
    ) -> Score:
        context = {
            "example": example,
            "model": model,
            "provider": provider,
            "prompt": prompt,
            "output": output,
            "run": run,
        }
        outcomes = await asyncio.gather(
            *(judge.score(prediction, expected, context) for _, judge in self.judges),
            return_exceptions=True,
        )
        verdicts: dict[str, dict[str, Any]] = {}
        for (key, _), found in zip(self.judges, outcomes, strict=True):
            if isinstance(found, BaseException):
                if not isinstance(found, ScorerError):
                    raise found
                verdicts[key] = {"value": None, "error": str(found)}
            else:
                verdicts[key] = {
                    "value": found.value,
                    "raw": found.raw,
                    "reason": found.reason,
                    "metadata": found.metadata,
                    "unreadable": found.unreadable,
                }
        # a member whose verdict was unreadable gave no grade: it does not vote
        unread = {k for k, v in verdicts.items() if v.get("unreadable")}
        scored = {k: v for k, v in verdicts.items() if v["value"] is not None and k not in unread}
        if not scored and unread:
            first = verdicts[min(unread)]["unreadable"]
            return Score(
                value=0.0,
                reason=f"every judge's verdict was unreadable: {first}",
                metadata={
                    "aggregate": None,
                    "judges": verdicts,
                    "failed_judges": sorted(set(verdicts) - unread),
                    "unreadable_judges": sorted(unread),
                    "parse_failures": _parse_failures(verdicts.values()),
                },
                unreadable=f"every judge's verdict was unreadable ({first})",
            )
        if not scored:
            first = next(iter(verdicts.values()))
            raise ScorerError(f"multi_judge {self.name!r}: every judge failed: {first['error']}")
        labels = [v["raw"] for v in scored.values()]
        if all(label in _LABEL_VALUE for label in labels):
            label = _majority(labels)
            value, raw, method = _LABEL_VALUE[label], label, "majority"
        else:
            value = statistics.median(v["value"] for v in scored.values())
            raw, method = value, "median"
        return Score(
            value=value,
            raw=raw,
            reason=f"{method} of {len(scored)} of {len(verdicts)} judges",
            metadata={
                "aggregate": method,
                "judges": verdicts,
                "failed_judges": sorted(set(verdicts) - set(scored) - unread),
                "unreadable_judges": sorted(unread),
                "parse_failures": _parse_failures(verdicts.values()),
            },
        )

    async def aclose(self) -> None:
        """Close the providers every member judge opened in the current event loop."""
        for _, judge in self.judges:
            closer = getattr(judge.fn, "aclose", None)
            if closer is not None:
                await closer()


def _parse_failures(verdicts: Iterable[dict[str, Any]]) -> int:
    return sum(int(v.get("metadata", {}).get("parse_failures", 0)) for v in verdicts)


def _majority(labels: list[str]) -> str:
    """The most frequent label; a split vote is a tie (no judge family gets the last word)."""
    counts = Counter(labels).most_common()
    if len(counts) > 1 and counts[0][1] == counts[1][1]:
        return "tie"
    return counts[0][0]


def _keys(judges: Sequence[Scorer]) -> list[tuple[str, Scorer]]:
    """Unique per-judge keys: the judge's name, plus its model when names repeat."""
    names = [j.name for j in judges]
    keys: list[tuple[str, Scorer]] = []
    for index, judge in enumerate(judges):
        key = judge.name
        if names.count(key) > 1:
            judge_model = getattr(judge.fn, "model", None)
            key = f"{key}@{judge_model}" if judge_model else f"{key}#{index}"
        while key in (k for k, _ in keys):
            key = f"{key}#{index}"
        keys.append((key, judge))
    return keys


def multi_judge(judges: Sequence[Scorer], *, name: str = "multi_judge") -> Scorer:
    """Combine several judges (ideally of different model families) into one vote.

    Every judge scores the sample concurrently. When all judges answer with labels (pairwise
    judges: ``win``/``loss``/``tie``) the majority label wins and a split vote is a tie;
    otherwise the value is the median of the judges' scores. Each judge's own verdict (value,
    raw, reason, full metadata) is kept in ``metadata["judges"]``; a judge that fails is listed
    in ``metadata["failed_judges"]`` and the others still vote.

    Example::

        panel = multi_judge([
            llm_judge(RUBRIC, provider="openai", model="gpt-4o"),
            llm_judge(RUBRIC, provider="anthropic", model="claude-sonnet-4"),
            llm_judge(RUBRIC, provider="vllm", model="qwen2.5-72b"),
        ], name="faithfulness")
    """
    if isinstance(judges, Scorer) or not judges:
        raise ConfigError("multi_judge needs a list of at least one judge scorer")
    bad = [j for j in judges if not isinstance(j, Scorer)]
    if bad:
        raise ConfigError(f"multi_judge takes scorers (llm_judge(...), ...), got {bad[0]!r}")
    return scorer(name=name)(_MultiJudge(_keys(judges), name))
