"""Import an inspect_ai log (``.eval`` or ``.json``) as a dataset of recorded predictions.

Each sample becomes a row: ``input`` (the prompt text, or its chat messages), ``expected`` (the
target, a list when the sample had several), ``prediction`` (the model's completion), the sample's
``metadata`` plus ``inspect_*`` provenance, ``scores``: every score inspect_ai recorded, with
its value as a number in ``value`` (``None`` when it is not a number), the value as written in
``raw``, and the scorer's ``answer`` and ``explanation``, and what the sample cost: its
``model_usage`` as ``recorded_calls`` and its ``total_time`` as ``recorded_latency_s``. A sample
inspect_ai recorded as errored, or without output, has no prediction and a ``recorded_error``
(``inspect_ai sample error: RuntimeError('...')``): the run stores it as that sample's error,
even when every sample errored. Run aieval scorers over the rows, or read inspect_ai's own scores
with :func:`recorded_score`; both results store, report, compare and promote like any other run.
A log path given as a dataset anywhere (``run(dataset="run.eval")``, an eval file's
``dataset:``) is read the same way. Needs the ``inspect`` extra (``pip install 'aieval[inspect]'``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aieval._types import Example, Score
from aieval.datasets._dataset import Dataset
from aieval.datasets._inspect_rows import inspect_example, inspect_log_rows
from aieval.errors import ScorerError
from aieval.scorers import Scorer

__all__ = ["inspect_log_rows", "load_inspect_log", "recorded_score"]


def load_inspect_log(path: str | Path, *, epoch: int | None = None) -> Dataset:
    """The samples of an inspect_ai log as a :class:`Dataset` of recorded predictions.

    Args:
        path: an inspect_ai ``.eval`` or ``.json`` log file.
        epoch: keep only this epoch; by default every epoch is kept, and when the log has more
            than one, ids become ``<sample id>#<epoch>`` so each stays unique.

    Raises:
        ConfigError: inspect_ai is not installed (says which extra to install).
        DatasetError: the file is missing or is not an inspect_ai log (names the file).
    """
    rows = inspect_log_rows(path, epoch=epoch)
    return Dataset(rows, label=str(path), example_key=inspect_example)


def recorded_score(name: str) -> Scorer:
    """A scorer that reads the score inspect_ai recorded under ``name`` for each sample.

    ``C``/``I``/``P``/``N`` read as 1, 0, 0.5 and 0; booleans as 1 and 0; numbers as they are (a
    number outside 0..1 is an error recorded on that sample, as for any scorer). A sample
    without that score, or with a value that is not a number, gets a recorded error naming it.

    Example:
        >>> match = recorded_score("match")
        >>> match.name
        'match'
    """

    def read(_prediction: Any, _expected: Any, *, example: Example | None = None) -> Score:
        scores = example.fields.get("scores") if example is not None else None
        entry = scores.get(name) if isinstance(scores, Mapping) else None
        if not isinstance(entry, Mapping):
            have = ", ".join(sorted(scores)) if isinstance(scores, Mapping) else "none"
            raise ScorerError(f"sample has no recorded score {name!r} (recorded: {have})")
        if entry.get("value") is None:
            raise ScorerError(f"recorded score {name!r} is not a number: {entry.get('raw')!r}")
        reason = entry.get("explanation")
        return Score(float(entry["value"]), raw=entry.get("raw"), reason=reason)

    return Scorer(read, name=name)
