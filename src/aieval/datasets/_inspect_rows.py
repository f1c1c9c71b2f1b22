"""The rows of an inspect_ai log (``.eval`` or ``.json``): one per sample, as plain dicts.

Each row holds what the sample is (``id``, ``input``, ``expected``, its ``metadata``) and what
the logged run recorded for it: the ``prediction`` (or a ``recorded_error`` when the sample
errored or has no output), inspect_ai's ``scores``, its per-model ``model_usage`` as
``recorded_calls``, ``total_time`` as ``recorded_latency_s``, and ``inspect_*`` provenance in the
metadata. :func:`inspect_example` is the part that says what the sample is, whichever run or
file format recorded it: the dataset version hashes that.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from aieval.errors import ConfigError, DatasetError

__all__ = ["INSPECT_SOURCE", "inspect_example", "inspect_log_rows", "looks_like_inspect_log"]

#: ``provider`` of the calls read from a log: inspect_ai recorded them.
INSPECT_SOURCE = "inspect_ai"
_INSTALL_HINT = "reading inspect_ai logs needs inspect_ai: pip install 'aieval[inspect]'"
# inspect_ai's conventional letter values: correct, incorrect, partial, no answer.
_LETTERS = {"C": 1.0, "I": 0.0, "P": 0.5, "N": 0.0}
# metadata the import adds about the logged run, not about the sample
_RUN_METADATA = frozenset(
    {
        "inspect_task",
        "inspect_model",
        "inspect_run_id",
        "inspect_eval_id",
        "inspect_error",
        "inspect_total_time",
        "inspect_working_time",
    }
)


def inspect_log_rows(path: str | Path, *, epoch: int | None = None) -> list[dict[str, Any]]:
    """The rows :func:`~aieval.datasets.load_inspect_log` builds, as plain dicts (for JSONL
    export or editing).

    Raises:
        ConfigError: inspect_ai is not installed (says which extra to install).
        DatasetError: the file is missing, is not an inspect_ai log, or holds no samples.
    """
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


def inspect_example(row: Mapping[str, Any]) -> dict[str, Any]:
    """What an imported row says the sample is: its id, input, expected and own metadata.

    The recorded answer, scores, usage, timings and the run's ids are left out, so the same
    samples read from two runs, or from one log as ``.eval`` and as ``.json``, are the same.
    """
    metadata = row.get("metadata")
    own = (
        {k: v for k, v in metadata.items() if k not in _RUN_METADATA}
        if isinstance(metadata, Mapping)
        else metadata
    )
    return {
        "id": row.get("id"),
        "input": row.get("input"),
        "expected": row.get("expected"),
        "metadata": own,
    }


def looks_like_inspect_log(data: Any) -> bool:
    """Whether parsed JSON is an inspect_ai log (its top level has ``version`` and ``eval``)."""
    return isinstance(data, Mapping) and "eval" in data and "version" in data


def _read(path: Path) -> Any:
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise ConfigError(f"{path}: {_INSTALL_HINT}") from None
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
    for key, seconds in (
        ("inspect_total_time", sample.total_time),
        ("inspect_working_time", sample.working_time),
    ):
        if seconds is not None:
            metadata[key] = seconds
    error = _error(sample, metadata)
    row: dict[str, Any] = {
        "id": f"{sample.id}#{sample.epoch}" if tag_epoch else str(sample.id),
        "input": _input(sample.input),
        "expected": list(sample.target) if isinstance(sample.target, list) else sample.target,
        # A sample without an answer is not graded as an empty one: the run records its error.
        "prediction": None if error is not None else sample.output.completion,
        "metadata": metadata,
        "scores": _scores(sample.scores or {}),
    }
    if error is not None:  # stored as the sample's error, counted like any other
        row["recorded_error"] = error
    calls = _calls(sample.model_usage or {})
    if calls:
        row["recorded_calls"] = calls
    if sample.total_time is not None:
        row["recorded_latency_s"] = sample.total_time
    return row


def _error(sample: Any, metadata: dict[str, Any]) -> str | None:
    """Why the sample has no answer to grade (it errored, or has no output), or ``None``."""
    if sample.error is not None:
        metadata["inspect_error"] = str(getattr(sample.error, "message", sample.error))
        return f"inspect_ai sample error: {metadata['inspect_error']}"
    output = sample.output
    if output is not None and output.choices:
        return None
    limit = getattr(sample, "limit", None)
    why = f" (it hit its {limit.type} limit of {limit.limit:g})" if limit is not None else ""
    return f"inspect_ai sample has no output: the model gave no completion{why}"


def _calls(usage: Mapping[str, Any]) -> list[dict[str, Any]]:
    """One recorded call per model in the sample's ``model_usage``."""
    return [
        {
            "provider": INSPECT_SOURCE,
            "model": str(model),
            "input_tokens": u.input_tokens,
            "output_tokens": u.output_tokens,
            "cost": u.total_cost,
        }
        for model, u in usage.items()
    ]


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
            parsed = float(value)
        except ValueError:
            return None
        return parsed if math.isfinite(parsed) else None
    return None
