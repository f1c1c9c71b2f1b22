"""Judges over the transcript (role_adherence, knowledge_retention, user_frustration): a
scripted judge on loopback through the real provider reads every turn numbered; a fact
forgotten at turn 4 fails knowledge_retention naming turn 4; a malformed verdict is that
sample's error only; `--estimate` counts the judge calls; replay 'all' refuses them at start."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.conversations._judged import ROLE, judge, rows
from tests.support.cli import run_main
from tests.support.openai_server import OpenAIServer, Reply

from aieval import Store
from aieval.conversations import (
    FidelityFlag,
    Played,
    SimulatorFidelity,
    scenario_from_row,
    transcript_judge,
)
from aieval.core import Conversation, ConversationOutcome, Turn
from aieval.errors import ConfigError, ScorerError
from aieval.runner import load_eval, run_eval

JUDGED = "tests.conversations._judged"


def write(folder: Path, server: OpenAIServer, **conversation: Any) -> Path:
    server.responder = judge
    (folder / "scenarios.yaml").write_text(yaml.safe_dump(rows()), encoding="utf-8")
    settings: dict[str, Any] = {
        "target": f"{JUDGED}:assistant",
        "builtin_checks": ["knowledge_retention", "role_adherence"],
        "judge": {
            "provider": "openai-compatible",
            "model": "judge-model",
            "base_url": server.base_url,
            "role": ROLE,
        },
        **conversation,
    }
    data = {
        "name": "support",
        "dataset": "scenarios.yaml",
        "conversation": settings,
        "settings": {"cache": False},
    }
    path = folder / "eval.yaml"
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def test_a_fact_forgotten_at_turn_4_fails_knowledge_retention_naming_turn_4(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    (result,) = run_eval(load_eval(write(tmp_path, openai_server)), store=tmp_path / "r.db")
    with Store(tmp_path / "r.db") as db:
        samples = {s.id: s for s in db.iter_samples(result.id)}
    kept, forgot = samples["order-1"].scores, samples["order-2"].scores
    assert (kept["knowledge_retention"].value, kept["role_adherence"].value) == (1.0, 1.0)
    assert forgot["knowledge_retention"].value == pytest.approx(0.2)
    assert forgot["knowledge_retention"].reason == ("turn 4: asks again for the name the user gave")
    assert forgot["knowledge_retention"].metadata["failed_turns"] == [4]
    assert forgot["role_adherence"].value == 1.0
    # the judge read the whole transcript, every turn numbered, on the author's model
    bodies = [r.body for r in openai_server.requests]
    assert {b["model"] for b in bodies} == {"judge-model"}
    sent = next(b["messages"][1]["content"] for b in bodies if "order 2" in str(b))
    for line in (
        "[1] user: My name is Ada.",
        "[2] assistant: Nice to meet you, Ada.",
        "[3] user: Where is order 2?",
        "[4] assistant: I can check order 2. What is your name?",
    ):
        assert line in sent
    assert ROLE in json.dumps(bodies)


def test_a_malformed_verdict_is_that_samples_typed_error_only(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    (result,) = run_eval(load_eval(write(tmp_path, openai_server)), store=tmp_path / "r.db")
    with Store(tmp_path / "r.db") as db:
        samples = {s.id: s for s in db.iter_samples(result.id)}
    garbled = samples["order-3"].scores["knowledge_retention"]
    assert garbled.value is None
    assert "judge 'knowledge_retention', scenario 'order-3': malformed verdict" in (
        garbled.error or ""
    )
    assert samples["order-3"].error is None  # the conversation itself is kept
    assert samples["order-3"].passed is False  # a score that could not be read never passes
    assert samples["order-3"].scores["role_adherence"].value == 1.0  # its other judge scored
    assert samples["order-1"].scores["knowledge_retention"].value == 1.0
    assert len(samples) == 3


def test_estimate_counts_the_judge_calls_and_calls_nothing(
    openai_server: OpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write(
        tmp_path,
        openai_server,
        judge={
            "provider": "openai-compatible",
            "model": "judge-model",
            "base_url": openai_server.base_url,
            "role": ROLE,
            "samples": 3,
        },
    )
    done = run_main(
        capsys, monkeypatch, "run", "eval.yaml", "--db", "r.db", "--estimate", cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    assert "3 conversations (live)" in done.stdout
    assert "judge calls: at most 18" in done.stdout  # 3 conversations x 2 judges x 3 samples
    assert "target calls: 6 to 30" in done.stdout  # the least: each scripted turn answered
    assert openai_server.requests == []


def test_a_replay_all_with_a_judge_is_refused_before_anything_is_called(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    path = write(tmp_path, openai_server)
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["replay"] = {"run": "some-run", "mode": "all"}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ConfigError, match="replay in mode 'all' makes no call"):
        run_eval(load_eval(path), store=tmp_path / "r.db")
    assert openai_server.requests == []


@pytest.mark.parametrize(
    ("conversation", "message"),
    [
        pytest.param({"judge": None}, "are judges: give judge:", id="no-judge"),
        pytest.param(
            {"judge": {"provider": "openai-compatible", "model": "m"}},
            "role_adherence needs judge.role",
            id="no-role",
        ),
        pytest.param(
            {"judge": {"provider": "openai-compatible", "role": ROLE}},
            "model",
            id="no-model",
        ),
    ],
)
def test_a_judge_without_its_model_or_role_is_refused_at_load(
    openai_server: OpenAIServer, tmp_path: Path, conversation: dict[str, Any], message: str
) -> None:
    settings = {k: v for k, v in conversation.items() if v is not None}
    path = write(tmp_path, openai_server, **settings)
    if conversation.get("judge", 1) is None:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        del data["conversation"]["judge"]
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(ConfigError, match=message):
        run_eval(load_eval(path), store=tmp_path / "r.db")
    assert openai_server.requests == []


SCENARIO = scenario_from_row(
    {"id": "chat", "goal": "get help", "user_turns": ["Hi.", "Hello?"]}, source="test"
)
CONVERSATION = Conversation(
    "chat",
    0,
    (
        Turn("user", "Hi.", "scripted"),
        Turn("assistant", "What do you want?", "live"),
        Turn("user", "Hello?? Anyone!!", "scripted"),
        Turn("assistant", "What do you want?", "live"),
    ),
    ConversationOutcome("script_end", True),
)


async def _frustration(server: OpenAIServer, answer: str, played: Played) -> tuple[Any, list[Any]]:
    server.enqueue(Reply(answer))
    scorer = transcript_judge(
        "user_frustration",
        provider="openai-compatible",
        model="judge-model",
        base_url=server.base_url,
        cache=False,
    )
    try:
        return await scorer(None, output=played), server.requests
    finally:
        await scorer.fn.aclose()


async def test_user_frustration_from_python_scores_the_assistant_higher_is_better(
    openai_server: OpenAIServer,
) -> None:
    verdict = {"score": 3, "reason": "repeats itself; the user shouts", "turns": [4, 3]}
    score, requests = await _frustration(
        openai_server, json.dumps(verdict), Played(SCENARIO, CONVERSATION)
    )
    assert score.value == pytest.approx(0.3)
    assert score.reason == "turns 3, 4: repeats itself; the user shouts"
    assert (
        "10 when the user was never made frustrated" in requests[-1].body["messages"][1]["content"]
    )


@pytest.mark.parametrize(
    ("answer", "message"),
    [
        pytest.param("fine", "malformed verdict: verdict is not a single JSON", id="prose"),
        pytest.param('{"score": 12, "reason": "", "turns": []}', "outside 0..10", id="range"),
        pytest.param('{"score": 4, "reason": "bad", "turns": []}', "names no turn", id="no-turn"),
        pytest.param(
            '{"score": 4, "reason": "bad", "turns": [9]}', r"names \[9\]", id="no-such-turn"
        ),
        pytest.param(
            '{"score": 4, "reason": "x", "turns": "4"}', "list of turn numbers", id="shape"
        ),
    ],
)
async def test_a_malformed_verdict_is_a_scorer_error_never_a_guess(
    openai_server: OpenAIServer, answer: str, message: str
) -> None:
    with pytest.raises(ScorerError, match=message):
        await _frustration(openai_server, answer, Played(SCENARIO, CONVERSATION))


async def test_an_invalid_conversation_is_not_judged(openai_server: OpenAIServer) -> None:
    flagged = SimulatorFidelity((FidelityFlag("goal_leak", 3, "said its goal"),))
    score, requests = await _frustration(
        openai_server, "{}", Played(SCENARIO, CONVERSATION, flagged)
    )
    assert score.value is None and score.reason.startswith("invalid conversation")
    assert requests == []


def test_the_judges_key_reaches_only_the_judge_and_is_never_stored(
    openai_server: OpenAIServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = "sk-judge-secret-4417"
    monkeypatch.setenv("JUDGE_KEY", secret)
    judge_settings = {
        "provider": "openai-compatible",
        "model": "judge-model",
        "base_url": openai_server.base_url,
        "api_key_env": "JUDGE_KEY",
        "role": ROLE,
    }
    path = write(tmp_path, openai_server, judge=judge_settings)
    openai_server.responder = lambda body: Reply(
        json.dumps({"score": 10, "reason": f"fine (key {secret})", "turns": []})
    )
    (result,) = run_eval(load_eval(path), store=tmp_path / "r.db")
    assert {r.headers.get("Authorization") for r in openai_server.requests} == {f"Bearer {secret}"}
    with Store(tmp_path / "r.db") as db:
        samples = list(db.iter_samples(result.id))
    reasons = [s.scores["role_adherence"].reason or "" for s in samples]
    assert len(reasons) == 3 and all(r.startswith("fine (key ") for r in reasons)
    stored = b"".join(f.read_bytes() for f in tmp_path.glob("r.db*"))
    assert secret.encode() not in stored
