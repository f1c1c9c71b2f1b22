"""One limit for every per-sample expression: ``python``, ``regex`` and ``json_schema`` (its
patterns) run in a reused worker that is stopped at the time limit and capped in memory."""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys

import pytest

from aieval.errors import ScorerError
from aieval.scorers import _expressions, json_schema, python, regex

# 9999 items, each computing a four-million-digit power: minutes without a limit
COMPUTES_FOR_MINUTES = "len([x for x in 'a' * 9999 if 9**4000000 > 0]) > 0"
BACKTRACKS = "^(a+)+$"
CRAFTED_NAME = "a" * 64 + "!"


@pytest.fixture
def half_second(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_expressions, "EXPRESSION_TIME_LIMIT_S", 0.5)
    monkeypatch.setattr(_expressions, "EXPRESSION_MEMORY_LIMIT_MB", 128)


@pytest.fixture
def small_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    # time enough to build the values below on a busy machine: the memory is what is tested
    monkeypatch.setattr(_expressions, "EXPRESSION_TIME_LIMIT_S", 10.0)
    monkeypatch.setattr(_expressions, "EXPRESSION_MEMORY_LIMIT_MB", 128)


def test_a_python_expression_that_computes_without_end_is_stopped(half_second: None) -> None:
    with pytest.raises(
        ScorerError,
        match=r"^python: .* took over 0\.5 s \(the per-sample expression time limit\) and was",
    ):
        python("abc", expression=COMPUTES_FOR_MINUTES)
    assert python("abc", expression="len(output) == 3").value == 1.0


def test_a_killed_worker_is_replaced_and_the_next_sample_scores(half_second: None) -> None:
    assert python("abc", expression="True").value == 1.0
    worker = _expressions._idle[-1]  # the one the next sample takes
    with pytest.raises(ScorerError, match="took over"):
        python("abc", expression=COMPUTES_FOR_MINUTES)
    assert worker.process.returncode is not None  # killed and reaped, not left running
    assert worker not in _expressions._idle
    assert python("abcd", expression="len(output) / 8").value == 0.5
    assert _expressions._idle[-1].process.pid != worker.process.pid


def test_a_value_past_the_memory_limit_is_that_samples_error(small_memory: None) -> None:
    # %*s takes its width from the arguments: no format string shows how big it will be
    with pytest.raises(
        ScorerError,
        match=r"^python: .* needed more than 128 MB \(the per-sample expression memory limit\)",
    ):
        python("abc", expression="len('%*s' % (200_000_000, output)) > 0")
    assert python("abc", expression="output * 2 == 'abcabc'").value == 1.0


@pytest.mark.parametrize(
    "expression",
    [
        pytest.param("len(str([output * 50] * 99999)) > 0", id="str-of-a-list"),
        pytest.param("len('%*s' % (20_000_000, output)) > 0", id="star-width"),
        pytest.param(
            "len('%s%s' % (str([output * 20] * 99999), str([output * 20] * 99999))) > 0",
            id="percent-s",
        ),
    ],
)
def test_every_way_of_building_a_huge_text_is_refused(small_memory: None, expression: str) -> None:
    with pytest.raises(ScorerError, match=r"would build more than 10,000,000 characters"):
        python("abc", expression=expression)


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        pytest.param({"type": "string", "pattern": BACKTRACKS}, CRAFTED_NAME, id="pattern"),
        pytest.param(
            {"patternProperties": {BACKTRACKS: {"type": "integer"}}},
            {CRAFTED_NAME: 1},
            id="patternProperties",
        ),
        pytest.param(
            {"patternProperties": {BACKTRACKS: {}}, "additionalProperties": False},
            {CRAFTED_NAME: 1},
            id="additionalProperties",
        ),
        pytest.param(
            {"patternProperties": {BACKTRACKS: {}}, "unevaluatedProperties": False},
            {CRAFTED_NAME: 1},
            id="unevaluatedProperties",
        ),
        pytest.param({"propertyNames": {"pattern": BACKTRACKS}}, {CRAFTED_NAME: 1}, id="names"),
    ],
)
def test_a_schema_pattern_that_backtracks_is_stopped_at_the_time_limit(
    half_second: None, schema: dict[str, object], value: object
) -> None:
    with pytest.raises(
        ScorerError,
        match=r"^json_schema: validating the output took over 0\.5 s \(the per-sample",
    ):
        json_schema(json.dumps(value), schema=schema)
    # the same schema on an ordinary output still answers
    assert json_schema(json.dumps("aaa"), schema={"pattern": BACKTRACKS}).value == 1.0


def test_schema_patterns_still_validate_as_before() -> None:
    schema = {"type": "object", "patternProperties": {"^n_": {"type": "integer"}}}
    assert json_schema('{"n_a": 1, "b": "x"}', schema=schema).value == 1.0
    assert json_schema('{"n_a": "x"}', schema=schema).reason == (
        "JSON at $.n_a fails the schema: 'x' is not of type 'integer'"
    )
    named = {"type": "string", "pattern": "^[a-z]+$"}
    assert json_schema('"ab1"', schema=named).reason == (
        "JSON at $ fails the schema: 'ab1' does not match '^[a-z]+$'"
    )


def test_the_regex_check_is_stopped_at_the_same_limit(half_second: None) -> None:
    with pytest.raises(ScorerError, match=r"^regex: /\^\(a\+\)\+\$/ on this output .* 0\.5 s"):
        regex(CRAFTED_NAME, pattern=BACKTRACKS)
    assert regex("aaa", pattern=BACKTRACKS).value == 1.0


def test_an_overrun_in_a_run_errors_that_sample_only(half_second: None) -> None:
    from aieval import run

    rows = [
        {"id": "crafted", "prompt": "q", "expected": "", "prediction": json.dumps(CRAFTED_NAME)},
        {"id": "plain", "prompt": "q", "expected": "", "prediction": json.dumps("aaa")},
    ]
    result = run(
        name="expression-limits",
        dataset=rows,
        scorers=[
            python.with_options(
                expression=f"re_search({BACKTRACKS!r}, json_loads(output)) is not None"
            ),
            json_schema.with_options(schema={"pattern": BACKTRACKS}),
        ],
        store=False,
    )
    by_id = {s.id: s.scores for s in result.samples}
    assert by_id["plain"]["python"].value == 1.0
    assert by_id["plain"]["json_schema"].value == 1.0
    for name in ("python", "json_schema"):
        crafted = by_id["crafted"][name]
        assert crafted.value is None and "took over 0.5 s" in (crafted.error or "")


@pytest.mark.skipif(not hasattr(os, "pidfd_open"), reason="waits on a pidfd (Linux)")
def test_the_worker_ends_with_the_process_that_started_it() -> None:
    # the parent ends without its exit handlers: the worker sees its stdin close and exits
    program = (
        "import os\n"
        "from aieval.scorers import python, _expressions\n"
        "assert python('abc', expression='True').value == 1.0\n"
        "print(_expressions._idle[-1].process.pid, flush=True)\n"
        "os._exit(0)\n"
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)}
    done = subprocess.run(
        [sys.executable, "-c", program], env=env, capture_output=True, text=True, check=True
    )
    worker = int(done.stdout)
    try:
        handle = os.pidfd_open(worker)
    except ProcessLookupError:
        return  # already gone
    try:
        assert select.select([handle], [], [], 30)[0], "the worker outlived its parent"
    finally:
        os.close(handle)


def test_a_value_the_worker_cannot_receive_is_that_samples_error() -> None:
    class Local:  # defined in a function: nothing can pickle it
        pass

    with pytest.raises(ScorerError, match=r"^python: the values 'True' reads cannot be sent"):
        python("abc", Local(), expression="True")
    assert python("abc", "abc", expression="output == expected").value == 1.0
