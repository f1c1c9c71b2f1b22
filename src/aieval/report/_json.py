"""JSON output and the published JSON Schemas of reports and comparisons."""

from __future__ import annotations

import json
import math
from functools import cache
from importlib import resources
from typing import Any

from aieval.report._document import as_document

__all__ = ["comparison_schema", "render_json", "report_schema"]


def render_json(obj: Any, *, indent: int | None = 2) -> str:
    """A report or comparison as JSON text (``to_dict()`` data, keys in document order).

    Non-finite floats become ``null`` so the output is strict JSON any parser accepts.

    >>> render_json({"kind": "report", "x": float("nan")}, indent=None)
    '{"kind": "report", "x": null}'
    """
    return json.dumps(_finite(as_document(obj)), indent=indent, ensure_ascii=False, allow_nan=False)


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {str(k): _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def report_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``RunReport.to_dict()``.

    >>> report_schema()["$schema"]
    'https://json-schema.org/draft/2020-12/schema'
    """
    return json.loads(_schema_text("report.schema.json"))  # type: ignore[no-any-return]


def comparison_schema() -> dict[str, Any]:
    """The JSON Schema (draft 2020-12) of ``Comparison.to_dict()``.

    >>> comparison_schema()["properties"]["kind"]["const"]
    'comparison'
    """
    return json.loads(_schema_text("comparison.schema.json"))  # type: ignore[no-any-return]


@cache
def _schema_text(name: str) -> str:
    return resources.files("aieval.report").joinpath("schemas", name).read_text("utf-8")
