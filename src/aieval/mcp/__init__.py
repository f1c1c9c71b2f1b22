"""MCP servers under test, through the official ``mcp`` SDK (stdio and streamable HTTP).

:func:`lint_tools` checks a server's ``tools/list`` (descriptions, schemas, names);
:func:`run_tasks` plays tasks with the server's tools for several client models, k times each,
one stored run per model (pass@k and pass^k with intervals, recovery from tool errors, and
the per-tool trajectory every report reads); :func:`inject_errors` fails or corrupts a share of
the tool results; :func:`compare_servers` gives promote / block / inconclusive between two
versions of a server. See docs/tools.md, "MCP servers". Needs the ``mcp`` extra.
"""

from aieval.mcp._evaluator import MCP_KEY
from aieval.mcp._inject import ErrorInjection, InjectionMode, inject_errors
from aieval.mcp._lint import LintFinding, Severity, lint_tools
from aieval.mcp._run import (
    ModelFigures,
    ModelSpec,
    ServerVerdict,
    TaskRuns,
    compare_servers,
    figures_of,
    run_tasks,
    run_tasks_async,
)
from aieval.mcp._server import McpConnection, McpServer, McpTool, ToolReply
from aieval.mcp._tasks import ExpectedCall, McpTask, load_tasks

__all__ = [
    "MCP_KEY",
    "ErrorInjection",
    "ExpectedCall",
    "InjectionMode",
    "LintFinding",
    "McpConnection",
    "McpServer",
    "McpTask",
    "McpTool",
    "ModelFigures",
    "ModelSpec",
    "ServerVerdict",
    "Severity",
    "TaskRuns",
    "ToolReply",
    "compare_servers",
    "figures_of",
    "inject_errors",
    "lint_tools",
    "load_tasks",
    "run_tasks",
    "run_tasks_async",
]
