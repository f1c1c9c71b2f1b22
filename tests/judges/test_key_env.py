"""One way to give a key, for a target and a judge alike: ``api_key_env`` names the environment
variable that holds it. Run through ``aieval run`` (in-process, and once in a process of its own:
the key as a new interpreter's environment gives it) and ``run()`` against keyed loopback
endpoints that answer 401 to any other credential; the key never reaches the store."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support.cli import Done, run_main
from tests.support.openai_server import OpenAIServer, Reply, echo_text

from aieval import run
from aieval.errors import ConfigError
from aieval.scorers import exact_match, llm_judge, multi_judge

TARGET_KEY = "sk-target-key-4f3e2d1c0b9a8877"
JUDGE_KEY = "sk-judge-key-0a1b2c3d4e5f6677"
ROWS = [{"id": f"r{i}", "prompt": f"q{i}", "expected": f"echo: q{i}"} for i in range(3)]
RUBRIC = "Reward answers that repeat the question."


def _answer(body: Any) -> Reply:
    """A judge's request gets a verdict, a target's an echo."""
    text = json.dumps(body)
    if "CANDIDATE_ANSWER" in text:
        return Reply(json.dumps({"score": 8, "reason": "repeats it"}))
    return Reply(echo_text(body))


def _keyed(key: str) -> Iterator[OpenAIServer]:
    with OpenAIServer() as server:
        server.required_key = key
        server.responder = _answer
        yield server


@pytest.fixture
def target_server() -> Iterator[OpenAIServer]:
    yield from _keyed(TARGET_KEY)


@pytest.fixture
def judge_server() -> Iterator[OpenAIServer]:
    yield from _keyed(JUDGE_KEY)


@pytest.fixture(autouse=True)
def _no_ambient_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("OPENAI_API_KEY", "MY_KEY", "JUDGE_KEY", "AIEVAL_JUDGE_PROVIDER"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.delenv("AIEVAL_JUDGE_BASE_URL", raising=False)
    monkeypatch.delenv("AIEVAL_JUDGE_MODEL", raising=False)


def _authorized(server: OpenAIServer, key: str) -> list[bool]:
    return [r.headers.get("Authorization") == f"Bearer {key}" for r in server.requests]


def _judge_requests(server: OpenAIServer) -> int:
    return sum("CANDIDATE_ANSWER" in json.dumps(r.body) for r in server.requests)


def _store_bytes(folder: Path) -> bytes:
    files = sorted(folder.glob("runs.db*"))  # the database and its -wal / -shm files
    assert files and files[0].name == "runs.db"
    return b"".join(f.read_bytes() for f in files)


def _eval_file(folder: Path, target: OpenAIServer, judges: list[dict[str, Any]]) -> Path:
    data = {
        "name": "keyed",
        "dataset": {"rows": ROWS},
        "target": {
            "provider": "openai-compatible",
            "base_url": target.base_url,
            "model": "m",
            "api_key_env": "MY_KEY",
        },
        "scorers": ["exact_match", *({"llm_judge": judge} for judge in judges)],
    }
    path = folder / "eval.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def _cli(folder: Path, eval_file: Path, **env: str) -> subprocess.CompletedProcess[str]:
    environ = {k: v for k, v in os.environ.items() if k not in ("OPENAI_API_KEY", "MY_KEY")}
    environ.update(env)
    argv = [sys.executable, "-m", "aieval", "run", str(eval_file), "--db", str(folder / "runs.db")]
    done = subprocess.run(
        argv, capture_output=True, text=True, timeout=300, env=environ, cwd=folder
    )
    # the terminal wraps long lines: compare messages with their spaces joined
    done.stderr = " ".join(done.stderr.split())
    return done


InProcess = Callable[..., Done]


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> InProcess:
    """``_cli`` in this process: the same command and environment, without a process's start."""

    def invoke(folder: Path, eval_file: Path, **env: str) -> Done:
        for name in ("OPENAI_API_KEY", "MY_KEY"):
            monkeypatch.delenv(name, raising=False)
        done = run_main(capsys, monkeypatch, "run", str(eval_file), "--db",
                        str(folder / "runs.db"), cwd=folder, env=env)  # fmt: skip
        done.stderr = " ".join(done.stderr.split())
        return done

    return invoke


def test_the_cli_calls_a_keyed_target_and_judges_by_variable_name(
    tmp_path: Path, target_server: OpenAIServer, judge_server: OpenAIServer
) -> None:
    judges = [
        # its own endpoint and key, by variable name
        {"rubric": RUBRIC, "base_url": judge_server.base_url, "model": "j",
         "api_key_env": "JUDGE_KEY", "name": "own_key"},
        # no endpoint of its own: the run's endpoint, and so the run's key
        {"rubric": RUBRIC, "model": "j", "name": "inherited"},
    ]  # fmt: skip
    eval_file = _eval_file(tmp_path, target_server, judges)
    # the one real process for ``aieval run``: the keys as a new interpreter's environment has them
    done = _cli(tmp_path, eval_file, MY_KEY=TARGET_KEY, JUDGE_KEY=JUDGE_KEY)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "plain text" not in done.stderr  # nothing in the file is a key
    # the target and the inheriting judge called the target's endpoint with its key
    assert _judge_requests(target_server) == len(ROWS)
    assert len(target_server.requests) == 2 * len(ROWS)
    assert all(_authorized(target_server, TARGET_KEY))
    assert _judge_requests(judge_server) == len(ROWS)
    assert all(_authorized(judge_server, JUDGE_KEY))
    stored = _store_bytes(tmp_path)
    assert b"own_key" in stored and b"MY_KEY" in stored  # the run, and the variable's name
    assert TARGET_KEY.encode() not in stored and JUDGE_KEY.encode() not in stored
    assert TARGET_KEY not in done.stdout + done.stderr


@pytest.mark.parametrize("unset", ["MY_KEY", "JUDGE_KEY"])
def test_the_cli_names_an_unset_variable_before_any_call(
    tmp_path: Path,
    target_server: OpenAIServer,
    judge_server: OpenAIServer,
    unset: str,
    cli: InProcess,
) -> None:
    judge = {"rubric": RUBRIC, "base_url": judge_server.base_url, "model": "j",
             "api_key_env": "JUDGE_KEY"}  # fmt: skip
    eval_file = _eval_file(tmp_path, target_server, [judge])
    keys = {"MY_KEY": TARGET_KEY, "JUDGE_KEY": JUDGE_KEY}
    keys.pop(unset)
    done = cli(tmp_path, eval_file, **keys)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"api_key_env: {unset} names the environment variable" in done.stderr
    assert f"{unset} is not set" in done.stderr
    assert target_server.requests == [] and judge_server.requests == []


def test_the_cli_warns_about_a_key_in_plain_text(
    tmp_path: Path, target_server: OpenAIServer, cli: InProcess
) -> None:
    data = {
        "name": "plain",
        "dataset": {"rows": ROWS},
        "target": {"provider": "openai-compatible", "base_url": target_server.base_url,
                   "model": "m", "headers": {"Authorization": f"Bearer {TARGET_KEY}"}},
        "scorers": ["exact_match", {"llm_judge": {"rubric": RUBRIC, "model": "j"}}],
    }  # fmt: skip
    eval_file = tmp_path / "eval.yaml"
    eval_file.write_text(yaml.safe_dump(data), encoding="utf-8")
    done = cli(tmp_path, eval_file)
    # the documented header still works, for the target and the judge on its endpoint
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(_authorized(target_server, TARGET_KEY)) and _judge_requests(target_server) == 3
    assert "target.headers.Authorization holds a key in plain text" in done.stderr
    assert "api_key_env" in done.stderr and TARGET_KEY not in done.stderr
    assert TARGET_KEY.encode() not in _store_bytes(tmp_path)


def test_run_gives_keys_by_variable_name_to_the_target_and_judges(
    tmp_path: Path,
    target_server: OpenAIServer,
    judge_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MY_KEY", TARGET_KEY)
    monkeypatch.setenv("JUDGE_KEY", JUDGE_KEY)
    own = llm_judge(RUBRIC, base_url=judge_server.base_url, model="j", api_key_env="JUDGE_KEY",
                    name="own_key")  # fmt: skip
    same = llm_judge(RUBRIC, base_url=target_server.base_url + "/", model="j", name="same")
    result = run(name="keyed", dataset=ROWS, scorers=[exact_match, own, same],
                 provider="openai-compatible", base_url=target_server.base_url, model="m",
                 api_key_env="MY_KEY", store=tmp_path / "runs.db")  # fmt: skip
    assert result.error_count == 0, result.top_errors
    assert result.metrics == pytest.approx({"exact_match": 1.0, "own_key": 0.8, "same": 0.8})
    assert all(_authorized(target_server, TARGET_KEY)) and _judge_requests(target_server) == 3
    assert all(_authorized(judge_server, JUDGE_KEY)) and _judge_requests(judge_server) == 3
    stored = _store_bytes(tmp_path)
    assert TARGET_KEY.encode() not in stored and JUDGE_KEY.encode() not in stored


def test_a_judge_on_another_endpoint_does_not_get_the_runs_key(
    tmp_path: Path,
    target_server: OpenAIServer,
    judge_server: OpenAIServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("MY_KEY", TARGET_KEY)
    other = llm_judge(RUBRIC, base_url=judge_server.base_url, model="j", name="other")
    result = run(name="keyed", dataset=ROWS, scorers=[exact_match, other],
                 provider="openai-compatible", base_url=target_server.base_url, model="m",
                 api_key_env="MY_KEY", store=False)  # fmt: skip
    # the other endpoint saw no credential at all, and refused every verdict
    assert _judge_requests(judge_server) >= len(ROWS)
    assert all("Authorization" not in r.headers for r in judge_server.requests)
    errors = [s.scores["other"].error or "" for s in result.samples]
    assert all("HTTP 401" in e and "no key was sent" in e for e in errors), errors
    assert all("api_key_env" in e and "OPENAI_API_KEY" in e for e in errors), errors
    assert result.metrics["exact_match"] == 1.0


def test_run_refuses_an_unset_variable_before_any_call(
    target_server: OpenAIServer,
) -> None:
    with pytest.raises(ConfigError) as caught:
        run(name="keyed", dataset=ROWS, scorers=[exact_match], provider="openai-compatible",
            base_url=target_server.base_url, model="m", api_key_env="MY_KEY",
            store=False)  # fmt: skip
    assert "api_key_env: MY_KEY" in str(caught.value) and "is not set" in str(caught.value)
    with pytest.raises(ConfigError) as judged:
        llm_judge(RUBRIC, base_url=target_server.base_url, model="j", api_key_env="JUDGE_KEY")
    assert "judge 'llm_judge': api_key_env: JUDGE_KEY" in str(judged.value)
    assert target_server.requests == []


def test_a_refused_key_is_a_401_that_says_where_a_key_goes(
    target_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_KEY", "sk-wrong-key-99887766")
    result = run(name="keyed", dataset=ROWS[:1], scorers=[exact_match],
                 provider="openai-compatible", base_url=target_server.base_url, model="m",
                 api_key_env="MY_KEY", store=False, retries=0)  # fmt: skip
    (error,) = [s.error or "" for s in result.samples]
    assert error.startswith("ProviderAuthError: openai-compatible: HTTP 401"), error
    assert "the key from MY_KEY was refused" in error
    assert "api_key_env: MY_KEY under target: in an eval file or in a judge's options" in error
    assert "or set OPENAI_API_KEY" in error
    assert "sk-wrong-key-99887766" not in error


def test_openai_compatible_uses_openai_api_key_when_nothing_else_is_given(
    tmp_path: Path, target_server: OpenAIServer, cli: InProcess
) -> None:
    eval_file = tmp_path / "eval.yaml"
    data = {"name": "env", "dataset": {"rows": ROWS},
            "target": {"provider": "openai-compatible", "base_url": target_server.base_url,
                       "model": "m"},
            "scorers": ["exact_match",
                        {"llm_judge": {"rubric": RUBRIC, "model": "j"}}]}  # fmt: skip
    eval_file.write_text(yaml.safe_dump(data), encoding="utf-8")
    done = cli(tmp_path, eval_file, OPENAI_API_KEY=TARGET_KEY)
    assert done.returncode == 0, done.stdout + done.stderr
    assert all(_authorized(target_server, TARGET_KEY)) and _judge_requests(target_server) == 3
    assert TARGET_KEY.encode() not in _store_bytes(tmp_path)


def test_a_target_header_wins_over_the_openai_api_key_fallback(
    target_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-some-other-account-1234")
    result = run(name="header", dataset=ROWS, scorers=[exact_match],
                 provider="openai-compatible", base_url=target_server.base_url, model="m",
                 params={"headers": {"Authorization": f"Bearer {TARGET_KEY}"}},
                 store=False)  # fmt: skip
    assert result.error_count == 0, result.top_errors
    assert all(_authorized(target_server, TARGET_KEY))


def test_a_judges_own_key_echoed_in_its_verdict_is_not_stored(
    tmp_path: Path, judge_server: OpenAIServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Redaction by value covers a key read from the environment for a judge, alone or in a
    multi_judge panel, as it does the target's."""
    monkeypatch.setenv("JUDGE_KEY", JUDGE_KEY)
    judge_server.responder = lambda body: Reply(
        json.dumps({"score": 7, "reason": f"graded with {JUDGE_KEY}"})
    )

    def judge(name: str) -> Any:
        return llm_judge(RUBRIC, base_url=judge_server.base_url, model="j",
                         api_key_env="JUDGE_KEY", name=name)  # fmt: skip

    rows = [{**row, "prediction": row["expected"]} for row in ROWS]
    result = run(name="echo", dataset=rows, scorers=[judge("alone"),
                 multi_judge([judge("member")], name="panel")],
                 store=tmp_path / "runs.db")  # fmt: skip
    assert result.error_count == 0, result.top_errors
    reasons = [s.scores["alone"].reason or "" for s in result.samples]
    assert reasons and all("graded with [redacted]" in r for r in reasons), reasons
    stored = _store_bytes(tmp_path)
    assert b"graded with [redacted]" in stored and JUDGE_KEY.encode() not in stored
