"""What the spans of a run say: attributes, evaluation events and timings, without OpenTelemetry.

Everything here is a pure function of stored records, so a run exported live and the same run
replayed from the store produce the same spans.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, fields
from typing import Any

from aieval._records import CallRecord, SampleRecord
from aieval.runner import RunSummary

__all__ = [
    "AttributeValue",
    "Attributes",
    "CallTiming",
    "RunHeader",
    "SampleTiming",
    "call_attributes",
    "error_type",
    "evaluation_events",
    "layout",
    "run_end_attributes",
    "run_start_attributes",
    "sample_attributes",
]

AttributeValue = str | bool | int | float | list[str]
Attributes = dict[str, AttributeValue]

#: Longest text (reasons, error messages) put on a span; backends truncate or drop more.
_MAX_TEXT = 1000
_ERROR_PREFIX = re.compile(r"^((?:[a-z_]\w*\.)*[A-Z]\w*):")


@dataclass(slots=True, frozen=True)
class RunHeader:
    """The fixed facts of a run that its run span carries from the start."""

    id: str
    name: str
    model: str | None = None
    provider: str | None = None
    dataset: str | None = None
    dataset_hash: str | None = None
    n_examples: int | None = None
    git_sha: str | None = None

    @classmethod
    def of(cls, run: Any) -> RunHeader:
        """The header of a run that has these facts as attributes (a live ``RunStart`` or a
        stored ``RunRow``): one copy, so a live run and its replay carry the same facts."""
        return cls(**{f.name: getattr(run, f.name) for f in fields(cls)})


@dataclass(slots=True, frozen=True)
class CallTiming:
    """Start and end (ns since the epoch) of one model call's span."""

    call: CallRecord
    start_ns: int
    end_ns: int


@dataclass(slots=True, frozen=True)
class SampleTiming:
    """Start and end (ns since the epoch) of a sample's span and of each of its calls."""

    start_ns: int
    end_ns: int
    calls: tuple[CallTiming, ...]


def layout(sample: SampleRecord, end_s: float) -> SampleTiming:
    """Place a sample's span so it ends at ``end_s`` and lasts as long as its recorded work.

    Calls run one after another in recorded order (the target first, then judges), so the
    sample lasts its own latency or the sum of its calls' latencies, whichever is longer.

    Example:
        >>> from aieval import CallRecord, SampleRecord
        >>> s = SampleRecord("q1", 0, "hi", latency_s=0.5,
        ...                  calls=[CallRecord("target", latency_s=0.5),
        ...                         CallRecord("judge:j", latency_s=0.25)])
        >>> t = layout(s, 10.0)
        >>> (t.end_ns - t.start_ns) / 1e9, [(c.end_ns - c.start_ns) / 1e9 for c in t.calls]
        (0.75, [0.5, 0.25])
    """
    end_ns = int(end_s * 1e9)
    durations = [_ns(call.latency_s) for call in sample.calls]
    total = max(_ns(sample.latency_s), sum(durations))
    start_ns = end_ns - total
    cursor = start_ns
    timings = []
    for call, duration in zip(sample.calls, durations, strict=True):
        timings.append(CallTiming(call, cursor, cursor + duration))
        cursor += duration
    return SampleTiming(start_ns, end_ns, tuple(timings))


def run_start_attributes(header: RunHeader) -> Attributes:
    """The run span's attributes known when the run starts."""
    return _clean(
        {
            "aieval.run.id": header.id,
            "aieval.run.name": header.name,
            "aieval.dataset": header.dataset,
            "aieval.dataset.hash": header.dataset_hash,
            "aieval.dataset.examples": header.n_examples,
            "aieval.git_sha": header.git_sha,
            "gen_ai.provider.name": header.provider,
            "gen_ai.system": header.provider,
            "gen_ai.request.model": header.model,
        }
    )


def run_end_attributes(
    status: str, stored: Mapping[str, Any] | None, error: str | None
) -> Attributes:
    """The run span's attributes once it ends: status, counts, scorer means, grades, usage
    (``stored``: the run's summary as stored)."""
    found: dict[str, Any] = {"aieval.run.status": status, "aieval.error": _clip(error)}
    if stored:
        summary = RunSummary.from_dict(stored)
        found.update(
            {
                "aieval.samples": summary.samples,
                "aieval.passed_count": summary.passed,
                "aieval.pass_rate": summary.pass_rate,
                "aieval.target_errors": summary.target_errors,
                "aieval.usage.input_tokens": summary.input_tokens,
                "aieval.usage.output_tokens": summary.output_tokens,
                "aieval.cost_usd": summary.cost,
            }
        )
        for name, stats in summary.scorers.items():
            found[f"aieval.metric.{name}"] = stats.mean
        evaluation = summary.evaluation
        if evaluation is not None:
            for grade, count in evaluation.grades.items():
                found[f"aieval.grades.{grade}"] = count
            for gate, rate in evaluation.gate_failure_rates.items():
                found[f"aieval.gate_failure_rate.{gate}"] = rate
    return _clean(found)


def sample_attributes(run: RunHeader, sample: SampleRecord) -> Attributes:
    """A sample span's attributes: ids, each score, pass flag, grade, gate failures, usage."""
    verdict = sample.graded_verdict()
    target = next((c for c in sample.calls if c.purpose == "target"), None)
    found: dict[str, Any] = {
        "aieval.run.id": run.id,
        "aieval.run.name": run.name,
        "aieval.example.id": sample.id,
        "aieval.example.index": sample.index,
        "aieval.passed": verdict.passed,
        "aieval.weighted_score": verdict.weighted_score,
        "aieval.grade": verdict.grade,
        "aieval.error": _clip(sample.error),
        "error.type": error_type(sample.error) if sample.error else None,
        "aieval.latency_s": sample.latency_s,
        "aieval.cost_usd": sample.cost,
        "aieval.retries": sample.retries,
        "aieval.cached": sample.cached,
        "aieval.usage.input_tokens": _total(c.input_tokens for c in sample.calls),
        "aieval.usage.output_tokens": _total(c.output_tokens for c in sample.calls),
        "gen_ai.provider.name": target.provider if target else run.provider,
        "gen_ai.system": target.provider if target else run.provider,
        "gen_ai.request.model": run.model,
        "gen_ai.response.model": target.model if target else None,
    }
    failures = [g.name for g in verdict.gates if not g.passed]
    if verdict.gates or verdict.workflow is not None:
        found["aieval.gate_failures"] = failures
        found["aieval.gate_failure_count"] = len(failures)
    for name, score in sample.scores.items():
        found[f"aieval.score.{name}"] = score.value
        if score.error:
            found[f"aieval.scorer_error.{name}"] = _clip(score.error)
    return _clean(found)


def call_attributes(call: CallRecord) -> Attributes:
    """A model call span's attributes, named as in the OpenTelemetry GenAI conventions."""
    return _clean(
        {
            "gen_ai.operation.name": "chat",
            "gen_ai.provider.name": call.provider,
            "gen_ai.system": call.provider,
            "gen_ai.request.model": call.model,
            "gen_ai.response.model": call.model if call.error is None else None,
            "gen_ai.usage.input_tokens": call.input_tokens,
            "gen_ai.usage.output_tokens": call.output_tokens,
            "error.type": error_type(call.error) if call.error else None,
            "aieval.call.purpose": call.purpose,
            "aieval.call.retries": call.retries,
            "aieval.call.cached": call.cached,
            "aieval.cost_usd": call.cost,
            "aieval.error": _clip(call.error),
        }
    )


def evaluation_events(sample: SampleRecord) -> list[tuple[str, Attributes]]:
    """One ``gen_ai.evaluation.result`` event per scorer, as the GenAI conventions define it."""
    events = []
    for name, score in sample.scores.items():
        found: dict[str, Any] = {
            "gen_ai.evaluation.name": name,
            "gen_ai.evaluation.score.value": score.value,
            "gen_ai.evaluation.explanation": _clip(score.reason),
            "error.type": error_type(score.error) if score.error else None,
        }
        events.append(("gen_ai.evaluation.result", _clean(found)))
    return events


def error_type(message: str | None) -> str:
    """The exception class name an error message starts with, else the conventions' ``_OTHER``.

    Example:
        >>> error_type("ProviderTimeoutError: no answer in 60 s"), error_type("boom")
        ('ProviderTimeoutError', '_OTHER')
    """
    match = _ERROR_PREFIX.match(message or "")
    return match.group(1) if match else "_OTHER"


def _ns(seconds: float | None) -> int:
    return int(seconds * 1e9) if seconds is not None and seconds > 0 else 0


def _total(values: Iterable[int | None]) -> int | None:
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _clip(text: str | None) -> str | None:
    if text is None or len(text) <= _MAX_TEXT:
        return text
    return text[: _MAX_TEXT - 1] + "…"


def _clean(found: Mapping[str, Any]) -> Attributes:
    """Drop unknown (None) values: OpenTelemetry attributes cannot be null."""
    return {key: value for key, value in found.items() if value is not None}
