"""Sandboxed execution of generated code: isolation, limits, timeouts and unforgeable verdicts.

Candidates run under bubblewrap (new user, PID, mount, network and IPC namespaces, uid 65534
mapped to an unprivileged host uid, no capabilities, a seccomp filter, a read-only system view
and ``/proc``, a bounded scratch tmpfs) in a cgroup per run that caps processes and memory.
Read ``docs/sandbox.md`` for what this contains and what it does not.
"""

from typing import TYPE_CHECKING

from aieval._lazy import lazy_exports

if TYPE_CHECKING:
    from aieval.errors import SandboxError
    from aieval.sandbox._archive import extract_archive
    from aieval.sandbox._execute import CommandResult, execute, execute_async, run_command
    from aieval.sandbox._limits import REQUIRE_CGROUP_ENV, SandboxLimits, sandbox_env
    from aieval.sandbox._optin import ALLOW_CODE_EXECUTION_ENV, require_code_execution
    from aieval.sandbox._result import ExecutionResult, ExecutionStatus
    from aieval.sandbox._runnable import bound_names, check_runnable

__all__ = [
    "ALLOW_CODE_EXECUTION_ENV",
    "REQUIRE_CGROUP_ENV",
    "CommandResult",
    "ExecutionResult",
    "ExecutionStatus",
    "SandboxError",
    "SandboxLimits",
    "bound_names",
    "check_runnable",
    "execute",
    "execute_async",
    "extract_archive",
    "require_code_execution",
    "run_command",
    "sandbox_env",
]

_EXPORTS = {
    "SandboxError": "aieval.errors",
    "extract_archive": "aieval.sandbox._archive",
    "CommandResult": "aieval.sandbox._execute",
    "execute": "aieval.sandbox._execute",
    "execute_async": "aieval.sandbox._execute",
    "run_command": "aieval.sandbox._execute",
    "REQUIRE_CGROUP_ENV": "aieval.sandbox._limits",
    "SandboxLimits": "aieval.sandbox._limits",
    "sandbox_env": "aieval.sandbox._limits",
    "ALLOW_CODE_EXECUTION_ENV": "aieval.sandbox._optin",
    "require_code_execution": "aieval.sandbox._optin",
    "ExecutionResult": "aieval.sandbox._result",
    "ExecutionStatus": "aieval.sandbox._result",
    "bound_names": "aieval.sandbox._runnable",
    "check_runnable": "aieval.sandbox._runnable",
}
__getattr__, __dir__ = lazy_exports(__name__, _EXPORTS, globals())
