"""What one sandboxed execution produced."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["ExecutionResult", "ExecutionStatus"]

#: Every status, in the order summaries show them (``typing.get_args`` lists them); the last
#: is not a verdict on the candidate.
ExecutionStatus = Literal["passed", "failed", "timeout", "memory_limit", "error", "sandbox_error"]


@dataclass(slots=True, frozen=True)
class ExecutionResult:
    """The verdict on one program run against its tests.

    Attributes:
        status: ``passed``, ``failed`` (a test failed or the candidate crashed mid-test),
            ``timeout`` (wall clock or CPU time), ``memory_limit``, ``error`` (the program
            or the tests could not be run at all, or no authentic verdict came back after the
            candidate started), or ``sandbox_error``: the sandbox itself failed before any
            candidate code ran (bubblewrap or the interpreter could not start, the harness
            could not set up): no verdict on the candidate at all; ``detail`` names the cause.
        detail: a one-line explanation: the failing assertion, the limit hit, ...
        stdout: the captured standard output, capped at ``max_output_bytes``.
        stderr: the captured standard error, capped likewise.
        duration_s: wall-clock seconds from start to verdict.
        exit_code: the harness process's exit status (negative: killed by that signal).
        network_isolated: whether the run had no network; see ``network_detail`` when not.
        network_detail: ``"ok"`` or why the network could not be isolated.
        tests_passed: test snippets that passed (one per snippet given).
        tests_total: test snippets run.
        output_truncated: whether stdout or stderr hit the cap.
        isolation: how the run was isolated: bubblewrap namespaces, scratch size, process cap.
        memory_peak_bytes: the most memory the whole run held at once, as its memory cgroup
            counted it (``None`` without one).
    """

    status: ExecutionStatus
    detail: str
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0
    exit_code: int | None = None
    network_isolated: bool = False
    network_detail: str = ""
    tests_passed: int = 0
    tests_total: int = 0
    output_truncated: bool = False
    isolation: str = ""
    memory_peak_bytes: int | None = None

    @property
    def passed(self) -> bool:
        """Whether the status is ``passed``."""
        return self.status == "passed"

    @property
    def sandbox_failed(self) -> bool:
        """Whether the sandbox failed before the candidate ran (``sandbox_error``)."""
        return self.status == "sandbox_error"
