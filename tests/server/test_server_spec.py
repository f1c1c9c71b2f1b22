"""The server runs the same RunSpec as ``run()`` and ``aieval run`` build for an evaluation."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
from tests.server.test_server_api import finished_run, store_of

from aieval import run
from aieval.runner import RunSpec, parse_eval


async def test_a_request_runs_the_spec_of_its_eval_file(
    client: httpx.AsyncClient, root: Path
) -> None:
    data = root / "rows.jsonl"
    rows = [
        {"id": f"r{i}", "prompt": f"q{i}", "expected": "yes", "prediction": ("no", "yes")[i % 2]}
        for i in range(6)
    ]
    data.write_text("".join(json.dumps(r) + "\n" for r in rows))
    body = {
        "name": "served",
        "dataset": str(data.resolve()),
        "scorers": ["exact_match", {"token_f1": {"name": "f1"}}],
        "settings": {"concurrency": 3, "pass_threshold": 0.6},
        "grader": "threshold",
    }
    run_id = await finished_run(client, body)
    store = store_of(client)
    row = store.get_run(run_id)
    stored = RunSpec.parse(row.config["spec"])
    assert "spec_incomplete" not in row.config
    where = str(store.path)
    (from_file,) = parse_eval(body).specs(store=where, run_id=run_id)
    # the same evaluation through run()'s keywords stores the same spec
    direct = run(
        name="served",
        dataset=data.resolve(),
        scorers=["exact_match", {"token_f1": {"name": "f1"}}],
        concurrency=3,
        pass_threshold=0.6,
        grader="threshold",
        store=where,
    )
    from_keywords = RunSpec.parse(store.get_run(direct.id).config["spec"])
    assert from_keywords.storage.run_id is None
    assert stored == from_file == from_keywords.replace(run_id=run_id)
    assert stored.execution.concurrency == 3 and stored.scoring.pass_threshold == 0.6
    assert stored.scoring.grader == "threshold"
    assert row.metrics["scorers"]["exact_match"]["mean"] == 0.5
