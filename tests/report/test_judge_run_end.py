"""``aieval run`` ends with the run's judges: how to start reviewing while the store has no
labels for them, and their agreement once it has (labels of an earlier run of the same judge
count)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli import run_main
from tests.support.openai_server import OpenAIServer, Reply

from aieval.core import ReviewLabel
from aieval.judges import run_judges
from aieval.store import Store

_GRADE = re.compile(r"grade (\d+)")
GRADES = [8 if i % 3 else 2 for i in range(12)]


def _scripted(body: Any) -> Reply:
    found = _GRADE.search(str(body["messages"][-1]["content"]))
    return Reply(json.dumps({"score": int(found.group(1)) if found else 0, "reason": "r"}))


@pytest.mark.slow  # two runs of the command, judged over HTTP
def test_the_runs_end_shows_its_judges_figures_or_how_to_start(
    openai_server: OpenAIServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    openai_server.responder = _scripted
    rows = [
        {"id": f"s{i}", "prompt": "q", "prediction": f"grade {g}"} for i, g in enumerate(GRADES)
    ]
    (tmp_path / "data.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "judged.yaml").write_text(
        "name: judged\ndataset: data.jsonl\nscorers:\n"
        f"  - llm_judge: {{rubric: Be right., base_url: {json.dumps(openai_server.base_url)},"
        " model: judge-v1, api_key_env: JUDGE_KEY}\n"
    )
    monkeypatch.setenv("JUDGE_KEY", "sk-judge")
    args = ("run", "judged.yaml", "--db", str(tmp_path / "runs.db"))
    first = run_main(capsys, monkeypatch, *args, cwd=tmp_path, env={"COLUMNS": "250"})
    assert first.returncode == 0, first.stderr
    with Store(tmp_path / "runs.db") as store:
        row = store.get_run("judged")
        [(key, threshold)] = run_judges(row.config)
        store.add_review_labels(
            ReviewLabel(
                key.digest, row.id, f"s{i}", "ana", passed=(g / 10 >= threshold) != (i == 1)
            )
            for i, g in enumerate(GRADES)
        )
    out = " ".join(first.stdout.split())
    assert "llm_judge@judge-v1: no agreement figures: no labels for this judge" in out
    assert f"aieval review create {row.id} --scorer llm_judge" in out

    second = run_main(capsys, monkeypatch, *args, cwd=tmp_path, env={"COLUMNS": "250"})
    assert second.returncode == 0, second.stderr
    out = " ".join(second.stdout.split())
    assert "kappa judge-human" in out and "llm_judge@judge-v1 is uncertified" in out
    assert "12 (12 labels)" in out and "corrected" in out
