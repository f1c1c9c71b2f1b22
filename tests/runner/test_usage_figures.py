"""Cost, tokens and cache share through the CLI against a loopback OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support.cli import Cli, Done
from tests.support.openai_server import OpenAIServer, Reply

from aieval import run


def _eval_file(tmp_path: Path, server: OpenAIServer, prices: dict[str, Any] | None) -> Path:
    (tmp_path / "rows.jsonl").write_text(
        "".join(json.dumps({"id": f"q{i}", "prompt": f"q{i}", "expected": "x"}) + "\n"
                for i in range(3))
    )  # fmt: skip
    settings: dict[str, Any] = {} if prices is None else {"prices": prices}
    file = tmp_path / "live.yaml"
    file.write_text(yaml.safe_dump({
        "name": "live",
        "dataset": "rows.jsonl",
        "target": {"provider": "openai-compatible", "model": "priced-model",
                   "base_url": server.base_url, "params": {"temperature": 0}},
        "scorers": ["exact_match"],
        "settings": settings,
    }))  # fmt: skip
    return file


def _aieval(cli: Cli, *args: str, cwd: Path) -> Done:
    """``aieval ARGS`` in this process (what it prints and stores is what is tested)."""
    # a wide console: the summary line must not wrap inside the figures compared below
    done: Done = cli(*args, cwd=cwd, env={"COLUMNS": "400"})
    assert done.returncode in (0, 1), done.stderr
    return done


def _report(cli: Cli, cwd: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(_aieval(cli, "report", "live", "-f", "json", cwd=cwd).stdout)
    return data


def _summary(cli: Cli, cwd: Path) -> dict[str, Any]:
    shown = json.loads(_aieval(cli, "show", "live", "--json", cwd=cwd).stdout)
    metrics: dict[str, Any] = shown["run"]["metrics"]
    return metrics


def test_cost_is_null_when_unknown_and_no_dollar_zero(
    openai_server: OpenAIServer, tmp_path: Path, in_process: Cli
) -> None:
    openai_server.responder = lambda body: Reply("a", usage=(100, 10))
    file = _eval_file(tmp_path, openai_server, prices=None)
    out = _aieval(in_process, "run", str(file), cwd=tmp_path).stdout
    assert "tokens in/out target 300/30 · total 300/30" in out
    assert "cost -" in out and "$0.0000" not in out
    assert _summary(in_process, tmp_path)["cost"] is None
    report = _report(in_process, tmp_path)
    assert report["cost"] is None
    text = _aieval(in_process, "report", "live", cwd=tmp_path).stdout
    assert "$0.0000" not in text


def test_cost_from_price_table_and_token_totals_agree(
    openai_server: OpenAIServer, tmp_path: Path, in_process: Cli
) -> None:
    openai_server.responder = lambda body: Reply("a", usage=(100, 10))
    prices = {"priced-model": {"input_per_mtok": 2.0, "output_per_mtok": 8.0}}
    file = _eval_file(tmp_path, openai_server, prices)
    out = _aieval(in_process, "run", str(file), cwd=tmp_path).stdout
    expected = 3 * (100 * 2.0 + 10 * 8.0) / 1_000_000
    assert f"cost ${expected:.4f}" in out
    summary, report = _summary(in_process, tmp_path), _report(in_process, tmp_path)
    assert summary["cost"] == report["cost"] == pytest.approx(expected)
    assert summary["tokens"] == report["tokens"]
    assert report["tokens"]["target"] == {"input": 300, "output": 30, "total": 330}
    shown = _aieval(in_process, "show", "live", cwd=tmp_path).stdout
    line = "tokens in/out target 300/30 · total 300/30"
    assert (
        line in out
        and line in shown
        and line in _aieval(in_process, "report", "live", cwd=tmp_path).stdout
    )


def test_unlisted_model_is_null_and_gateway_cost_is_used(
    openai_server: OpenAIServer, tmp_path: Path, in_process: Cli
) -> None:
    openai_server.responder = lambda body: Reply("a", usage=(100, 10), model="other-model")
    prices = {"priced-model": {"input_per_mtok": 2.0, "output_per_mtok": 8.0}}
    _aieval(in_process, "run", str(_eval_file(tmp_path, openai_server, prices)), cwd=tmp_path)
    assert _report(in_process, tmp_path)["cost"] is None  # a partial table never prices as 0

    def with_cost(body: Any, reply: Reply) -> dict[str, Any]:
        data = OpenAIServer._openai_reply(openai_server, body, reply)
        data["usage"]["cost"] = 0.25
        return data

    openai_server._openai_reply = with_cost  # type: ignore[method-assign]
    result = run(
        name="gateway", dataset=[{"prompt": "p", "expected": "a"}], scorers=["exact_match"],
        provider="openai-compatible", model="m", base_url=openai_server.base_url,
        params={"temperature": 0}, store=False,
    )  # fmt: skip
    assert result.summary.cost == 0.25


def test_cached_rerun_keeps_original_latency_and_reports_cache_share(
    openai_server: OpenAIServer, tmp_path: Path, in_process: Cli
) -> None:
    openai_server.responder = lambda body: Reply("a", delay=0.2, usage=(100, 10))
    file = _eval_file(tmp_path, openai_server, prices=None)
    _aieval(in_process, "run", str(file), cwd=tmp_path)
    first = _report(in_process, tmp_path)
    assert len(openai_server.requests) == 3
    out = _aieval(in_process, "run", str(file), cwd=tmp_path).stdout
    assert len(openai_server.requests) == 3  # every answer came from the cache
    assert "cache 100% (3/3 calls)" in out
    again = _report(in_process, tmp_path)
    assert again["cache"] == {"calls": 3, "cached": 3, "share": 1.0}
    assert first["cache"]["cached"] == 0
    # the recorded originals, not the near-zero time of reading the cache
    assert again["latency"]["p95"] == first["latency"]["p95"]
    assert again["latency"]["p95"] >= 0.2
    assert "cache 100%" in _aieval(in_process, "report", "live", cwd=tmp_path).stdout
