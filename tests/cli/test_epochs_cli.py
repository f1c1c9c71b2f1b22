"""`aieval run` with epochs (settings.epochs, --epochs) against a loopback model server: the
target is called N times per example with the cache on, and the summary shows pass@k/pass^k."""

from pathlib import Path

import pytest
from tests.support.cli import Done, run_main
from tests.support.openai_server import OpenAIServer, Reply

from aieval import Store


def test_epochs_from_the_file_and_the_command_line(
    openai_server: OpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    openai_server.responder = lambda body: Reply(body["messages"][-1]["content"])
    (tmp_path / "e.yaml").write_text(
        "name: rep\n"
        "dataset: {rows: [{id: a, prompt: hi, expected: hi}, {id: b, prompt: yo, expected: no}]}\n"
        f"target: {{provider: openai-compatible, model: m, base_url: '{openai_server.base_url}',"
        " params: {temperature: 0}}\n"
        "scorers: [exact_match]\n"
        "settings: {epochs: 2}\n",
        encoding="utf-8",
    )

    def aieval(*args: str) -> Done:
        command = ["run", "e.yaml", "--db", "r.db", "-q", *args]
        return run_main(capsys, monkeypatch, *command, cwd=tmp_path)

    done = aieval()
    assert done.returncode == 0, done.stderr
    assert len(openai_server.requests) == 4  # each epoch is asked anew
    assert "epochs 2 (2 of 2 examples complete)" in done.stdout
    assert "k=2: pass@k 50.0% pass^k 50.0%" in done.stdout
    done = aieval("--epochs", "3")
    assert done.returncode == 0, done.stderr
    assert len(openai_server.requests) == 6  # epochs 1 and 2 are cached: only epoch 3 is new
    runs = Store(tmp_path / "r.db").list_runs(name="rep")
    assert sorted(r.metrics["samples"] for r in runs) == [4, 6]
    assert aieval("--epochs", "0").returncode == 2
