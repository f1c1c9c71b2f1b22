"""Run generated code against its tests under bubblewrap, with limits and unforgeable verdicts."""

from __future__ import annotations

import contextlib
import functools
import hashlib
import hmac
import json
import os
import secrets
import selectors
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aieval._sync import thread_twin
from aieval.errors import ConfigError, SandboxError
from aieval.sandbox._bwrap import CHILD_DIR, host_uid
from aieval.sandbox._cgroup import open_cgroup
from aieval.sandbox._limits import SandboxLimits, sandbox_env
from aieval.sandbox._ownership import lent_to
from aieval.sandbox._result import ExecutionResult, ExecutionStatus
from aieval.sandbox._runnable import check_runnable
from aieval.sandbox._setup import CHILD as _CHILD
from aieval.sandbox._setup import LAUNCH as _LAUNCH
from aieval.sandbox._setup import MIB as _MIB
from aieval.sandbox._setup import (
    START_GRACE_S,
    Staging,
    isolated_argv,
    launch_argv,
    seccomp_memfd,
)
from aieval.sandbox._setup import Run as _Run
from aieval.sandbox._setup import cgroup_account as _cgroup_account
from aieval.sandbox._warm import run_warm

__all__ = ["CommandResult", "execute", "execute_async", "run_command"]

# Processes of the sandbox machinery itself (bwrap's two, the harness and the worker).
_OWN_PROCESSES = 4
_STATUSES = frozenset({"passed", "failed", "timeout", "memory_limit", "error"})
_READY = {"ready": True}
_EXEC_FAILED_PREFIX = b"aieval-sandbox-exec-failed: "
# After the harness exits, descendants that kept our pipes open get this long to let go.
_DRAIN_GRACE_S = 0.2
_NETWORK_PREFIX = b"aieval-sandbox-network: "


def execute(
    program: str,
    tests: str | Sequence[str],
    *,
    entry_point: str | None = None,
    timeout: float = 5.0,
    memory_mb: int = 512,
    limits: SandboxLimits | None = None,
) -> ExecutionResult:
    """Run ``program`` and then ``tests`` in the sandbox; return the verdict.

    ``tests`` is Python source (or a list of snippets, each counted as one test) that calls
    the program's functions, e.g. MBPP's ``assert add(1, 2) == 3``. With ``entry_point``, the
    tests define HumanEval's ``check(candidate)``, which is called with that function.

    The tests see the program's functions as proxies into a separate process: arguments and
    return values must be plain data (``None``, bools, numbers, strings, bytes, and lists,
    tuples, sets, dicts of those). See ``docs/sandbox.md`` for what this does and does not
    protect against. Calling this function runs the code: it is the opt-in.

    Args:
        program: the candidate source.
        tests: test source, or a list of test snippets.
        entry_point: the function HumanEval-style ``check`` receives.
        timeout: wall-clock limit in seconds (ignored when ``limits`` is given).
        memory_mb: address-space limit in MiB (ignored when ``limits`` is given).
        limits: every limit at once.

    Example:
        >>> execute("def add(a, b):\\n    return a + b", "assert add(1, 2) == 3").status
        'passed'
    """
    limits = limits or SandboxLimits(timeout=timeout, memory_mb=memory_mb)
    snippets = [tests] if isinstance(tests, str) else list(tests)
    if not all(isinstance(item, str) for item in snippets) or not snippets:
        raise ConfigError("execute: tests must be a source string or a non-empty list of them")
    # tests that only define check(candidate), with nothing to call it, would pass any program
    check_runnable(tests, entry_point, "execute")
    nonce = secrets.token_bytes(32)
    if limits.isolation == "bwrap" and limits.warm:
        job = {
            "program": program,
            "tests": snippets,
            "entry_point": entry_point,
            "limits": limits.for_child(),
        }
        return _verdict(run_warm(job, nonce, limits), nonce, limits, len(snippets))
    settings = {
        "nonce": nonce.hex(),
        "program": program,
        "tests": snippets,
        "entry_point": entry_point,
        "limits": limits.for_child(),
        "drop_privileges": limits.isolation == "none" and _others_can_run_python(),
        "isolated": limits.isolation == "bwrap",
    }
    result_r, result_w = os.pipe()
    try:
        run = _run_process(
            ["harness", str(result_w)],
            json.dumps(settings).encode(),
            limits,
            result_fds=(result_r, result_w),
        )
    finally:
        with contextlib.suppress(OSError):
            os.close(result_r)
    return _verdict(run, nonce, limits, len(snippets))


execute_async = thread_twin(
    execute,
    name="execute_async",
    doc=":func:`execute` in a worker thread, for use inside an event loop.",
)


@dataclass(slots=True, frozen=True)
class CommandResult:
    """The outcome of :func:`run_command`.

    Attributes:
        exit_code: the command's exit status (negative: killed by that signal; ``None`` if it
            was killed on timeout).
        timed_out: whether the wall-clock timeout killed it.
        stdout: captured standard output, capped.
        stderr: captured standard error, capped.
        duration_s: wall-clock seconds.
        network_isolated: whether the command ran without network.
        network_detail: ``"ok"`` or why the network could not be isolated.
        isolation: how the command was isolated (bubblewrap, scratch size, process cap).
        memory_limit_hit: whether the run's memory cgroup killed a process of the command.
        memory_peak_bytes: the most memory the run held at once (``None``: not measured).
    """

    exit_code: int | None
    timed_out: bool
    stdout: str
    stderr: str
    duration_s: float
    network_isolated: bool
    network_detail: str
    isolation: str = ""
    memory_limit_hit: bool = False
    memory_peak_bytes: int | None = None


def run_command(
    argv: Sequence[str],
    *,
    cwd: str | os.PathLike[str],
    limits: SandboxLimits | None = None,
    env: dict[str, str] | None = None,
) -> CommandResult:
    """Run a command line isolated like :func:`execute`, with ``cwd`` bound read-write.

    Unlike :func:`execute`, the verdict is only the exit status and the files the command
    writes, which the command itself controls; use it for trusted test suites run against a
    patched checkout, not to judge hostile code.

    Raises:
        SandboxError: the sandbox failed before the command ran (bubblewrap or the interpreter
            could not start, or the command cannot be executed inside), with the cause; such
            a run has no exit status of the command to report.
    """
    limits = limits or SandboxLimits()
    if not argv:
        raise ConfigError("run_command: argv must not be empty")
    run = _run_process(
        ["command", *argv],
        json.dumps(
            {"limits": limits.for_child(), "isolated": limits.isolation == "bwrap"}
        ).encode(),
        limits,
        cwd=Path(cwd).resolve(),
        env=sandbox_env(env),
    )
    stderr = run.stderr
    if not stderr.startswith(_NETWORK_PREFIX):
        raise SandboxError(
            f"the sandbox failed before the command {argv[0]!r} ran: "
            + _failure_cause(run, limits.timeout)
        )
    first, _, stderr = stderr.partition(b"\n")
    network = first[len(_NETWORK_PREFIX) :].decode(errors="replace")
    if stderr.startswith(_EXEC_FAILED_PREFIX):
        cause = stderr[len(_EXEC_FAILED_PREFIX) :].decode(errors="replace").strip()
        raise SandboxError(f"the sandbox could not start the command: {cause}")
    return CommandResult(
        exit_code=None if run.timed_out else run.exit_code,
        timed_out=run.timed_out,
        stdout=run.stdout.decode(errors="replace"),
        stderr=stderr.decode(errors="replace"),
        duration_s=run.duration_s,
        network_isolated=network == "ok",
        network_detail=network,
        isolation=run.isolation,
        memory_limit_hit=run.oom_kills > 0,
        memory_peak_bytes=run.memory_peak,
    )


def _run_process(
    child_args: list[str],
    stdin_data: bytes,
    limits: SandboxLimits,
    *,
    result_fds: tuple[int, int] | None = None,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
) -> _Run:
    """Run the sandbox script with ``child_args``, isolated as ``limits.isolation`` says."""
    if limits.isolation == "none":
        plain = {"max_open_files": limits.max_open_files}
        launch = [sys.executable, "-I", "-S", _LAUNCH, json.dumps(plain), "--"]
        return _spawn(
            [*launch, sys.executable, "-I", _CHILD, *child_args],
            stdin_data,
            limits,
            result_fds=result_fds,
            cwd=cwd,
            env=env,
            isolation="none: a plain child process with resource limits only",
        )
    inner = [sys.executable, "-I", f"{CHILD_DIR}/{Path(_CHILD).name}", *child_args]
    uid = host_uid()
    stage = Staging(dropped=uid is not None)

    seccomp_fd = seccomp_memfd()
    try:
        writable = str(cwd) if cwd is not None else None
        argv, account, scratch = isolated_argv(inner, limits, stage, seccomp_fd, writable)
        memory = limits.run_memory_mb * _MIB
        with open_cgroup(limits.max_processes + _OWN_PROCESSES, memory) as group:
            account += _cgroup_account(group, limits)
            launch = launch_argv(argv, group, limits, stage, scratch, uid)
            lent = lent_to(cwd, uid) if uid is not None and cwd is not None else None
            with lent or contextlib.nullcontext():
                try:
                    run = _spawn(
                        launch,
                        stdin_data,
                        limits,
                        result_fds=result_fds,
                        cwd=cwd or Path("/"),
                        env=env,
                        isolation=account,
                        scratch=False,
                        extra_fds=(seccomp_fd,),
                    )
                finally:
                    # Nothing of the run may touch the checkout once it is handed back.
                    group.kill()
            run.oom_kills = group.oom_kills()
            run.memory_peak = group.memory_peak()
            run.memory_limit = group.memory_bytes
            return run
    finally:
        os.close(seccomp_fd)
        stage.remove()


def _spawn(
    argv: list[str],
    stdin_data: bytes,
    limits: SandboxLimits,
    *,
    result_fds: tuple[int, int] | None,
    cwd: Path | None,
    env: dict[str, str] | None,
    isolation: str,
    scratch: bool = True,
    extra_fds: tuple[int, ...] = (),
) -> _Run:
    workdir = tempfile.mkdtemp(prefix="aieval-sandbox-") if cwd is None and scratch else None
    started = time.monotonic()
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=cwd if cwd is not None else workdir,
            env=env if env is not None else sandbox_env(),
            pass_fds=((result_fds[1],) if result_fds else ()) + extra_fds,
            start_new_session=True,
            close_fds=True,
        )
    except OSError as exc:
        if workdir:
            shutil.rmtree(workdir, ignore_errors=True)
        raise ConfigError(f"cannot start the sandbox process {argv[0]!r}: {exc}") from exc
    if result_fds:
        os.close(result_fds[1])
    try:
        run = _collect(proc, stdin_data, limits, result_fds[0] if result_fds else None, started)
    finally:
        _kill_group(proc)
        if workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    run.duration_s = time.monotonic() - started
    run.isolation = isolation
    return run


def _collect(
    proc: subprocess.Popen[bytes],
    stdin_data: bytes,
    limits: SandboxLimits,
    result_fd: int | None,
    started: float,
) -> _Run:
    assert proc.stdin and proc.stdout and proc.stderr
    with contextlib.suppress(BrokenPipeError):
        proc.stdin.write(stdin_data)
    with contextlib.suppress(BrokenPipeError):
        proc.stdin.close()
    run = _Run()
    buffers = {"stdout": bytearray(), "stderr": bytearray(), "result": bytearray()}
    caps = {
        "stdout": limits.max_output_bytes,
        "stderr": limits.max_output_bytes,
        "result": 1_000_000,
    }
    selector = selectors.DefaultSelector()
    selector.register(proc.stdout, selectors.EVENT_READ, "stdout")
    selector.register(proc.stderr, selectors.EVENT_READ, "stderr")
    if result_fd is not None:
        selector.register(result_fd, selectors.EVENT_READ, "result")
    # With a result channel, the candidate's clock starts at the harness's ready line (the
    # first line on it, written before any candidate code runs); the start has a grace period.
    deadline = started + limits.timeout + (START_GRACE_S if result_fd is not None else 0.0)
    ready = result_fd is None
    drain_until: float | None = None
    while selector.get_map():
        now = time.monotonic()
        if proc.poll() is not None and drain_until is None:
            # Descendants may hold the pipes open forever; stop them and drain what is left.
            drain_until = now + _DRAIN_GRACE_S
            _kill_group(proc)
        limit = deadline if drain_until is None else min(deadline, drain_until)
        if now >= limit:
            run.timed_out = now >= deadline and drain_until is None
            break
        for key, _ in selector.select(timeout=min(0.05, limit - now)):
            name = key.data
            chunk = os.read(key.fd, 65536)
            if not chunk:
                selector.unregister(key.fileobj)
                continue
            room = caps[name] - len(buffers[name])
            if len(chunk) > room:
                run.truncated = run.truncated or name != "result"
            buffers[name] += chunk[: max(room, 0)]
            if not ready and b"\n" in buffers["result"]:
                ready = True
                deadline = time.monotonic() + limits.timeout
    selector.close()
    _kill_group(proc)
    run.exit_code = proc.wait()
    run.stdout, run.stderr, run.result = (bytes(buffers[n]) for n in ("stdout", "stderr", "result"))
    return run


@functools.cache
def _others_can_run_python() -> bool:
    """Whether an unprivileged user could start this interpreter and the sandbox script.

    A root harness runs candidates as ``nobody`` only when that can work, e.g. not when
    Python lives under a private home directory.
    """
    roots = {os.path.realpath(sys.executable), os.path.realpath(sys.base_prefix), _CHILD}
    for path in roots:
        current = Path(path)
        for part in [current, *current.parents]:
            try:
                mode = part.stat().st_mode
            except OSError:
                return False
            needed = stat.S_IXOTH if part != current else stat.S_IROTH
            if part == current and path != _CHILD:
                needed |= stat.S_IXOTH
            if mode & needed != needed:
                return False
    return True


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)


def _authentic(result: bytes, nonce: bytes) -> tuple[dict[str, Any] | None, bool, int]:
    """The verdict whose HMAC verifies, whether the harness signed that it was ready (before
    any candidate code ran), and how many lines on the channel did not verify."""
    forged = 0
    verdict = None
    ready = False
    for line in result.splitlines():
        tag, _, body = line.partition(b" ")
        expected = hmac.new(nonce, body, hashlib.sha256).hexdigest().encode()
        if verdict is None and hmac.compare_digest(tag, expected):
            with contextlib.suppress(ValueError):
                message = json.loads(body)
                if message == _READY and not ready:
                    ready = True
                else:
                    verdict = message
                continue
        forged += 1
    return (verdict if isinstance(verdict, dict) else None), ready, forged


def _failure_cause(run: _Run, limit_s: float) -> str:
    """Why a run produced nothing: the wall clock, or the last line it wrote to stderr."""
    if run.timed_out:
        return f"it did not start within {limit_s:g} s"
    lines = run.stderr.decode(errors="replace").strip().splitlines()
    last = lines[-1][:300] if lines else "no message on stderr"
    return f"exit code {run.exit_code}: {last}"


def _verdict(run: _Run, nonce: bytes, limits: SandboxLimits, total: int) -> ExecutionResult:
    verdict, ready, forged = _authentic(run.result, nonce)
    common: dict[str, Any] = {
        "stdout": run.stdout.decode(errors="replace"),
        "stderr": run.stderr.decode(errors="replace"),
        "duration_s": run.duration_s,
        "exit_code": run.exit_code,
        "output_truncated": run.truncated,
        "tests_total": total,
    }
    status: ExecutionStatus
    if not ready:
        # Nothing of the candidate ran: whatever happened is the sandbox's failure, not its.
        status = "sandbox_error"
        cause = _failure_cause(run, limits.timeout + START_GRACE_S)
        detail = f"the sandbox failed before the candidate ran ({cause}"
        if verdict is not None:
            detail += f"; the harness reported {verdict.get('detail', '')!s:.200}"
        detail += ")"
        verdict = None
    elif run.timed_out:
        status, detail = "timeout", f"no verdict within the {limits.timeout:g} s wall-clock limit"
        verdict = None
    elif verdict is None or verdict.get("status") not in _STATUSES:
        status = "error"
        detail = f"the harness returned no authentic verdict (exit code {run.exit_code})"
        if run.stderr:
            detail += ": " + run.stderr.decode(errors="replace").strip().splitlines()[-1][:300]
    else:
        status, detail = verdict["status"], str(verdict.get("detail", ""))
    if run.oom_kills and run.memory_limit is not None:
        killed = (
            f"the run's memory cgroup ({run.memory_limit // _MIB} MiB) killed "
            f"{run.oom_kills} process(es)"
        )
        if status in ("failed", "error", "timeout"):
            status, detail = "memory_limit", f"{killed}; {detail}"
        else:
            detail += f" [{killed}]"
    if forged:
        detail += f" [ignored {forged} unauthenticated line(s) on the result channel]"
    network = str(verdict.get("network", "unknown")) if verdict else "unknown"
    return ExecutionResult(
        status=status,
        detail=detail,
        network_isolated=network == "ok",
        network_detail=network,
        tests_passed=int(verdict.get("passed", 0)) if verdict else 0,
        isolation=run.isolation,
        memory_peak_bytes=run.memory_peak,
        **common,
    )
