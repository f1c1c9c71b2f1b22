"""scikit-learn's agreement figures, the oracle tests compare aieval's with, imported when a
test first calls one: each xdist worker collects every test module, and importing
``sklearn.metrics`` there would cost each worker ~0.5 s of CPU that few of them use."""

from __future__ import annotations

from typing import Any

__all__ = ["cohen_kappa_score", "confusion_matrix"]


def cohen_kappa_score(*args: Any, **kwargs: Any) -> Any:
    """``sklearn.metrics.cohen_kappa_score``."""
    from sklearn.metrics import cohen_kappa_score as score

    return score(*args, **kwargs)


def confusion_matrix(*args: Any, **kwargs: Any) -> Any:
    """``sklearn.metrics.confusion_matrix``."""
    from sklearn.metrics import confusion_matrix as matrix

    return matrix(*args, **kwargs)
