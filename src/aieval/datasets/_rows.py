"""Turn one raw dataset row (a dict) into an :class:`~aieval.Example`."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from aieval._types import Example
from aieval.core import RowCheck
from aieval.datasets._checks import row_checks
from aieval.datasets._depth import check_row_depth
from aieval.datasets._recorded import recorded_usage
from aieval.errors import DatasetError

__all__ = ["RowSpec", "row_facts", "row_to_example"]

_INPUT_FIELDS = ("prompt", "input", "messages")


@dataclass(slots=True, frozen=True)
class RowSpec:
    """How rows map to examples.

    Attributes:
        prediction_field: dotted path of a recorded prediction (default: ``prediction``, or
            ``predictions.<model>`` when rows carry a ``predictions`` dict and a model is given).
        model: the model under evaluation, used to pick ``predictions[model]``.
        require_input: whether a row without ``prompt``/``input``/``messages`` is an error.
    """

    prediction_field: str | None = None
    model: str | None = None
    require_input: bool = True


#: What validating a row finds: id, input, metadata, prediction, recorded error and checks.
_Read = tuple[str, Any, Mapping[str, Any], str | None, str | None, tuple[RowCheck, ...]]


def row_to_example(row: Any, index: int, spec: RowSpec, source: str, line: int) -> Example:
    """Validate ``row`` and build its Example; errors name the source and line."""
    example_id, value, metadata, prediction, recorded_error, checks = _read(
        row, index, spec, source, line
    )
    return Example(
        id=example_id,
        input=value,
        expected=row.get("expected"),
        metadata=dict(metadata),
        prediction=prediction,
        fields=dict(row),
        recorded_error=recorded_error,
        checks=checks,
    )


def row_facts(
    row: Any, index: int, spec: RowSpec, source: str, line: int
) -> tuple[str, bool, bool]:
    """Validate ``row`` as :func:`row_to_example` does (the same errors), without building its
    Example: its id, whether it records a prediction (or an error in its place), whether it
    carries checks."""
    example_id, _, _, prediction, recorded_error, checks = _read(row, index, spec, source, line)
    return example_id, prediction is not None or recorded_error is not None, bool(checks)


def _read(row: Any, index: int, spec: RowSpec, source: str, line: int) -> _Read:
    # ``type(...) is dict`` first: the ABC's isinstance costs more than the rest of a row
    if type(row) is not dict and not isinstance(row, Mapping):
        raise DatasetError(
            f"expected an object with a 'prompt' field, got {type(row).__name__}",
            source=source,
            line=line,
        )
    check_row_depth(row, source, line)  # before anything walks it
    value = _first_present(row)
    if value is None and spec.require_input:
        raise DatasetError(
            "row has no 'prompt' (or 'input'/'messages') field; "
            f"fields present: {', '.join(map(str, row)) or 'none'}",
            source=source,
            line=line,
        )
    metadata = row.get("metadata") or {}
    if type(metadata) is not dict and not isinstance(metadata, Mapping):
        raise DatasetError(
            f"'metadata' must be an object, got {type(metadata).__name__}",
            source=source,
            line=line,
        )
    raw_id = row.get("id")
    if raw_id is None or raw_id == "":
        example_id = str(index)
    elif (
        type(raw_id) is int
        or type(raw_id) is str
        or (isinstance(raw_id, (str, int)) and not isinstance(raw_id, bool))
    ):
        example_id = str(raw_id)
    else:
        raise DatasetError(
            f"'id' must be a string or integer, got {type(raw_id).__name__}",
            source=source,
            line=line,
        )
    prediction = _prediction(row, spec, source, line)
    recorded_error = _recorded_error(row, prediction, source, line)
    recorded_usage(row, source, line)  # refuse malformed recorded calls before the run starts
    checks = row_checks(row, source, line)
    return example_id, value, metadata, prediction, recorded_error, checks


def _first_present(row: Mapping[str, Any]) -> Any:
    for name in _INPUT_FIELDS:
        value = row.get(name)
        if value is not None:
            return value
    return None


def _prediction(row: Mapping[str, Any], spec: RowSpec, source: str, line: int) -> str | None:
    if spec.prediction_field:
        value = _dotted(row, spec.prediction_field)
    elif "prediction" in row:
        value = row["prediction"]
    elif spec.model is not None and isinstance(row.get("predictions"), Mapping):
        value = row["predictions"].get(spec.model)
    else:
        return None
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, (int, float, bool)):
        return str(value)
    raise DatasetError(
        f"recorded prediction must be text, got {type(value).__name__}",
        source=source,
        line=line,
    )


def _recorded_error(
    row: Mapping[str, Any], prediction: str | None, source: str, line: int
) -> str | None:
    """The row's ``recorded_error``: text, and never beside a recorded prediction."""
    value = row.get("recorded_error")
    if value is None:
        return None
    if not isinstance(value, str) or not value:
        raise DatasetError(
            f"'recorded_error' must be a non-empty text, got {value!r}", source=source, line=line
        )
    if prediction is not None:
        raise DatasetError(
            "row has both a recorded prediction and a 'recorded_error'; keep one",
            source=source,
            line=line,
        )
    return value


def _dotted(row: Mapping[str, Any], path: str) -> Any:
    value: Any = row
    for part in path.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value
