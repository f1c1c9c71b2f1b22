"""``aieval mcp lint`` and ``aieval mcp run``: an MCP server's tool listing checked, and tasks
played with its tools by client models (and the verdict against an earlier version)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from aieval._terminal import printable
from aieval.cli._exits import EXIT_FAILED
from aieval.cli._help import HelpCommand, HelpGroup
from aieval.cli._options import DbOption, store_location
from aieval.cli._print import num, out
from aieval.errors import ConfigError

__all__ = ["mcp_app"]

#: the verdict's exit code, as ``aieval compare``'s: 0 promote, 1 block, 3 inconclusive
_EXIT = {"promote": 0, "block": 1, "inconclusive": 3}

mcp_app = typer.Typer(
    help="Evaluate MCP servers: lint their tools, play tasks with them, compare versions.",
    no_args_is_help=True,
    cls=HelpGroup,
)

UrlOption = Annotated[
    str | None,
    typer.Option("--url", help="The server's streamable HTTP endpoint, instead of a command."),
]
CommandArgument = Annotated[
    list[str] | None,
    typer.Argument(help="The server's command and arguments, after --: -- python server.py"),
]
TimeoutOption = Annotated[
    float, typer.Option("--timeout", help="Seconds a tool call or listing may take.")
]


def _server(command: list[str] | None, url: str | None, timeout: float) -> Any:
    from aieval.mcp import McpServer

    if bool(command) == (url is not None):
        raise ConfigError(
            "give the server once: its command after -- (aieval mcp lint -- python server.py) "
            "or --url http://HOST:PORT/mcp"
        )
    if url is not None:
        return McpServer.http(url, call_timeout=timeout)
    return McpServer.stdio(*(command or ()), call_timeout=timeout)


@mcp_app.command("lint", cls=HelpCommand)
def lint_command(
    command: CommandArgument = None,
    url: UrlOption = None,
    timeout: TimeoutOption = 30.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
) -> None:
    """Check the server's tools/list: descriptions, input schemas, names (exit 1 on an error)."""
    from aieval.mcp import McpConnection, lint_tools

    server = _server(command, url, timeout)

    async def listed() -> Any:
        async with McpConnection(server) as connection:
            return await connection.list_tools()

    tools = asyncio.run(listed())
    findings = lint_tools(tools)
    errors = sum(f.severity == "error" for f in findings)
    if as_json:
        body = {
            "server": server.label,
            "tools": len(tools),
            "findings": [f.to_dict() for f in findings],
        }
        out.print_json(json.dumps(body), ensure_ascii=True)
    else:
        out.print(
            printable(
                f"{server.label}: {len(tools)} tools, {errors} errors, "
                f"{len(findings) - errors} warnings"
            ),
            highlight=False,
            soft_wrap=True,
        )
        for finding in findings:
            out.print(
                printable(
                    f"{finding.severity}: {finding.tool or '-'}: {finding.code}: {finding.message}"
                ),
                highlight=False,
                soft_wrap=True,
            )
    if errors:
        raise typer.Exit(EXIT_FAILED)


@mcp_app.command("run", cls=HelpCommand)
def run_command(
    tasks: Annotated[Path, typer.Argument(help="The task file (.yaml or .jsonl).")],
    command: CommandArgument = None,
    url: UrlOption = None,
    models: Annotated[
        list[str] | None,
        typer.Option("--model", help="A client model, PROVIDER:MODEL (repeat for several)."),
    ] = None,
    k: Annotated[int, typer.Option("-k", help="Answers per task and model.")] = 5,
    base_url: Annotated[
        str | None, typer.Option("--base-url", help="The models' endpoint (openai-compatible).")
    ] = None,
    api_key_env: Annotated[
        str | None, typer.Option("--api-key-env", help="The variable holding the models' key.")
    ] = None,
    name: Annotated[str, typer.Option("--name", help="The runs' name prefix.")] = "mcp",
    inject_rate: Annotated[
        float, typer.Option("--inject-rate", help="Share of tool calls given an error (0..1).")
    ] = 0.0,
    inject_mode: Annotated[
        str, typer.Option("--inject-mode", help="fail (the tool is not called) or corrupt.")
    ] = "fail",
    inject_tools: Annotated[
        list[str] | None, typer.Option("--inject-tool", help="Only these tools get errors.")
    ] = None,
    seed: Annotated[int, typer.Option("--seed", help="Which calls get errors.")] = 0,
    compare_to: Annotated[
        str | None,
        typer.Option(
            "--compare-to",
            help="The name of an earlier `aieval mcp run` (another server version): the paired "
            "verdict per model; exit 0 promote, 1 block, 3 inconclusive.",
        ),
    ] = None,
    concurrency: Annotated[int, typer.Option("--concurrency", help="Tasks played at once.")] = 4,
    timeout: TimeoutOption = 30.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON.")] = False,
    db: DbOption = None,
) -> None:
    """Play each task k times per model with the server's tools; one stored run per model."""
    from aieval.mcp import ModelSpec, compare_servers, inject_errors, run_tasks
    from aieval.store import Store

    if not models:
        raise ConfigError("give at least one client model: --model PROVIDER:MODEL")
    server = _server(command, url, timeout)
    specs = [ModelSpec.parse(m, base_url=base_url, api_key_env=api_key_env) for m in models]
    injection = (
        inject_errors(inject_rate, inject_mode, inject_tools or (), seed)  # type: ignore[arg-type]
        if inject_rate > 0
        else None
    )
    location = store_location(db)
    store = Store(location)
    try:
        result = run_tasks(
            server,
            tasks,
            specs,
            k=k,
            name=name,
            store=store,
            inject=injection,
            concurrency=concurrency,
        )
        verdict = None
        if compare_to is not None:
            baseline = {s.label: f"{compare_to} [{s.label}]" for s in specs}
            verdict = compare_servers(store, baseline, result)
    finally:
        store.close()
    if as_json:
        body = result.to_dict()
        if verdict is not None:
            body["verdict"] = verdict.to_dict()
        out.print_json(json.dumps(body), ensure_ascii=True)
    else:
        _print(result, verdict)
    if verdict is not None:
        code = _EXIT[verdict.outcome]
        if code:
            raise typer.Exit(code)


def _print(result: Any, verdict: Any) -> None:
    table = Table(title=printable(f"{result.server}"), title_justify="left")
    for column in ("model", "run", "pass@k", "pass^k", "errors", "recovered", "injected"):
        table.add_column(column, justify="left" if column in ("model", "run") else "right")
    for m in result.models:
        table.add_row(
            printable(m.model),
            m.run_id,
            _ci(m.pass_at_k),
            _ci(m.pass_hat_k),
            str(m.errors),
            "-" if m.recovery_rate is None else f"{m.recovered}/{m.with_tool_errors}",
            str(m.injected),
        )
    out.print(table)
    out.print(f"k = {result.models[0].k if result.models else '-'}; intervals: 95% over tasks")
    for m in result.models:
        calls = ", ".join(f"{name} {c} ({e} failed)" for name, (c, e) in m.tools.items())
        out.print(printable(f"{m.model} tool calls: {calls or 'none'}"), highlight=False)
    if verdict is not None:
        for model, outcome in verdict.models.items():
            out.print(printable(f"{model}: {outcome}: {verdict.reasons[model]}"), highlight=False)
        out.print(f"verdict: {verdict.outcome}", highlight=False)


def _ci(ci: Any) -> str:
    if ci is None:
        return "n/a"
    return f"{num(ci.estimate)} [{num(ci.low)}, {num(ci.high)}]"
