"""The stage contracts live in aieval.core; their old homes still serve them, and old pickles."""

from __future__ import annotations

import pickle

import pytest
from tests.test_imports import MODULES, _graph

import aieval
import aieval._plugins
import aieval._records
import aieval._types
import aieval.core
import aieval.runner
from aieval.core import CallRecord, Example, SampleRecord, Score, ScoreRecord


def test_core_imports_only_the_errors_and_leaf_helpers() -> None:
    core = {m: _graph()[m] for m in MODULES if m == "aieval.core" or m.startswith("aieval.core.")}
    assert len(core) > 5
    allowed = {"aieval.errors", "aieval._secrets", "aieval._floors", "aieval._numbers"}
    outside = {
        module: [target for target, _ in edges if not target.startswith("aieval.core")]
        for module, edges in core.items()
    }
    assert {m: t for m, t in outside.items() if set(t) - allowed} == {}


def test_the_old_names_are_the_core_classes() -> None:
    assert aieval._types.Example is Example is aieval.Example
    assert aieval._types.Score is Score is aieval.Score
    assert aieval._records.SampleRecord is SampleRecord is aieval.SampleRecord
    assert aieval._records.ScoreRecord is ScoreRecord
    assert aieval._records.CallRecord is CallRecord
    assert aieval._plugins.BUILTIN is aieval.core.BUILTIN
    from aieval.runner._target import Output, Target, Usage

    assert (Output, Target, Usage) == (aieval.core.Output, aieval.core.Target, aieval.core.Usage)
    assert Example.__module__ == "aieval.core._example"


def test_objects_pickled_by_an_earlier_version_still_load(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    record = SampleRecord(
        "s1",
        0,
        "q",
        scores={"exact_match": ScoreRecord(1.0, reason="same")},
        calls=[CallRecord("target", model="m", input_tokens=3)],
    )
    objects = [Example("e1", "q", expected="a"), Score(0.5, raw=5, reason="half"), record]
    # an earlier version defined these in aieval._types and aieval._records: pickle them as
    # it did (by reference to those modules), then load them with the classes back in core
    with monkeypatch.context() as patch:
        for cls, old in (
            (Example, "aieval._types"),
            (Score, "aieval._types"),
            (SampleRecord, "aieval._records"),
            (ScoreRecord, "aieval._records"),
            (CallRecord, "aieval._records"),
        ):
            patch.setattr(cls, "__module__", old)
        old_pickles = [pickle.dumps(obj) for obj in objects]
    assert all(b"aieval.core" not in data for data in old_pickles)
    assert all(b"aieval._" in data for data in old_pickles)
    assert [pickle.loads(data) for data in old_pickles] == objects
