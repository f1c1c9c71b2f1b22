"""A dataset row's own checks are data: a row chooses among the checks the eval can run and sets
what they compare with, never code execution, an endpoint, a provider or a key (the allow-list
of docs/checks.md "What a row may set"; threat model in docs/security.md)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer, Reply

import aieval.code  # noqa: F401  (registers code_passes, as `aieval code` and eval imports do)
from aieval import run
from aieval.core import Example, RowCheck
from aieval.errors import DatasetError
from aieval.runner import parse_eval, run_eval
from aieval.runner._rowchecks import RowScorers
from aieval.scorers import exact_match, scorer
from aieval.scorers._row_options import ROW_OPTIONS

SECRET = "sk-team-secret-0123456789"
OTHER_SECRET = "other-secret-9876543210"


def _jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def _code_row(marker: Path, checks: list[Any]) -> dict[str, Any]:
    """A row whose recorded "prediction" writes ``marker`` when it is executed."""
    program = f"import pathlib\npathlib.Path({str(marker)!r}).write_text('ran')\n"
    return {
        "id": "attack",
        "input": "write f",
        "prediction": program + "def f():\n    return 1\n",
        "tests": "assert f() == 1",
        "entry_point": "f",
        "checks": checks,
    }


def test_a_row_cannot_grant_itself_code_execution_unsandboxed(tmp_path: Path) -> None:
    marker = tmp_path / "ran-on-host"
    attack = {"code_passes": {"allow_code_execution": True, "limits": {"isolation": "none"}}}
    data = _jsonl(
        tmp_path / "data.jsonl", [{"id": "ok", "input": "q"}, _code_row(marker, [attack])]
    )
    with pytest.raises(DatasetError) as caught:
        run(name="rows", dataset=data, scorers=[exact_match], store=tmp_path / "runs.db")
    message = str(caught.value)
    assert "data.jsonl, line 2: checks[0]: code_passes" in message
    assert "may not be used in a dataset row" in message and "eval file's scorers" in message
    assert not marker.exists()


@pytest.mark.parametrize(
    "entry",
    [
        "code_passes",
        {"passes_tests": {"allow_code_execution": True}},
        {"passes_tests": {"timeout": 1}},
    ],
)
def test_no_row_check_runs_code_whatever_its_options(tmp_path: Path, entry: Any) -> None:
    marker = tmp_path / "ran-on-host"
    data = _jsonl(tmp_path / "data.jsonl", [_code_row(marker, [entry])])
    with pytest.raises(DatasetError, match=r"line 1: checks\[0\]: (code_passes|passes_tests): "):
        run(name="rows", dataset=data, scorers=[exact_match], store=False)
    assert not marker.exists()


@pytest.mark.parametrize(
    ("entry", "option"),
    [
        ({"similar": {"base_url": "{url}", "api_key_env": "OTHER_TEAM_SECRET"}}, "base_url"),
        ({"similar": {"value": "x", "api_key_env": "OTHER_TEAM_SECRET"}}, "api_key_env"),
        ({"similar": {"retries": 1000}}, "retries"),
        (
            {"llm_judge": {"rubric": "r", "provider": "openai", "base_url": "{url}"}},
            "provider",
        ),
        ({"llm_judge": {"rubric": "r", "base_url": "{url}", "model": "m"}}, "base_url"),
        ({"llm_judge": {"api_key_env": "OTHER_TEAM_SECRET"}}, "api_key_env"),
        ({"llm_judge": {"rubric": "r", "samples": 50}}, "samples"),
    ],
)
def test_a_row_cannot_send_the_teams_keys_to_an_endpoint_it_names(
    tmp_path: Path,
    openai_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    entry: dict[str, Any],
    option: str,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OTHER_TEAM_SECRET", OTHER_SECRET)
    openai_server.responder = lambda _body: Reply('{"score": 9, "reason": "fine"}')
    text = json.dumps(entry).replace("{url}", openai_server.base_url)
    row = {"id": "r", "input": "q", "prediction": "a", "checks": [json.loads(text)]}
    data = _jsonl(tmp_path / "data.jsonl", [row])
    ((check, _),) = entry.items()
    with pytest.raises(DatasetError) as caught:
        run(name="rows", dataset=data, scorers=[exact_match], store=False)
    message = str(caught.value)
    assert f"line 1: checks[0]: {check}.{option}: a dataset row may not set {option!r}" in message
    assert "in the eval file's scorers instead" in message
    assert SECRET not in message and OTHER_SECRET not in message
    assert openai_server.requests == []


def test_an_eval_files_inline_rows_follow_the_same_rule(
    tmp_path: Path, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    checks = [{"similar": {"value": "a", "base_url": openai_server.base_url}}]
    config = parse_eval(
        {
            "name": "inline",
            "dataset": {"rows": [{"id": "r", "input": "q", "prediction": "a", "checks": checks}]},
            "scorers": [],
        }
    )
    with pytest.raises(DatasetError, match=r"row 1: checks\[0\]: similar\.base_url: a dataset"):
        run_eval(config, store=False)
    assert openai_server.requests == []


def test_a_csv_row_and_the_assert_field_are_refused_alike(tmp_path: Path) -> None:
    cell = json.dumps([{"passes_tests": {"allow_code_execution": True}}]).replace('"', '""')
    data = tmp_path / "data.csv"
    data.write_text(f'id,input,prediction,assert\nr,q,a,"{cell}"\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"data\.csv, line 2: assert\[0\]: passes_tests: "):
        run(name="rows", dataset=data, scorers=[exact_match], store=False)


def test_the_runner_refuses_a_row_check_however_it_was_built(
    openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defence in depth: a RowCheck that did not come through the dataset loader."""
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    smuggled = (
        RowCheck("row:similar", "similar", {"value": "a", "base_url": openai_server.base_url}),
        RowCheck("row:code_passes", "code_passes", {"allow_code_execution": True}, "checks[1]"),
    )
    found = RowScorers().of(Example("r", "q", prediction="a", checks=smuggled))
    assert found.scorers == []
    assert (
        "row 'r' checks: similar.base_url: a dataset row may not set" in found.errors["row:similar"]
    )
    assert "code_passes: this check may not be used" in found.errors["row:code_passes"]
    assert openai_server.requests == []


def test_the_options_a_row_may_set_still_work(
    tmp_path: Path, openai_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the endpoints and the key are the environment's (set by whoever runs the eval)
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("OPENAI_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("AIEVAL_JUDGE_PROVIDER", "openai")
    monkeypatch.setenv("AIEVAL_JUDGE_BASE_URL", openai_server.base_url)
    monkeypatch.setenv("AIEVAL_JUDGE_MODEL", "judge-m")
    openai_server.responder = lambda _body: Reply('{"score": 9, "reason": "fine"}')
    checks = [
        {"icontains": {"value": "REFUND", "name": "mentions", "threshold": 0.5, "weight": 2}},
        {"contains": {"value": "sorry", "negate": True}},
        {"regex": {"pattern": "^yes", "flags": "i", "full": False}},
        {"similar": {"value": "yes, a refund", "threshold": 0.5, "embedding_model": "e"}},
        {"llm_judge": {"rubric": "Reward a refund.", "name": "judged", "threshold": 0.8}},
        "is_sql",
    ]
    row = {"id": "r", "input": "q", "prediction": "Yes, a refund", "checks": checks}
    result = run(name="rows", dataset=_jsonl(tmp_path / "d.jsonl", [row]), scorers=[], store=False)
    scores = result.samples[0].scores
    assert {k: s.value for k, s in scores.items()} == {
        "row:mentions": 1.0,
        "row:contains": 1.0,
        "row:regex": 1.0,
        "row:similar": 1.0,
        "row:judged": 0.9,
        "row:is_sql": 0.0,
    }
    paths = sorted(r.path for r in openai_server.requests)
    assert paths == ["/v1/chat/completions", "/v1/embeddings"]
    assert {r.headers["Authorization"] for r in openai_server.requests} == {f"Bearer {SECRET}"}


@scorer(name="team_check")
def team_check(prediction: str, _expected: Any, *, word: str = "refund") -> float:
    return 1.0 if word in prediction else 0.0


def test_an_evals_own_scorer_takes_only_name_threshold_and_weight_from_a_row(
    tmp_path: Path,
) -> None:
    ok = {"id": "ok", "input": "q", "prediction": "refund", "checks": [
        {"team_check": {"name": "mine", "threshold": 1, "weight": 3}}]}  # fmt: skip
    result = run(name="rows", dataset=[ok], scorers=[], store=False)
    assert result.samples[0].scores["row:mine"].value == 1.0
    bad = {**ok, "checks": [{"team_check": {"word": "x"}}]}
    with pytest.raises(DatasetError, match=r"checks\[0\]: team_check\.word: a dataset row may"):
        run(name="rows", dataset=[bad], scorers=[], store=False)


@pytest.mark.parametrize(
    ("target", "sent"),
    [
        # the target's own key: the one configured for this endpoint
        ({"provider": "openai-compatible", "api_key_env": "GATEWAY_KEY"}, "Bearer gw-0123456789"),
        # the target's credential header
        (
            {
                "provider": "openai-compatible",
                "params": {"headers": {"Authorization": "Tok hdr-12345678"}},
            },
            "Tok hdr-12345678",
        ),
        # a vLLM server without a key: no key at all, never OPENAI_API_KEY
        ({"provider": "vllm"}, None),
        # the openai preset sends OPENAI_API_KEY to its base_url itself
        ({"provider": "openai"}, f"Bearer {SECRET}"),
    ],
)
def test_similar_on_the_runs_endpoint_sends_only_the_runs_own_credential(
    tmp_path: Path,
    openai_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
    target: dict[str, Any],
    sent: str | None,
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SECRET)
    monkeypatch.setenv("GATEWAY_KEY", "gw-0123456789")
    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    row = {"id": "r", "input": "q", "checks": [{"similar": {"value": "echo: q", "threshold": 0.5}}]}
    body = {
        "name": "keys",
        "dataset": {"rows": [row]},
        "target": {**target, "model": "m", "base_url": openai_server.base_url},
        "scorers": [],
    }
    (result,) = run_eval(parse_eval(body), store=tmp_path / "runs.db")
    assert result.samples[0].scores["row:similar"].value == 1.0
    (embedding,) = [r for r in openai_server.requests if r.path == "/v1/embeddings"]
    assert embedding.headers.get("Authorization") == sent


def test_a_row_carries_at_most_a_hundred_checks(tmp_path: Path) -> None:
    many = [{"contains": {"value": f"w{i}", "name": f"c{i}"}} for i in range(101)]
    rows = [{"id": "r", "input": "q", "prediction": "a", "checks": many}]
    with pytest.raises(DatasetError, match=r"line 1: 'checks' has 101 checks; a row may carry"):
        run(name="rows", dataset=_jsonl(tmp_path / "d.jsonl", rows), scorers=[], store=False)
    rows[0]["checks"] = many[:100]
    result = run(name="rows", dataset=_jsonl(tmp_path / "d.jsonl", rows), scorers=[], store=False)
    assert len(result.samples[0].scores) == 100


def test_the_documented_allow_list_is_the_enforced_one() -> None:
    docs = (Path(__file__).resolve().parents[2] / "docs" / "checks.md").read_text("utf-8")
    section = docs.split("### What a row may set", 1)[1].split("\n- **", 1)[0]
    documented: dict[str, frozenset[str]] = {}
    for line in section.splitlines():
        cells = line.split("|")
        if len(cells) != 4 or "`" not in cells[1] or "eval's own" in cells[1]:
            continue
        options = frozenset(re.findall(r"`(\w+)`", cells[2]))
        for check in re.findall(r"`(\w+)`", cells[1]):
            documented[check] = options
    assert documented == dict(ROW_OPTIONS)
