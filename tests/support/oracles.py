"""The reference implementations tests compare aieval's figures with (scikit-learn's agreement
figures, ``rouge_score``'s ROUGE-L), imported when a test first calls one: each xdist worker
collects every test module, and importing them there would cost each worker seconds of CPU
(``rouge_score`` brings nltk and absl: ~1.5 s) that few of its tests use."""

from __future__ import annotations

from typing import Any

__all__ = ["RougeScorer", "cohen_kappa_score", "confusion_matrix"]


def cohen_kappa_score(*args: Any, **kwargs: Any) -> Any:
    """``sklearn.metrics.cohen_kappa_score``."""
    from sklearn.metrics import cohen_kappa_score as score

    return score(*args, **kwargs)


def confusion_matrix(*args: Any, **kwargs: Any) -> Any:
    """``sklearn.metrics.confusion_matrix``."""
    from sklearn.metrics import confusion_matrix as matrix

    return matrix(*args, **kwargs)


class RougeScorer:
    """``rouge_score.rouge_scorer.RougeScorer(*args, **kwargs)``, made at its first use."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self._args, self._kwargs = args, kwargs
        self._scorer: Any = None

    def _made(self) -> Any:
        if self._scorer is None:
            from rouge_score import rouge_scorer

            self._scorer = rouge_scorer.RougeScorer(*self._args, **self._kwargs)
        return self._scorer

    def score(self, target: str, prediction: str) -> Any:
        """The scores of ``prediction`` against ``target``, by ROUGE type."""
        return self._made().score(target, prediction)

    def score_multi(self, targets: list[str], prediction: str) -> Any:
        """The scores of ``prediction`` against its best of ``targets``, by ROUGE type."""
        return self._made().score_multi(targets, prediction)
