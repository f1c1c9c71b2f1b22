"""Write the recorded run logs of the two example workflows (deterministic; rerun to refresh)."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent
T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def step(
    name: str,
    agent: str,
    start: float,
    seconds: float,
    *,
    status: str = "success",
    outputs: Any = None,
    retries: int = 0,
    error: str | None = None,
    tokens: int = 800,
    cost: float = 0.002,
    model: str = "gpt-4o-mini",
    tool_calls: list[dict[str, Any]] | None = None,
    scores: dict[str, float] | None = None,
) -> dict[str, Any]:
    meta: dict[str, Any] = {
        "input_tokens": int(tokens * 0.7),
        "output_tokens": tokens - int(tokens * 0.7),
        "cost": cost,
    }
    if tool_calls is not None:
        meta["tool_calls"] = tool_calls
    if scores:
        meta["scores"] = scores
    return {
        "step_name": name,
        "status": status,
        "agent_role": agent,
        "tier": "tier2" if model.endswith("mini") else "tier1",
        "model_used": model,
        "input_data": {},
        "output_data": outputs,
        "error": error,
        "error_type": "ToolError" if error else None,
        "start_time": (T0 + timedelta(seconds=start)).isoformat(),
        "end_time": (T0 + timedelta(seconds=start + seconds)).isoformat(),
        "retry_count": retries,
        "metadata": meta,
    }


def run(
    run_id: str,
    name: str,
    version: str,
    steps: list[dict[str, Any]],
    outputs: Any,
    inputs: dict[str, Any],
    scores: dict[str, Any],
    *,
    status: str = "success",
    **extra: Any,
) -> dict[str, Any]:
    end = max(datetime.fromisoformat(s["end_time"]) for s in steps)
    return {
        "workflow_id": run_id,
        "workflow_name": name,
        "version": version,
        "overall_status": status,
        "final_output": outputs,
        "start_time": T0.isoformat(),
        "end_time": end.isoformat(),
        "steps": steps,
        "metadata": {"inputs": inputs, "scores": scores, "engine": "langchain"},
        **extra,
    }


def review_runs() -> dict[str, dict[str, Any]]:
    report = {
        "verdict": "request_changes",
        "issues": [
            {"line": 12, "severity": "high", "message": "SQL built from user input"},
            {"line": 40, "severity": "low", "message": "unused import"},
        ],
    }
    summary = "Two issues: an injectable SQL query (line 12) and an unused import."

    def dag(
        review_s: float = 3.0,
        *,
        review: dict[str, Any] | None = None,
        lint_status: str = "success",
        review_status: str = "success",
        review_retries: int = 0,
        summary_text: str = summary,
    ) -> tuple[list[dict[str, Any]], Any]:
        rep = review if review is not None else report
        steps = [
            step("parse_code", "parser", 0, 0.6, outputs={"ast": "ok"}, tokens=300),
            step(
                "lint",
                "linter",
                0.6,
                0.8,
                status=lint_status,
                outputs={"findings": 1} if lint_status == "success" else None,
                error="linter crashed" if lint_status != "success" else None,
                tokens=0,
                cost=0,
            ),
            step("security_scan", "security", 0.6, 1.2, outputs={"alerts": 1}, tokens=900),
            step(
                "review",
                "reviewer",
                1.8,
                review_s,
                status=review_status,
                retries=review_retries,
                outputs={"report": rep} if review_status == "success" else None,
                error="model returned invalid JSON three times"
                if review_status != "success"
                else None,
                tokens=4000,
                cost=0.02,
                model="gpt-4o",
                scores={"review_quality": 0.8},
            ),
        ]
        if review_status == "success":
            steps.append(
                step(
                    "summarize",
                    "writer",
                    1.8 + review_s,
                    1.0,
                    outputs={"summary": summary_text},
                    tokens=600,
                    scores={"clarity": 0.9},
                )
            )
        else:
            steps.append(
                step("summarize", "writer", 1.8 + review_s, 0, status="skipped", tokens=0, cost=0)
            )
        outs = (
            {"review_report": rep, "summary": summary_text}
            if review_status == "success"
            else {"summary": None}
        )
        return steps, outs

    inputs = {"code_file": "app/db.py", "language": "python"}
    good = {"correctness": 5, "completeness": 4, "tool_data_precision": 0.95, "documentation": 4}
    runs = {}
    s, o = dag()
    runs["cr-001-clean"] = run("cr-001", "code_review", "2.1", s, o, inputs, good)
    s, o = dag(review_s=19.0, review_retries=2)
    runs["cr-002-slow-retries"] = run(
        "cr-002",
        "code_review",
        "2.1",
        s,
        o,
        {**inputs, "code_file": "app/api.py"},
        {"correctness": 4, "completeness": 4, "tool_data_precision": 0.85, "documentation": 3},
    )
    s, o = dag(review_status="failed", review_retries=3)
    runs["cr-003-review-failed"] = run(
        "cr-003",
        "code_review",
        "2.1",
        s,
        o,
        {**inputs, "code_file": "app/auth.py"},
        {"correctness": 1, "completeness": 1, "tool_data_precision": 0.5, "documentation": 1},
        status="failed",
    )
    bad = {
        "verdict": "request_changes",
        "issues": [
            report["issues"][0],
            {"line": "40", "severity": "low", "message": "unused import"},
        ],
    }
    s, o = dag(review=bad)
    runs["cr-004-schema-violation"] = run(
        "cr-004", "code_review", "2.1", s, o, {**inputs, "code_file": "app/models.py"}, good
    )
    s, o = dag()
    runs["cr-005-wrong-review"] = run(
        "cr-005",
        "code_review",
        "2.1",
        s,
        o,
        {**inputs, "code_file": "app/cli.py"},
        {"correctness": 2, "completeness": 4, "tool_data_precision": 0.9, "documentation": 4},
    )
    s, o = dag(lint_status="failed")
    runs["cr-006-lint-crashed"] = run(
        "cr-006",
        "code_review",
        "2.1",
        s,
        o,
        {**inputs, "code_file": "app/jobs.py", "language": "python"},
        {"correctness": 4, "completeness": 4, "tool_data_precision": 0.9, "documentation": 4},
        trace_id="tr-6f1c",
    )  # unknown fields are kept
    return runs


def agent_runs() -> dict[str, dict[str, Any]]:
    def call(name: str, **args: Any) -> dict[str, Any]:
        return {"type": "function", "function": {"name": name, "arguments": json.dumps(args)}}

    def flow(
        *,
        lookup_args: dict[str, Any] | None = None,
        refund_tool: str = "issue_refund",
        order: tuple[str, ...] = ("triage", "billing", "billing", "writer"),
        refund_status: str = "success",
        retries: int = 0,
        slow: float = 0.0,
        resolution: str = "refunded",
    ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
        lookup = lookup_args or {"order_id": "A1042"}
        text = "Your refund of $25.00 for order A1042 is on its way."
        steps = [
            step(
                "triage",
                order[0],
                0,
                0.8,
                outputs={"route": "billing"},
                tokens=400,
                scores={"routing_confidence": 0.9},
            ),
            step(
                "lookup_order",
                order[1],
                0.8,
                1.2 + slow,
                outputs={"order": {"id": "A1042"}},
                tool_calls=[call("get_order", **lookup)],
                retries=retries,
                tokens=900,
            ),
            step(
                "refund",
                order[2],
                2.0 + slow,
                1.0,
                status=refund_status,
                outputs={"refund": "ok"} if refund_status == "success" else None,
                error="payments API timed out" if refund_status != "success" else None,
                tool_calls=[call(refund_tool, order_id="A1042", amount=25.0)],
                retries=retries,
                tokens=700,
            ),
            step(
                "reply",
                order[3],
                3.0 + slow,
                1.5,
                outputs={"text": text, "resolution": resolution},
                tokens=600,
                scores={"tone": 0.8},
            ),
        ]
        return steps, {"reply": text, "resolution": resolution}

    inputs = {"customer_message": "I was charged twice for order A1042", "customer_tier": "pro"}
    good = {
        "tool_selection_accuracy": 1.0,
        "argument_correctness": 1.0,
        "handoff_accuracy": 1.0,
        "task_correctness": 1.0,
    }
    runs = {}
    s, o = flow()
    runs["sa-001-refunded"] = run("sa-001", "support_agent", "1.4", s, o, inputs, good)
    s, o = flow(refund_tool="change_payout_account")
    runs["sa-002-forbidden-tool"] = run(
        "sa-002", "support_agent", "1.4", s, o, inputs, {**good, "tool_selection_accuracy": 0.5}
    )
    s, o = flow(order=("triage", "writer", "billing", "writer"))
    runs["sa-003-bad-handoff"] = run(
        "sa-003", "support_agent", "1.4", s, o, inputs, {**good, "handoff_accuracy": 0.33}
    )
    s, o = flow(lookup_args={"order_id": 1042})
    runs["sa-004-bad-arguments"] = run(
        "sa-004", "support_agent", "1.4", s, o, inputs, {**good, "argument_correctness": 0.5}
    )
    s, o = flow(retries=2, slow=30.0)
    runs["sa-005-slow-retries"] = run(
        "sa-005", "support_agent", "1.4", s, o, inputs, {**good, "task_correctness": 0.8}
    )
    s, o = flow(refund_status="failed", resolution="escalated")
    runs["sa-006-refund-failed"] = run(
        "sa-006",
        "support_agent",
        "1.4",
        s,
        o,
        inputs,
        {**good, "task_correctness": 0.4},
        status="partial",
    )
    return runs


def main() -> None:
    for folder, runs in (("code_review_runs", review_runs()), ("support_agent_runs", agent_runs())):
        target = HERE / folder
        target.mkdir(exist_ok=True)
        for name, data in runs.items():
            (target / f"{name}.json").write_text(
                json.dumps(data, indent=2) + "\n", encoding="utf-8"
            )


if __name__ == "__main__":
    main()
