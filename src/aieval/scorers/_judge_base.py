"""The call every judge's scorer takes, and what the judges share behind it."""

from __future__ import annotations

from typing import Any

from aieval._types import Score
from aieval.scorers._judge_call import JudgeClient

__all__ = ["JudgeScorer", "RunModel"]

#: The run's provider and model, which a judge naming neither falls back on.
RunModel = tuple[str | None, str | None]


class JudgeScorer:
    """The callable behind a judge's scorer: the run calls it with the sample and the run's
    provider and model; the judge's :meth:`judge` scores it through :attr:`client`."""

    client: JudgeClient

    @property
    def model(self) -> str | None:
        return self.client.model

    async def __call__(
        self,
        prediction: Any,
        expected: Any,
        *,
        prompt: str | None = None,
        provider: str | None = None,
        model: str | None = None,
    ) -> Score:
        return await self.judge(prediction, expected, prompt, (provider, model))

    async def judge(
        self, prediction: Any, expected: Any, prompt: str | None, run: RunModel
    ) -> Score:
        """Score one sample (``run``: the run's provider and model)."""
        raise NotImplementedError

    async def aclose(self) -> None:
        """Close the providers this judge opened in the current event loop."""
        await self.client.aclose()
