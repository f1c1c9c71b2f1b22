"""Import an inspect_ai log (``.eval`` or ``.json``) as a dataset of recorded predictions.

Each sample becomes a row: ``input`` (the prompt text, or its chat messages), ``expected`` (the
target, a list when the sample had several), ``prediction`` (the model's completion), the sample's
``metadata`` plus ``inspect_*`` provenance, and ``scores``: every score inspect_ai recorded, with
its value as a number in ``value`` (``None`` when it is not a number), the value as written in
``raw``, and the scorer's ``answer`` and ``explanation``. A sample inspect_ai recorded as errored
has no prediction and a ``recorded_error`` (``inspect_ai sample error: RuntimeError('...')``):
the run stores it as that sample's error, even when every sample errored. Run aieval scorers over
the rows, or read inspect_ai's own scores with :func:`recorded_score`; both results store,
report, compare and promote like any other run. Needs the ``inspect`` extra
(``pip install 'aieval[inspect]'``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aieval._types import Example, Score
from aieval.datasets._dataset import Dataset
from aieval.errors import ConfigError, DatasetError, ScorerError
from aieval.scorers import Scorer

__all__ = ["inspect_log_rows", "load_inspect_log", "recorded_score"]

_INSTALL_HINT = "reading inspect_ai logs needs inspect_ai: pip install 'aieval[inspect]'"
# inspect_ai's conventional letter values: correct, incorrect, partial, no answer.
_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}


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
    return Dataset(inspect_log_rows(path, epoch=epoch), label=str(path))


def inspect_log_rows(path: str | Path, *, epoch: int | None = None) -> list[dict[str, Any]]:
    """The rows :func:`load_inspect_log` builds, as plain dicts (for JSONL export or editing)."""
    log = _read(Path(path))
    samples = [s for s in (log.samples or []) if epoch is None or s.epoch == epoch]
    if not samples:
        which = f" for epoch {epoch}" if epoch is not None else ""
        raise DatasetError(f"the inspect_ai log holds no samples{which}", source=str(path))
    epochs = {s.epoch for s in samples}
    provenance = {
        "inspect_task": log.eval.task,
        "inspect_model": log.eval.model,
        "inspect_run_id": log.eval.run_id,
        "inspect_eval_id": log.eval.eval_id,
    }
    return [_row(s, provenance, tag_epoch=len(epochs) > 1) for s in samples]


def _read(path: Path) -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise ConfigError(_INSTALL_HINT) from None
    if not path.is_file():
        raise DatasetError("inspect_ai log not found", source=str(path))
    try:
        return read_eval_log(str(path))
    except Exception as exc:  # inspect_ai raises several types for a file it cannot read
        raise DatasetError(
            f"not a readable inspect_ai log: {type(exc).__name__}: {exc}", source=str(path)
        ) from exc


def _row(sample: Any, provenance: Mapping[str, Any], *, tag_epoch: bool) -> dict[str, Any]:
    metadata = {**(sample.metadata or {}), **provenance, "inspect_epoch": sample.epoch}
    errored = sample.error is not None
    if errored:
        metadata["inspect_error"] = str(getattr(sample.error, "message", sample.error))
    output = sample.output
    row = {
        "id": f"{sample.id}#{sample.epoch}" if tag_epoch else str(sample.id),
        "input": _input(sample.input),
        "expected": list(sample.target) if isinstance(sample.target, list) else sample.target,
        # An errored sample has no answer to grade: it stays without a prediction, so the run
        # records it as an error instead of scoring an empty string.
        "prediction": None if errored or output is None else output.completion,
        "metadata": metadata,
        "scores": _scores(sample.scores or {}),
    }
    if errored:  # stored as the sample's error, counted like any other
        row["recorded_error"] = f"inspect_ai sample error: {metadata['inspect_error']}"
    return row


def _input(value: Any) -> Any:
    if isinstance(value, str):
        return value
    return [{"role": m.role, "content": m.text} for m in value]


def _scores(scores: Mapping[str, Any]) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    for name, score in scores.items():
        detail = {"answer": score.answer, "explanation": score.explanation}
        if isinstance(score.value, Mapping):  # one scorer, several named values
            for key, value in score.value.items():
                out[f"{name}.{key}"] = {"value": _number(value), "raw": value, **detail}
        else:
            out[str(name)] = {"value": _number(score.value), "raw": score.value, **detail}
    return out


def _number(value: Any) -> float | None:
    """A recorded score value as a number, or ``None`` when it is not one."""
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, int | float):
        return float(value) if math.isfinite(value) else None
    if isinstance(value, str):
        if value in _LETTERS:
            return _LETTERS[value]
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


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
