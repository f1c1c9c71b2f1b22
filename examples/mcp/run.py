"""Evaluate an MCP server and its next version, offline: lint, tasks, injected errors, verdict.

    python examples/mcp/run.py --out /tmp/mcp-example

Two scripted client models play the tasks 3 times each against the server (started over
stdio from server.py), then against its next version (``--broken``); the verdict between the
two is paired by task, model and repeat. Every run is stored in OUT/runs.db (``aieval show``).
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from aieval.mcp import (
    McpConnection,
    McpServer,
    ModelSpec,
    compare_servers,
    inject_errors,
    lint_tools,
    run_tasks,
)
from aieval.store import Store

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from scripted import ScriptedModel  # noqa: E402  (beside this file)


def server(*flags: str) -> McpServer:
    return McpServer.stdio(sys.executable, str(HERE / "server.py"), *flags)


async def lint(version: McpServer) -> str:
    async with McpConnection(version) as connection:
        tools = await connection.list_tools()
    findings = lint_tools(tools)
    errors = sum(f.severity == "error" for f in findings)
    return f"{len(tools)} tools, {errors} errors, {len(findings) - errors} warnings"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", type=Path, required=True)
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    db = out / "runs.db"
    current, candidate = server(), server("--broken")
    print(f"lint: {asyncio.run(lint(current))}")

    def models() -> list[ModelSpec]:
        return [
            ModelSpec(ScriptedModel("steady"), "scripted"),
            ModelSpec(ScriptedModel("careless", careless=True), "scripted"),
        ]

    tasks = HERE / "tasks.yaml"
    with Store(db) as store:
        before = run_tasks(
            current, tasks, models(), k=3, name="current", store=store, concurrency=1
        )
        for m in before.models:
            print(
                f"{m.model}: pass@3 {m.pass_at_k.estimate:.2f}, pass^3 {m.pass_hat_k.estimate:.2f}"
                if m.pass_at_k is not None and m.pass_hat_k is not None
                else f"{m.model}: n/a"
            )
        faults = inject_errors(rate=0.3, mode="fail", seed=1)
        shaken = run_tasks(
            current, tasks, models()[:1], k=3, name="faults", store=store, inject=faults
        )
        m = shaken.models[0]
        print(f"injected errors: {m.injected}, recovered {m.recovered} of {m.with_tool_errors}")
        after = run_tasks(candidate, tasks, models(), k=3, name="next", store=store, concurrency=1)
        print(f"verdict, next version: {compare_servers(store, before, after).outcome}")
        again = run_tasks(current, tasks, models(), k=3, name="again", store=store, concurrency=1)
        print(f"verdict, same version: {compare_servers(store, before, again).outcome}")


if __name__ == "__main__":
    main()
