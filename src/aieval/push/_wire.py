"""The upload format of ``POST /api/runs/import`` (version 1), validated field by field.

An upload sends a run's samples in numbered parts, then commits them with the run's header::

    {"version": 1, "upload": "<32 hex>", "part": 0, "samples": [SAMPLE, ...]}
    {"version": 1, "upload": "<32 hex>", "part": 1, "samples": [...]}
    {"version": 1, "upload": "<32 hex>", "parts": 2, "run": RUN}

The columns travel as the store holds them: JSON columns (``input``, ``expected``,
``metadata``, ``extra``, ``verdict``, a score's ``raw`` and ``metadata``) as JSON text, so a copy
is exact. Strings may hold any character (NUL, lone surrogates as ``\\udcXX`` escapes).
"""

from __future__ import annotations

import json
import math
import re
import time
from collections.abc import Iterable
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    StrictInt,
    field_validator,
    model_validator,
)

from aieval.store import RunRow, StoredCall, StoredSample, StoredScore

__all__ = [
    "MAX_CLOCK_SKEW_S",
    "MAX_COST",
    "MAX_ERROR_CHARS",
    "MAX_HEADER_JSON_BYTES",
    "MAX_JSON_DEPTH",
    "MAX_JSON_ITEMS",
    "MAX_LATENCY_S",
    "MAX_NAME_CHARS",
    "MAX_PART_SAMPLES",
    "WIRE_VERSION",
    "ImportRequest",
    "RunIn",
    "SampleIn",
    "check_json_value",
    "json_items",
    "run_in",
    "sample_in",
]

#: The upload format's version; a server refuses any other.
WIRE_VERSION = 1
#: Samples per part at most.
MAX_PART_SAMPLES = 2000
#: The range of the store's integer columns (PostgreSQL's BIGINT, SQLite's INTEGER).
_INT_MAX = 2**63 - 1
#: How far ahead of the server's clock an uploaded time may be (the two clocks' skew).
MAX_CLOCK_SKEW_S = 300.0
#: Characters of a header's name-like field at most (id, name, model, provider, dataset, ...).
MAX_NAME_CHARS = 1000
#: Characters of the header's ``error`` at most.
MAX_ERROR_CHARS = 100_000
#: Bytes of the header's ``config`` and of its ``metrics`` (as compact JSON) at most: a run's
#: are a few KB, and the runs list decodes every header it shows (a MiB of small arrays takes
#: about 18 MB to decode, fifty of them per page).
MAX_HEADER_JSON_BYTES = 65_536
#: How deep objects and arrays may nest in a JSON value of an upload (the store's own bound).
MAX_JSON_DEPTH = 200
#: Objects and arrays one request body, or one JSON text column, may hold at most: decoding
#: takes memory in proportion to them, not to the bytes (32 MB of ``[]`` decode to gigabytes).
MAX_JSON_ITEMS = 1_000_000
#: A latency (seconds) at most: larger is no measurement, and sums of it must stay finite.
MAX_LATENCY_S = 1e6
#: A cost at most, for the same reason.
MAX_COST = 1e6
#: A JSON string, skipped whole when counting the objects and arrays of a JSON text.
_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')


def json_items(text: bytes, limit: int) -> int:
    """How many objects and arrays the JSON ``text`` holds: exact when over ``limit`` (the
    brackets inside strings left out), else an upper bound (all brackets, counted at C speed)."""
    count = text.count(b"{") + text.count(b"[")
    if count <= limit:
        return count
    bare = _STRING.sub(b"", text)
    return bare.count(b"{") + bare.count(b"[")


def _non_finite(name: str) -> Any:
    raise ValueError(f"{name} is not a number JSON allows; give a finite number or null")


def check_json_value(value: Any, what: str = "") -> None:
    """Refuse (``ValueError`` naming the path below ``what``) a JSON value nested more than
    :data:`MAX_JSON_DEPTH` deep or holding a non-finite number (``1e400`` decodes to infinity).
    Walks without recursion."""
    stack: list[tuple[Any, str, int]] = [(value, what, 1)]
    while stack:
        node, path, depth = stack.pop()
        if isinstance(node, float):
            if not math.isfinite(node):
                raise ValueError(
                    f"{path or '(value)'}: Input should be a finite number, got {node}"
                )
            continue
        if isinstance(node, dict):
            items: Iterable[tuple[Any, Any]] = node.items()
        elif isinstance(node, list):
            items = enumerate(node)
        else:
            continue
        if depth > MAX_JSON_DEPTH:
            raise ValueError(
                f"{path or '(value)'}: objects and arrays nest more than {MAX_JSON_DEPTH} levels"
            )
        stack.extend((v, f"{path}.{k}" if path else str(k), depth + 1) for k, v in items)


def _string(value: Any) -> str:
    # any Python string, lone surrogates included (pydantic's own str refuses those)
    if not isinstance(value, str):
        raise ValueError(f"Input should be a valid string, got {type(value).__name__}")
    return value


def _named(value: Any) -> str:
    text = _string(value)
    if not text:
        raise ValueError("must not be empty")
    return text


def _at_most(text: str, limit: int) -> str:
    if len(text) > limit:
        raise ValueError(f"{len(text)} characters; at most {limit} are taken")
    return text


def _short(value: Any) -> str:
    return _at_most(_named(value), MAX_NAME_CHARS)


def _short_text(value: Any) -> str | None:
    return None if value is None else _at_most(_string(value), MAX_NAME_CHARS)


def _error_text(value: Any) -> str | None:
    return None if value is None else _at_most(_string(value), MAX_ERROR_CHARS)


def _not_ahead(value: float) -> float:
    ahead = value - time.time()
    if ahead > MAX_CLOCK_SKEW_S:
        raise ValueError(
            f"{ahead:.0f} s ahead of this server's clock (at most {MAX_CLOCK_SKEW_S:.0f} s "
            "is taken): give the time the run was made, in seconds since the epoch"
        )
    return value


_Str = Annotated[str, PlainValidator(_string)]
_Name = Annotated[str, PlainValidator(_named)]
#: A header's name-like field: at most :data:`MAX_NAME_CHARS` characters.
_Short = Annotated[str, PlainValidator(_short)]
_ShortText = Annotated[str | None, PlainValidator(_short_text)]
_ErrorText = Annotated[str | None, PlainValidator(_error_text)]
_Latency = Annotated[float, Field(ge=0, le=MAX_LATENCY_S)] | None
_Cost = Annotated[float, Field(ge=0, le=MAX_COST)] | None
#: A score's value: normalized, 0..1 (see :class:`aieval.core.Score`).
_ScoreValue = Annotated[float, Field(ge=0, le=1)] | None
_Text = _Str | None
_Natural = Annotated[StrictInt, Field(ge=0, le=_INT_MAX)]
_Count = _Natural | None
_Flag = Literal[0, 1]
#: A time in seconds since the epoch, not in the future (beyond the clocks' skew).
_Time = Annotated[float, AfterValidator(_not_ahead)]


def _json_text(value: str | None, *, kind: type | None = None) -> str | None:
    if value is None:
        return None
    encoded = value.encode("utf-8", "surrogatepass")
    items = json_items(encoded, MAX_JSON_ITEMS)
    if items > MAX_JSON_ITEMS:
        raise ValueError(f"JSON text of {items} objects and arrays; at most {MAX_JSON_ITEMS}")
    try:
        decoded = json.loads(value, parse_constant=_non_finite)
    except RecursionError:
        raise ValueError(
            f"JSON text whose objects and arrays nest more than {MAX_JSON_DEPTH} levels"
        ) from None
    except ValueError as exc:
        raise ValueError(f"not JSON text: {exc}") from None
    check_json_value(decoded)
    if kind is not None and not isinstance(decoded, kind):
        raise ValueError(f"JSON text of {kind.__name__} expected, got {type(decoded).__name__}")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class ScoreIn(_Strict):
    """A score row: ``raw`` and ``metadata`` are JSON text."""

    scorer: _Name
    value: _ScoreValue
    raw: _Text
    reason: _Text
    error: _Text
    metadata: _Text
    unreadable: _Text

    @field_validator("raw", "metadata")
    @classmethod
    def _json(cls, value: str | None) -> str | None:
        return _json_text(value)


class _UsageIn(_Strict):
    """What a sample or one of its model calls cost: the same checks on both rows."""

    latency_s: _Latency
    input_tokens: _Count
    output_tokens: _Count
    cost: _Cost
    retries: _Natural
    cached: _Flag


class CallIn(_UsageIn):
    """A model call row."""

    purpose: _Name
    provider: _Text
    model: _Text
    error: _Text


class SampleIn(_UsageIn):
    """A sample row with its scores and calls; JSON columns are JSON text."""

    sample_id: _Name
    idx: _Natural
    input: _Text
    expected: _Text
    prediction: _Text
    metadata: _Text
    error: _Text
    passed: _Flag | None
    extra: _Text
    created_at: _Time
    verdict: _Text
    scores: list[ScoreIn] = []
    calls: list[CallIn] = []

    @field_validator("input", "expected")
    @classmethod
    def _json(cls, value: str | None) -> str | None:
        return _json_text(value)

    @field_validator("metadata", "extra", "verdict")
    @classmethod
    def _objects(cls, value: str | None) -> str | None:
        return _json_text(value, kind=dict)

    @model_validator(mode="after")
    def _verdict_and_scorers(self) -> SampleIn:
        repeated = _repeated(s.scorer for s in self.scores)
        if repeated is not None:
            raise ValueError(f"scores: scorer {repeated!r} given twice")
        if self.verdict is not None:
            from aieval.core import Verdict

            try:
                Verdict.from_dict(json.loads(self.verdict), f"sample {self.sample_id!r}")
            except Exception as exc:
                raise ValueError(f"verdict: {exc}") from None
        return self

    def stored(self) -> StoredSample:
        """The store's row."""
        data = self.model_dump(exclude={"scores", "calls"})
        return StoredSample(
            **data,
            scores=tuple(StoredScore(**s.model_dump()) for s in self.scores),
            calls=tuple(StoredCall(**c.model_dump()) for c in self.calls),
        )


class RunIn(_Strict):
    """A run's header; ``status`` is one a finished or interrupted run has."""

    id: _Short
    name: _Short
    status: Literal["completed", "failed", "interrupted"]
    model: _ShortText
    provider: _ShortText
    dataset: _ShortText
    dataset_hash: _ShortText
    n_examples: _Count
    git_sha: _ShortText
    config: dict[str, Any]
    metrics: dict[str, Any] | None
    error: _ErrorText
    created_at: _Time
    started_at: _Time | None
    finished_at: _Time | None
    pid: Annotated[StrictInt, Field(ge=-_INT_MAX - 1, le=_INT_MAX)] | None
    host: _ShortText
    heartbeat_at: _Time | None

    @field_validator("config", "metrics")
    @classmethod
    def _bounded(cls, value: dict[str, Any] | None) -> dict[str, Any] | None:
        # the runs list decodes every header it answers: a header stays small
        if value is None:
            return None
        check_json_value(value)
        size = len(json.dumps(value, ensure_ascii=True, separators=(",", ":")))
        if size > MAX_HEADER_JSON_BYTES:
            raise ValueError(f"{size} bytes of JSON; at most {MAX_HEADER_JSON_BYTES} are taken")
        return value

    def row(self) -> RunRow:
        """The store's header."""
        return RunRow(**self.model_dump())


class ImportRequest(_Strict):
    """One request of an upload: a part of samples, or the commit with the run's header."""

    version: int
    upload: Annotated[str, Field(pattern=r"^[0-9a-f]{32}$")]
    part: Annotated[StrictInt, Field(ge=0, le=1_000_000)] | None = None
    samples: Annotated[list[SampleIn], Field(max_length=MAX_PART_SAMPLES)] = []
    parts: Annotated[StrictInt, Field(ge=0, le=1_000_000)] | None = None
    run: RunIn | None = None
    #: the commit's echo of the holding answer's ``held`` digest: the run must not have
    #: changed on the server since (absent: no such check, an older client)
    held: Annotated[str, Field(pattern=r"^[0-9a-f]{64}$")] | None = None

    @field_validator("version")
    @classmethod
    def _version(cls, value: int) -> int:
        if value != WIRE_VERSION:
            raise ValueError(f"this server reads upload version {WIRE_VERSION}, got {value}")
        return value

    @model_validator(mode="after")
    def _one_kind(self) -> ImportRequest:
        if self.part is not None and (self.run is not None or self.parts is not None):
            raise ValueError("give either part and samples, or run and parts (the commit)")
        if self.part is None and (self.run is None or self.parts is None):
            missing = "run" if self.run is None else "parts"
            raise ValueError(f"{missing}: required to commit (or give part and samples)")
        if self.part is not None and self.held is not None:
            raise ValueError("held: only a commit carries it")
        if self.part is None and self.samples:
            raise ValueError("samples: send samples in parts, before the commit")
        repeated = _repeated(s.sample_id for s in self.samples)
        if repeated is not None:
            raise ValueError(f"samples: sample id {repeated!r} given twice")
        return self


def _repeated(names: Iterable[str]) -> str | None:
    """The first name given a second time, or ``None`` (one pass: an upload may hold tens of
    thousands of names)."""
    seen: set[str] = set()
    for name in names:
        if name in seen:
            return name
        seen.add(name)
    return None


def sample_in(sample: StoredSample) -> dict[str, Any]:
    """A stored sample as the upload's JSON object."""
    data = {name: getattr(sample, name) for name in StoredSample.__dataclass_fields__}
    data["scores"] = [
        {n: getattr(s, n) for n in StoredScore.__dataclass_fields__} for s in sample.scores
    ]
    data["calls"] = [
        {n: getattr(c, n) for n in StoredCall.__dataclass_fields__} for c in sample.calls
    ]
    return data


def run_in(run: RunRow) -> dict[str, Any]:
    """A run's header as the upload's JSON object."""
    return {name: getattr(run, name) for name in RunRow.__dataclass_fields__}
