"""Token counts of a recorded run or step, in every shape run logs write them.

A ``tokens_used`` (a step's or run's, or ``metadata.tokens_used``) is an integer total, ``null``
(no model call), or a usage object ``{"input": 615, "output": 324}`` with an optional
``"total"``. An object fills ``metadata.input_tokens``, ``metadata.output_tokens`` and
``metadata.tokens_used`` (its total, when it gives one). Every count is an integer >= 0; a fact
given twice must agree, and a total below input plus output is refused, each naming the fields.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from aieval.errors import WorkflowError

__all__ = ["TOKEN_KEYS", "USAGE_PARTS", "token_count", "token_metadata", "token_usage"]

#: Metadata keys read as token counts; each must be an integer >= 0.
TOKEN_KEYS = ("tokens", "total_tokens", "tokens_used", "input_tokens", "output_tokens")
#: The keys of a usage object (``tokens_used: {"input": 615, "output": 324}``) and the metadata
#: key each one fills.
USAGE_PARTS = {"input": "input_tokens", "output": "output_tokens", "total": "tokens_used"}
_TOTAL_KEYS = frozenset({"tokens", "total_tokens", "tokens_used"})

# (metadata key, field it was read from, count)
_Fact = tuple[str, str, int]


def token_count(value: Any, where: str) -> int:
    """A token count: an integer >= 0 (an integral float such as ``300.0`` is that integer).

    Text, booleans, fractions and negatives are refused, as for durations.
    """
    if isinstance(value, float) and math.isfinite(value) and value.is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise WorkflowError(f"{where}: expected a token count (an integer >= 0), got {value!r}")
    return value


def token_usage(value: Any, where: str, name: str = "tokens_used") -> dict[str, int]:
    """The metadata token counts one recorded ``tokens_used`` (read from field ``name``) gives.

    Example:
        >>> token_usage({"input": 615, "output": 324}, "step")
        {'input_tokens': 615, 'output_tokens': 324}
        >>> token_usage(939, "step"), token_usage(None, "step")
        ({'tokens_used': 939}, {})
    """
    return {key: count for key, _, count in _usage(value, where, name)}


def token_metadata(
    metadata: Mapping[str, Any], lifted: Any, where: str, lifted_name: str = "tokens_used"
) -> dict[str, Any]:
    """``metadata`` with its token counts checked, a usage object in ``metadata.tokens_used``
    spread into counts, and a top-level ``tokens_used`` (``lifted``) moved in.

    A count given at two places (``tokens_used`` and ``metadata.tokens_used``,
    ``metadata.tokens`` and ``metadata.total_tokens``, ``tokens_used.input`` and
    ``metadata.input_tokens``) must agree.
    """
    out = dict(metadata)
    nested = out.pop("tokens_used") if isinstance(out.get("tokens_used"), Mapping) else None
    facts = [
        *_usage(lifted, where, lifted_name),
        *_usage(nested, where, "metadata.tokens_used"),
    ]
    for key in TOKEN_KEYS:
        if out.get(key) is not None:
            out[key] = token_count(out[key], f"{where}, field 'metadata.{key}'")
            facts.append((key, f"metadata.{key}", out[key]))
    first: dict[str, tuple[str, int]] = {}
    for key, name, value in facts:
        kind = "total" if key in _TOTAL_KEYS else key
        if kind not in first:
            first[kind] = (name, value)
            out.setdefault(key, value)
        elif first[kind][1] != value:
            (seen, before) = first[kind]
            raise WorkflowError(
                f"{where}: fields {seen!r} and {name!r} disagree "
                f"({before} vs {value} tokens); keep one of them"
            )
    _total_covers_parts(first, where)
    return out


def _usage(value: Any, where: str, name: str) -> list[_Fact]:
    if value is None:
        return []
    if not isinstance(value, Mapping):
        return [("tokens_used", name, token_count(value, f"{where}, field {name!r}"))]
    unknown = [k for k in value if k not in USAGE_PARTS]
    if unknown:
        raise WorkflowError(
            f"{where}, field {name!r}: unknown key {unknown[0]!r} in a token usage object "
            f"(expected {', '.join(repr(k) for k in USAGE_PARTS)})"
        )
    return [
        (USAGE_PARTS[k], f"{name}.{k}", token_count(v, f"{where}, field '{name}.{k}'"))
        for k, v in value.items()
        if v is not None
    ]


def _total_covers_parts(first: Mapping[str, tuple[str, int]], where: str) -> None:
    """A total smaller than input plus output tokens cannot be right."""
    if "total" not in first:
        return
    parts = [first[k] for k in ("input_tokens", "output_tokens") if k in first]
    name, total = first["total"]
    if parts and total < sum(v for _, v in parts):
        shown = " + ".join(f"{v} ({n!r})" for n, v in parts)
        raise WorkflowError(
            f"{where}: field {name!r} ({total} tokens) is less than its parts, {shown}; "
            "fix one of them"
        )
