"""``aieval run --model M`` calls M for a provider target; the stored run and cache name M."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support.openai_server import OpenAIServer

from aieval import Store
from aieval.errors import ConfigError
from aieval.runner import parse_eval, run_eval


def eval_file(tmp_path: Path, server: OpenAIServer) -> Path:
    (tmp_path / "rows.jsonl").write_text(
        "".join(json.dumps({"id": f"q{i}", "prompt": f"q{i}", "expected": "x"}) + "\n"
                for i in range(3))
    )  # fmt: skip
    file = tmp_path / "live.yaml"
    file.write_text(yaml.safe_dump({
        "name": "live",
        "dataset": "rows.jsonl",
        "target": {"provider": "openai-compatible", "model": "file-model",
                   "base_url": server.base_url, "params": {"temperature": 0}},
        "scorers": ["exact_match"],
    }))  # fmt: skip
    return file


def aieval(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "aieval", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=120)  # fmt: skip


def test_model_option_reaches_the_server_and_the_stored_run(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    file = eval_file(tmp_path, openai_server)
    first = aieval("run", str(file), "--db", "s.db", "-q", cwd=tmp_path)
    assert "Traceback" not in first.stderr
    assert {r.body["model"] for r in openai_server.requests} == {"file-model"}
    calls = len(openai_server.requests)

    chosen = aieval("run", str(file), "--db", "s.db", "-q", "--model", "cli-model", cwd=tmp_path)
    assert "Traceback" not in chosen.stderr
    new = openai_server.requests[calls:]
    assert len(new) == 3, "a cached answer of another model must not be reused"
    assert {r.body["model"] for r in new} == {"cli-model"}

    store = Store(tmp_path / "s.db")
    latest = store.list_runs(name="live", limit=1)[0]
    assert latest.model == "cli-model" and latest.config["model"] == "cli-model"
    with sqlite3.connect(tmp_path / "s.db") as db:
        cached = {row[0] for row in db.execute("SELECT model FROM response_cache")}
    assert cached == {"file-model", "cli-model"}


def test_several_models_make_one_run_each(openai_server: OpenAIServer, tmp_path: Path) -> None:
    config = parse_eval(yaml.safe_load(eval_file(tmp_path, openai_server).read_text()),
                        base_dir=tmp_path)  # fmt: skip
    results = run_eval(config, store=tmp_path / "s.db", models=["m1", "m2"])
    assert [r.model for r in results] == ["m1", "m2"]
    assert {r.body["model"] for r in openai_server.requests} == {"m1", "m2"}


def test_file_model_key_selects_the_target_model(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    data = yaml.safe_load(eval_file(tmp_path, openai_server).read_text())
    config = parse_eval({**data, "model": "body-model"}, base_dir=tmp_path)
    (result,) = run_eval(config, store=False)
    assert result.model == "body-model"
    assert {r.body["model"] for r in openai_server.requests} == {"body-model"}


def test_model_reaches_a_callable_target_that_takes_it() -> None:
    seen: list[str] = []

    def sync_target(example: Any, *, model: str = "default") -> str:
        seen.append(model)
        return "x"

    async def async_target(example: Any, model: str = "default") -> str:
        seen.append(model)
        return "x"

    for target in (sync_target, async_target):
        result = run_sync_eval(target, model="chosen")
        assert result.model == "chosen"
    assert seen == ["chosen", "chosen"]


def test_model_for_a_callable_without_a_model_parameter_is_refused() -> None:
    def target(example: Any) -> str:
        return "x"

    with pytest.raises(ConfigError, match="model='chosen' cannot reach target target"):
        run_sync_eval(target, model="chosen")


def run_sync_eval(target: Any, *, model: str) -> Any:
    from aieval import run

    return run(name="c", dataset=[{"prompt": "q", "expected": "x"}], scorers=["exact_match"],
               target=target, model=model, store=False)  # fmt: skip


@pytest.mark.parametrize(
    ("extra", "words"),
    [
        pytest.param({"model": "v1", "models": ["v2"]}, "give 'model' or 'models', not both",
                     id="model-and-models"),
        pytest.param({"model": "v2", "dataset": {"path": "data.jsonl",
                                                 "prediction_field": "predictions.v1"}},
                     "already picks the recorded answers", id="prediction-field-and-model"),
    ],
)  # fmt: skip
def test_settings_that_would_each_pick_the_answers_are_refused(
    tmp_path: Path, extra: dict[str, Any], words: str
) -> None:
    data = {"name": "m", "dataset": "data.jsonl", "scorers": ["exact_match"], **extra}
    with pytest.raises(ConfigError, match=words):
        parse_eval(data, base_dir=tmp_path)


def test_a_model_option_cannot_relabel_a_prediction_field(tmp_path: Path) -> None:
    data = {"name": "m", "scorers": ["exact_match"],
            "dataset": {"path": "data.jsonl", "prediction_field": "answer"}}  # fmt: skip
    config = parse_eval(data, base_dir=tmp_path)
    with pytest.raises(ConfigError, match="--model would only relabel"):
        config.specs(models=["v2"])
