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
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PlainValidator,
    StrictInt,
    field_validator,
    model_validator,
)

from aieval.core._counts import MAX_COUNT
from aieval.store import RunRow, StoredCall, StoredSample, StoredScore

__all__ = [
    "MAX_PART_SAMPLES",
    "WIRE_VERSION",
    "ImportRequest",
    "RunIn",
    "SampleIn",
    "run_in",
    "sample_in",
]

#: The upload format's version; a server refuses any other.
WIRE_VERSION = 1
#: Samples per part at most.
MAX_PART_SAMPLES = 2000


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


_Str = Annotated[str, PlainValidator(_string)]
_Name = Annotated[str, PlainValidator(_named)]
_Text = _Str | None
#: a count the store keeps (its integers are signed 64-bit): a bigger one is refused here,
#: naming its field, never a failed write of the whole upload
_Stored = Annotated[StrictInt, Field(ge=0, le=MAX_COUNT)]
_Count = _Stored | None
_Flag = Literal[0, 1]


def _json_text(value: str | None, *, kind: type | None = None) -> str | None:
    if value is None:
        return None
    try:
        decoded = json.loads(value)
    except ValueError as exc:
        raise ValueError(f"not JSON text: {exc}") from None
    if kind is not None and not isinstance(decoded, kind):
        raise ValueError(f"JSON text of {kind.__name__} expected, got {type(decoded).__name__}")
    return value


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, allow_inf_nan=False)


class ScoreIn(_Strict):
    """A score row: ``raw`` and ``metadata`` are JSON text."""

    scorer: _Name
    value: float | None
    raw: _Text
    reason: _Text
    error: _Text
    metadata: _Text
    unreadable: _Text

    @field_validator("raw", "metadata")
    @classmethod
    def _json(cls, value: str | None) -> str | None:
        return _json_text(value)


class CallIn(_Strict):
    """A model call row."""

    purpose: _Name
    provider: _Text
    model: _Text
    latency_s: float | None
    input_tokens: _Count
    output_tokens: _Count
    cost: float | None
    retries: _Stored
    cached: _Flag
    error: _Text


class SampleIn(_Strict):
    """A sample row with its scores and calls; JSON columns are JSON text."""

    sample_id: _Name
    idx: _Stored
    input: _Text
    expected: _Text
    prediction: _Text
    metadata: _Text
    error: _Text
    passed: _Flag | None
    latency_s: float | None
    input_tokens: _Count
    output_tokens: _Count
    cost: float | None
    retries: _Stored
    cached: _Flag
    extra: _Text
    created_at: float
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
        names = [s.scorer for s in self.scores]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"scores: scorer {repeated[0]!r} given twice")
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

    id: _Name
    name: _Name
    status: Literal["completed", "failed", "interrupted"]
    model: _Text
    provider: _Text
    dataset: _Text
    dataset_hash: _Text
    n_examples: _Count
    git_sha: _Text
    config: dict[str, Any]
    metrics: dict[str, Any] | None
    error: _Text
    created_at: float
    started_at: float | None
    finished_at: float | None
    pid: Annotated[StrictInt, Field(ge=-MAX_COUNT - 1, le=MAX_COUNT)] | None
    host: _Text
    heartbeat_at: float | None

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
        ids = [s.sample_id for s in self.samples]
        if len(set(ids)) != len(ids):
            repeated = next(i for i in ids if ids.count(i) > 1)
            raise ValueError(f"samples: sample id {repeated!r} given twice")
        return self


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
