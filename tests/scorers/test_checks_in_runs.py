"""Checks in real runs: eval-file entries with options, bad options refused before any sample,
and the call checks (latency, cost, finish reason) reading the sample's call records."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer, Reply

from aieval import run
from aieval.errors import ConfigError
from aieval.runner import load_eval, parse_eval, run_eval
from aieval.scorers import contains, cost, latency, regex

ROWS = [
    {"id": "ok", "input": "q1", "prediction": "Your refund #1234 is on its way.", "expected": "x"},
    {"id": "sorry", "input": "q2", "prediction": "Sorry, no refund.", "expected": "x"},
    {"id": "json", "input": "q3", "prediction": 'Here: {"status": "ok"}', "expected": "x"},
]


def _values(result: Any, scorer: str) -> dict[str, float | None]:
    return {s.id: s.scores[scorer].value for s in result.samples}


def test_an_eval_file_runs_checks_with_options(tmp_path: Path) -> None:
    (tmp_path / "eval.yaml").write_text(
        """
name: checks
dataset: {rows: ROWS}
scorers:
  - contains: {value: refund}
  - contains: {value: Sorry, negate: true, name: no_apology}
  - regex: {pattern: '#\\d{4}'}
  - json_schema: {contains: true, schema: {type: object, required: [status]}}
  - python: {expression: "row['id'] != 'sorry' and len(output) > 10"}
""".replace("ROWS", repr(ROWS)),
        encoding="utf-8",
    )
    (result,) = run_eval(load_eval(tmp_path / "eval.yaml"), store=tmp_path / "runs.db")
    assert _values(result, "contains") == {"ok": 1.0, "sorry": 1.0, "json": 0.0}
    assert _values(result, "no_apology") == {"ok": 1.0, "sorry": 0.0, "json": 1.0}
    assert _values(result, "regex") == {"ok": 1.0, "sorry": 0.0, "json": 0.0}
    assert _values(result, "json_schema") == {"ok": 0.0, "sorry": 0.0, "json": 1.0}
    assert _values(result, "python") == {"ok": 1.0, "sorry": 0.0, "json": 1.0}
    by_id = {s.id: s for s in result.samples}
    assert by_id["sorry"].scores["no_apology"].reason == (
        "output contains 'Sorry' (negate: it must not)"
    )
    assert by_id["json"].scores["contains"].reason == "output does not contain 'refund'"
    assert [s.id for s in result.samples if s.passed] == []  # each row fails some check
    assert result.error_count == 0


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        ({"contains": {"valeu": "x"}}, r"contains\.valeu: unknown key; did you mean value\?"),
        ({"regex": {"pattern": "("}}, r"regex\.pattern: '\(' is not a regular expression"),
        ({"regex": {"flags": "i"}}, r"regex\.pattern: required option missing"),
        ({"word_count": {"max_words": "ten"}}, r"word_count\.max_words: .*\(got 'ten'\)"),
        ({"json_schema": {"schema": {"type": 3}}}, r"json_schema\.schema: not a valid JSON Schema"),
        ({"is_sql": {"dialect": "cobol"}}, r"is_sql\.dialect: unknown SQL dialect 'cobol'"),
        ({"python": {"expression": "output ==="}}, r"python\.expression: .* is not an expression"),
        (
            {"cost": {"max_usd": 1, "prices": {"m": {"input_per_mtok": 1}}}},
            r"cost\.prices\.m\.output_per_mtok: Field required",
        ),
        ({"latency": {"max_s": -1}}, r"latency\.max_s: must be >= 0"),
        ({"latency": {"max_s": float("nan")}}, r"latency\.max_s: must be a finite number"),
        ({"cost": {"max_usd": float("inf")}}, r"cost\.max_usd: must be a finite number"),
        (
            {"levenshtein": {"value": "a", "max_distance": float("nan")}},
            r"levenshtein\.max_distance: ",
        ),
    ],
)
def test_a_bad_option_is_refused_before_any_sample(
    tmp_path: Path, entry: dict[str, Any], message: str
) -> None:
    config = parse_eval({"name": "bad", "dataset": {"rows": ROWS}, "scorers": [entry]})
    with pytest.raises(ConfigError, match=message):
        run_eval(config, store=tmp_path / "runs.db")
    assert not (tmp_path / "runs.db").exists() or _no_samples(tmp_path / "runs.db")


def _no_samples(path: Path) -> bool:
    import sqlite3

    with sqlite3.connect(path) as conn:
        tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master")}
        return (
            "samples" not in tables
            or conn.execute("SELECT COUNT(*) FROM samples").fetchone()[0] == 0
        )


def test_latency_and_cost_read_the_recorded_calls(tmp_path: Path) -> None:
    rows = [
        {
            "id": "fast",
            "input": "q",
            "prediction": "a",
            "recorded_calls": [{"model": "m", "latency_s": 0.4, "cost": 0.001}],
        },
        {
            "id": "slow",
            "input": "q",
            "prediction": "a",
            "recorded_calls": [
                {"model": "m", "latency_s": 1.5, "cost": 0.001},
                {"model": "m", "latency_s": 1.0, "cost": 0.004},
            ],
        },
        {
            "id": "timed",
            "input": "q",
            "prediction": "a",
            "recorded_latency_s": 0.2,
            "recorded_calls": [{"model": "m", "input_tokens": 1000, "output_tokens": 500}],
        },
        {"id": "bare", "input": "q", "prediction": "a"},
    ]
    prices = {"m": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}
    result = run(
        name="usage",
        dataset=rows,
        scorers=[latency.with_options(max_s=2.0), cost.with_options(max_usd=0.003, prices=prices)],
        store=tmp_path / "runs.db",
    )
    assert _values(result, "latency") == {"fast": 1.0, "slow": 0.0, "timed": 1.0, "bare": None}
    # timed: 1000 input tokens at $1/Mtok + 500 output at $2/Mtok = $0.002
    assert _values(result, "cost") == {"fast": 1.0, "slow": 0.0, "timed": 1.0, "bare": None}
    by_id = {s.id: s for s in result.samples}
    assert by_id["slow"].scores["latency"].raw == pytest.approx(2.5)
    assert by_id["slow"].scores["latency"].reason == "latency 2.500 s > max_s 2 s"
    assert by_id["timed"].scores["latency"].raw == pytest.approx(0.2)  # the row's own figure
    assert by_id["timed"].scores["cost"].raw == pytest.approx(0.002)
    assert by_id["slow"].scores["cost"].reason == "cost $0.005000 > max_usd $0.003"
    bare = by_id["bare"].scores
    assert bare["latency"].not_applicable and bare["cost"].not_applicable
    assert bare["cost"].reason == "no recorded model call of the target for this sample"


def test_cost_without_a_price_is_not_applicable_never_zero(tmp_path: Path) -> None:
    rows = [
        {
            "id": "r",
            "input": "q",
            "prediction": "a",
            "recorded_calls": [{"model": "unpriced", "input_tokens": 10, "output_tokens": 5}],
        }
    ]
    result = run(
        name="c", dataset=rows, scorers=[cost.with_options(max_usd=1.0)], store=tmp_path / "runs.db"
    )
    (sample,) = result.samples
    assert sample.scores["cost"].value is None
    assert (
        sample.scores["cost"].reason == "cost unknown: no reported cost and no price for unpriced"
    )
    assert not result.ok  # a check that scored no sample is reported


OWN_PRICES = {"m": {"input_per_mtok": 10.0, "output_per_mtok": 10.0}}


def test_cost_prices_calls_with_the_runs_prices(tmp_path: Path) -> None:
    # the run's ``prices`` (what its cost figures use) price the check's calls too; the check's
    # own ``prices`` win for a model both name
    rows = [
        {"id": "r", "input": "q", "prediction": "a",
         "recorded_calls": [{"model": "m", "input_tokens": 1000, "output_tokens": 500}]}
    ]  # fmt: skip
    result = run(
        name="c",
        dataset=rows,
        scorers=[
            cost.with_options(max_usd=0.003, name="run_priced"),
            cost.with_options(max_usd=0.003, name="own_priced", prices=OWN_PRICES),
        ],
        prices={"m": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}},
        store=tmp_path / "runs.db",
    )
    (sample,) = result.samples
    assert sample.scores["run_priced"].raw == pytest.approx(0.002)
    assert sample.scores["run_priced"].value == 1.0
    assert sample.scores["own_priced"].raw == pytest.approx(0.015)
    assert sample.scores["own_priced"].value == 0.0
    assert sample.cost == pytest.approx(0.002)  # the run's figure, as the check's


def test_call_checks_read_a_provider_targets_calls(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.enqueue(
        Reply("complete answer", finish_reason="stop"),
        Reply("cut sho", finish_reason="length"),
    )
    target = {"provider": "openai-compatible", "base_url": openai_server.base_url, "model": "m"}
    body = {
        "name": "finish",
        "dataset": {"rows": [{"id": "a", "input": "q1"}, {"id": "b", "input": "q2"}]},
        "target": target,
        "settings": {"concurrency": 1},
        "scorers": [{"finish_reason": {"value": "stop"}}, {"latency": {"max_s": 30}}],
    }
    (result,) = run_eval(parse_eval(body), store=tmp_path / "runs.db")
    by_output = {s.prediction: s for s in result.samples}
    assert by_output["complete answer"].scores["finish_reason"].value == 1.0
    truncated = by_output["cut sho"].scores["finish_reason"]
    assert truncated.value == 0.0 and truncated.reason == "finish reason 'length' is not 'stop'"
    for sample in result.samples:
        assert sample.scores["latency"].value == 1.0
        assert sample.scores["latency"].raw == pytest.approx(sample.calls[0].latency_s)


def test_checks_given_to_run_from_python(tmp_path: Path) -> None:
    result = run(
        name="py",
        dataset=ROWS,
        scorers=[contains.with_options(value="refund"), regex.with_options(pattern=r"\d+")],
        store=tmp_path / "runs.db",
    )
    assert result.metrics == {"contains": pytest.approx(2 / 3), "regex": pytest.approx(1 / 3)}


def test_latency_of_a_callable_target_is_the_measured_answer_time(tmp_path: Path) -> None:
    import time

    def target(example: Any) -> str:
        time.sleep(0.6 if example.id == "slow" else 0.0)
        return "a"

    rows = [{"id": "fast", "input": "q"}, {"id": "slow", "input": "q"}]
    result = run(name="lat", dataset=rows, scorers=[latency.with_options(max_s=0.5)],
                 target=target, store=tmp_path / "runs.db")  # fmt: skip
    by_id = {s.id: s for s in result.samples}
    slow = by_id["slow"].scores["latency"]
    assert slow.value == 0.0 and slow.raw is not None and slow.raw >= 0.6
    assert slow.raw == pytest.approx(by_id["slow"].latency_s)  # the sample's own figure
    assert by_id["fast"].scores["latency"].value == 1.0  # no call record: still a figure
