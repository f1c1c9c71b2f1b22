"""Provenance on every comparison: both runs' dataset, eval file, scorers and judges, target,
aieval version and git commit side by side, a difference that breaks the comparison flagged in
every format (and on the first screen of the GitHub comment)."""

from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path
from typing import Any

import jsonschema
from tests.support.openai_server import OpenAIServer, Reply

from aieval import Store, __version__, run
from aieval.report import (
    compare_runs,
    comparison_schema,
    render_github,
    render_html,
    render_json,
    render_markdown,
    render_text,
)
from aieval.runner import load_eval, run_eval
from aieval.scorers import llm_judge

ROWS = [
    {"id": f"e{i}", "prompt": f"question {i}", "expected": "a", "prediction": f"answer {i}"}
    for i in range(8)
]


def _judge(server: OpenAIServer, model: str) -> Any:
    return llm_judge(
        rubric="Reward faithful answers.", provider="openai-compatible",
        base_url=server.base_url, model=model, name="quality",
    )  # fmt: skip


def _row(data: dict[str, Any], key: str) -> dict[str, Any]:
    return next(r for r in data["provenance"]["rows"] if r["key"] == key)


def test_a_judge_model_change_is_flagged_in_every_format(
    openai_server: OpenAIServer, tmp_path: Path
) -> None:
    openai_server.responder = lambda body: Reply(json.dumps({"score": 8, "reason": "fine"}))
    db = tmp_path / "runs.db"
    base = run(name="qa", dataset=ROWS, scorers=[_judge(openai_server, "judge-a")], store=db)
    cand = run(name="qa", dataset=ROWS, scorers=[_judge(openai_server, "judge-b")], store=db)
    comparison = compare_runs(Store(db), base.id, cand.id)
    data = comparison.to_dict()
    jsonschema.validate(json.loads(render_json(comparison)), comparison_schema())

    model = _row(data, "judge:quality:judge_model")
    assert (model["baseline"], model["candidate"]) == ("judge-a", "judge-b")
    assert model["differs"] and model["breaks_comparison"]
    rubric = _row(data, "judge:quality:rubric_sha256")
    assert not rubric["differs"] and not rubric["breaks_comparison"]
    note = data["provenance"]["not_comparable"]
    assert comparison.outcome == "inconclusive" and "judge_model" in note
    rule = next(r for r in data["decision"]["rules"] if r["rule"] == "comparable_runs")
    assert note == rule["reason"]  # the comparable_runs rule's reason, not a second rule

    text = render_text(comparison, width=200)
    assert "not comparable: " in text and "judge quality: judge_model" in text
    assert "judge-a" in text and "judge-b" in text
    html_page = render_html(comparison)
    assert "<h2>Provenance</h2>" in html_page and "<b>not comparable</b>" in html_page
    markdown = render_markdown(comparison)
    assert "**Not comparable:**" in markdown and "| judge quality: judge\\_model |" in markdown
    github = render_github(comparison)
    first_screen = github.splitlines()[:4]
    assert any(line.startswith("> ⚠️ **The runs are not comparable:**") for line in first_screen)
    assert "judge\\_model judge-a in the baseline, judge-b in the candidate" in github


def test_an_eval_file_run_records_its_digest_version_and_branch(tmp_path: Path) -> None:
    data = tmp_path / "data.jsonl"
    data.write_text(json.dumps({"id": "a", "input": "q", "expected": "x", "prediction": "x"}))
    file = tmp_path / "eval.yaml"
    file.write_text(
        "name: qa\ndataset:\n  path: data.jsonl\n  prediction_field: prediction\n"
        "scorers: [exact_match]\n"
    )
    (result,) = run_eval(load_eval(file), store=tmp_path / "runs.db")
    config = Store(tmp_path / "runs.db").get_run(result.id).config
    digest = hashlib.sha256(file.read_bytes()).hexdigest()
    assert config["eval_file"] == {"path": str(file), "sha256": digest}
    assert config["aieval_version"] == __version__
    assert "git_branch" in config


def test_runs_without_provenance_compare_and_render(tmp_path: Path) -> None:
    """Runs stored before provenance was recorded show "-" and flag nothing."""
    db = tmp_path / "runs.db"
    base = run(name="qa", dataset=ROWS, scorers=["exact_match"], store=db).id
    cand = run(name="qa", dataset=ROWS, scorers=["exact_match"], store=db).id
    store = Store(db)
    with sqlite3.connect(db) as conn:  # an older store's rows
        for run_id in (base, cand):
            config = store.get_run(run_id).config
            del config["aieval_version"], config["git_branch"]
            conn.execute("UPDATE runs SET config = ? WHERE id = ?", (json.dumps(config), run_id))
    store = Store(db)
    data = compare_runs(store, base, cand).to_dict()
    version = _row(data, "aieval_version")
    assert version["baseline"] is None and not version["differs"]
    assert data["provenance"]["not_comparable"] is None
    assert "| aieval version | - | - |  |" in render_github(data)
