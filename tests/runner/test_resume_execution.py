"""A resumed run takes how its samples run (concurrency, timeout, retries...) from the call that
resumes it, says which settings changed and where each came from, and the store records them;
what the run is (model, scorers, prompts...) stays the stored run's, a change refused by name."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import Hang, OpenAIServer, Reply
from tests.support.stored import stored_samples, wait_for_samples

from aieval import Store, run
from aieval.cli._run import _ResumeNote
from aieval.core import RunStart, SettingChange
from aieval.errors import ConfigError, PushError
from aieval.push import StoreTarget, push_runs
from aieval.runner import RunSpec
from aieval.scorers import exact_match

ROWS = 40


def _eval_file(directory: Path, server: OpenAIServer, settings: str) -> None:
    with (directory / "rows.jsonl").open("w") as handle:
        for i in range(ROWS):
            handle.write(json.dumps({"id": f"r{i}", "prompt": f"p{i}", "expected": f"p{i}"}) + "\n")
    (directory / "eval.yaml").write_text(
        "name: wide\ndataset: rows.jsonl\n"
        f"target: {{provider: openai-compatible, model: m, base_url: '{server.base_url}'}}\n"
        f"scorers: [exact_match]\nsettings: {settings}\n"
    )


@pytest.mark.slow
def test_aieval_run_resume_uses_the_eval_files_concurrency_and_says_so(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    answered = 0

    def three_then_hang(body: Any) -> Reply | Hang:
        nonlocal answered
        answered += 1  # the fourth request never ends: the run is stopped while it waits
        return Reply(body["messages"][-1]["content"]) if answered <= 3 else Hang()

    openai_server.responder = three_then_hang
    _eval_file(tmp_path, openai_server, "{concurrency: 1, retries: 5}")
    command = [sys.executable, "-m", "aieval", "run", "eval.yaml", "--db", "r.db", "-q"]
    env = {**os.environ, "COLUMNS": "400"}
    first = subprocess.Popen(command, cwd=tmp_path, env=env, stderr=subprocess.PIPE, text=True)
    try:
        wait_for_samples(tmp_path / "r.db", 3, first)
        first.send_signal(signal.SIGTERM)
        assert first.wait(timeout=60) == 143
    finally:
        if first.poll() is None:
            first.kill()
            first.wait()
        first.communicate()
    assert openai_server.max_in_flight == 1 and stored_samples(tmp_path / "r.db") == 3
    openai_server.reset()
    openai_server.responder = lambda body: Reply(body["messages"][-1]["content"])
    openai_server.max_in_flight = 0
    openai_server.hold_until_in_flight(16)  # the bound is reached, however slow the client
    _eval_file(tmp_path, openai_server, "{concurrency: 16, timeout: 30}")

    done = subprocess.run(
        [*command, "--resume"], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=180
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert openai_server.max_in_flight == 16
    assert len(openai_server.requests) == ROWS - 3  # only the samples not stored
    (row,) = Store(tmp_path / "r.db").list_runs(name="wide")
    assert row.status == "completed"
    assert (
        f"resuming: run {row.id} with concurrency 16 (from eval.yaml; the run ran with 1 before);"
        " timeout 30.0 (from eval.yaml; the run ran with 60.0 before);"
        " retries 3 (from the default; the run ran with 5 before)"
    ) in done.stderr
    # the store records what the run last ran with: a resume from its spec runs as this one
    assert (row.config["concurrency"], row.config["retries"]) == (16, 3)
    spec = RunSpec.of_run(row)
    assert (spec.execution.concurrency, spec.target.timeout, spec.target.retries) == (16, 30.0, 3)


def _interrupted(store: Store, **options: Any) -> str:
    """A finished run marked interrupted: resuming it runs nothing, but checks everything."""
    first = run(name="again", store=store, **options)
    with sqlite3.connect(store.path) as con:
        con.execute("UPDATE runs SET status='interrupted' WHERE id=?", (first.id,))
    return first.id


def test_a_resume_takes_execution_settings_from_its_call_and_keeps_what_the_run_is(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    rows = [{"id": f"r{i}", "prompt": f"p{i}", "expected": f"p{i}"} for i in range(3)]
    options: dict[str, Any] = dict(
        dataset=rows,
        scorers=[exact_match],
        provider="openai-compatible",
        base_url=openai_server.base_url,
        model="m",
        system_prompt="Answer briefly.",
    )
    store = Store(tmp_path / "s.db")
    run_id = _interrupted(store, concurrency=1, **options)
    with pytest.raises(ConfigError, match="it was configured differently") as refused:
        run(name="again", store=store, resume=run_id, **{**options, "system_prompt": "Chat."})
    assert "target.system_prompt: 'Answer briefly.' then, 'Chat.' now" in str(refused.value)

    resumed = run(name="again", store=store, resume=run_id, concurrency=4, **options)
    assert resumed.id == run_id and resumed.status == "completed"
    assert resumed.execution_changes == [SettingChange("concurrency", 1, 4)]
    assert resumed.to_dict()["execution_changes"] == [{"field": "concurrency", "then": 1, "now": 4}]
    assert store.get_run(run_id).config["spec"]["execution"]["concurrency"] == 4


def test_the_resume_note_names_a_flag_the_eval_file_or_the_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    note = _ResumeNote(Path("evals/e.yaml"), {"timeout"}, {"concurrency": 16, "executor": None})
    changes = (
        SettingChange("concurrency", 1, 16),
        SettingChange("timeout", 60.0, 5.0),
        SettingChange("cache", False, True),
    )
    note.on_start(RunStart(id="r1", name="e", started_at=0.0, execution_changes=changes))
    note.on_start(RunStart(id="r2", name="e", started_at=0.0))  # nothing changed: nothing said
    said = " ".join(capsys.readouterr().err.split())
    assert said == (
        "resuming: run r1 with concurrency 16 (from --concurrency; the run ran with 1 before);"
        " timeout 5.0 (from evals/e.yaml; the run ran with 60.0 before);"
        " cache True (from the default; the run ran with False before)"
    )


def test_a_push_brings_a_resumed_runs_execution_settings_up_to_date_and_nothing_else(
    tmp_path: Path,
) -> None:
    rows = [{"id": f"r{i}", "prompt": "x", "expected": "x", "prediction": "x"} for i in range(3)]
    local, team = Store(tmp_path / "local.db"), Store(tmp_path / "team.db")
    run_id = _interrupted(local, dataset=rows, scorers=[exact_match], concurrency=1)
    push_runs(local, StoreTarget(team), [run_id])
    run(name="again", dataset=rows, scorers=[exact_match], store=local, resume=run_id)
    summary = push_runs(local, StoreTarget(team), [run_id])
    assert summary.count("updated") == 1
    row = team.get_run(run_id)
    assert (row.status, row.config["concurrency"]) == ("completed", 16)
    # a copy that says the run is another one (its pass threshold) is refused, as before
    with sqlite3.connect(team.path) as con:
        con.execute("UPDATE runs SET status='interrupted' WHERE id=?", (run_id,))
    with sqlite3.connect(local.path) as con:
        con.execute(
            "UPDATE runs SET config = json_set(config, '$.pass_threshold', 0.9) WHERE id=?",
            (run_id,),
        )
    with pytest.raises(PushError, match="differs from this copy's in config"):
        push_runs(local, StoreTarget(team), [run_id])
