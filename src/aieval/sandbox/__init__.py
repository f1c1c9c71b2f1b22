"""Sandboxed execution of generated code: limits, timeouts and verdicts the code cannot forge.

Read ``docs/sandbox.md`` before running model output: this is best-effort isolation for
untrusted-but-not-malicious code, not a security boundary; use containers or VMs for hostile code.
"""

from aieval.sandbox._execute import CommandResult, execute, execute_async, run_command
from aieval.sandbox._limits import SandboxLimits, sandbox_env
from aieval.sandbox._optin import ALLOW_CODE_EXECUTION_ENV, require_code_execution
from aieval.sandbox._result import ExecutionResult, ExecutionStatus

__all__ = [
    "ALLOW_CODE_EXECUTION_ENV",
    "CommandResult",
    "ExecutionResult",
    "ExecutionStatus",
    "SandboxLimits",
    "execute",
    "execute_async",
    "require_code_execution",
    "run_command",
    "sandbox_env",
]
