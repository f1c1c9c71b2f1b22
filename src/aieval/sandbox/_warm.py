"""Warm sandboxes: one bubblewrap sandbox serves many programs, each in a fresh forked process.

A warm sandbox is started like a cold run (its own cgroup, seccomp filter, scratch tmpfs and
uid) but runs ``_child.py warm``, which reads one job per line and answers on the result
channel with lines signed by that job's key: ``ready``, the verdict, then ``done`` (with
``recycle`` set when the sandbox must not serve another program). Sandboxes are kept idle per
:class:`SandboxLimits` between executions and replaced after any anomaly, a timeout, or
:data:`WARM_PROGRAMS` programs.
"""

from __future__ import annotations

import atexit
import contextlib
import hashlib
import hmac
import json
import os
import selectors
import signal
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from aieval.errors import ConfigError
from aieval.sandbox._bwrap import CHILD_DIR, bwrap_version, host_uid
from aieval.sandbox._cgroup import Cgroup, open_cgroup
from aieval.sandbox._limits import SandboxLimits, sandbox_env
from aieval.sandbox._seccomp import syscall_number
from aieval.sandbox._setup import (
    CHILD,
    MIB,
    START_GRACE_S,
    Run,
    Staging,
    cgroup_account,
    isolated_argv,
    launch_argv,
    seccomp_memfd,
)

__all__ = ["WARM_PROGRAMS", "run_warm"]

#: Programs one warm sandbox serves before it is replaced by a fresh one.
WARM_PROGRAMS = 100
# The sandbox's own processes: bubblewrap's two, the harness, the zygote, the judge and the
# worker (a cold run has no zygote and no judge); the candidate may start max_processes more.
_OWN_PROCESSES = 6
# After the verdict, the harness checks and cleans the sandbox within this long.
_DONE_GRACE_S = 10.0
_DRAIN_S = 0.2
# Idle sandboxes kept in all (the least recently used are closed beyond this), and how long
# one may stay idle before it is closed.
_IDLE_MAX = max(4, 2 * (os.cpu_count() or 1))
_IDLE_S = 60.0


class _Pool:
    """One running warm sandbox and its cgroup."""

    def __init__(self, limits: SandboxLimits) -> None:
        self.limits = limits
        self.served = 0
        self.closed = False
        self._stack = contextlib.ExitStack()
        try:
            self._start()
        except BaseException:
            self._stack.close()
            raise

    def _start(self) -> None:
        limits = self.limits
        result_r, result_w = os.pipe()
        self._result_fd = result_r
        self._stack.callback(os.close, result_r)
        inner = [sys.executable, "-I", f"{CHILD_DIR}/{Path(CHILD).name}", "warm", str(result_w)]
        uid = host_uid()
        stage = Staging(dropped=uid is not None)
        self._stack.callback(stage.remove)

        seccomp_fd = seccomp_memfd()
        try:
            argv, account, scratch = isolated_argv(inner, limits, stage, seccomp_fd)
            memory = limits.run_memory_mb * MIB
            group = self._stack.enter_context(
                open_cgroup(limits.max_processes + _OWN_PROCESSES, memory)
            )
            self.group: Cgroup = group
            account += cgroup_account(group, limits)
            launch = launch_argv(argv, group, limits, stage, scratch, uid)
            try:
                # bubblewrap dies with the thread that started it (--die-with-parent), so a
                # sandbox that outlives this call is started from a thread that lives as long
                # as the process
                self.proc = (
                    _keeper()
                    .submit(
                        subprocess.Popen,
                        launch,
                        stdin=subprocess.PIPE,
                        stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE,
                        cwd="/",
                        env=sandbox_env(),
                        pass_fds=(result_w, seccomp_fd),
                        start_new_session=True,
                        close_fds=True,
                    )
                    .result()
                )
            except OSError as exc:
                raise ConfigError(f"cannot start the sandbox process {launch[0]!r}: {exc}") from exc
            self._stack.callback(self._stop)
        finally:
            os.close(seccomp_fd)
            os.close(result_w)
        self.isolation = (
            account + f"; warm: a fresh forked process per program, {WARM_PROGRAMS} per sandbox"
        )
        self._selector = selectors.DefaultSelector()
        self._stack.callback(self._selector.close)
        assert self.proc.stdout and self.proc.stderr
        self._selector.register(self.proc.stdout, selectors.EVENT_READ, "stdout")
        self._selector.register(self.proc.stderr, selectors.EVENT_READ, "stderr")
        self._selector.register(result_r, selectors.EVENT_READ, "result")
        self._pending = b""  # a result line not yet complete
        start = {
            "limits": limits.for_child(),
            "isolated": True,
            "programs": WARM_PROGRAMS,
            # the harness reads its and the zygote's I/O priority (the C library has no call)
            "ioprio_get": syscall_number("ioprio_get"),
        }
        self._send(start)

    def _send(self, message: dict[str, Any]) -> bool:
        assert self.proc.stdin
        try:
            self.proc.stdin.write(json.dumps(message).encode() + b"\n")
            self.proc.stdin.flush()
        except OSError:
            return False
        return True

    def _stop(self) -> None:
        self.group.kill()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()

    def close(self) -> None:
        """Kill the sandbox and remove its cgroup (idempotent)."""
        if not self.closed:
            self.closed = True
            self._stack.close()

    def run(self, job: dict[str, Any], nonce: bytes) -> tuple[Run, bool, bool]:
        """Run one job; the run, whether the sandbox may serve another, and whether the
        harness signed that it was ready."""
        limits = self.limits
        run = Run(isolation=self.isolation)
        buffers = {"stdout": bytearray(), "stderr": bytearray()}
        result = bytearray()
        oom_before = self.group.oom_kills()
        peak_known = self.group.reset_peak()
        started = time.monotonic()
        self.served += 1
        alive = self._send({**job, "nonce": nonce.hex()})
        deadline = started + limits.timeout + START_GRACE_S
        ready = verdict = False
        done: dict[str, Any] | None = None
        while alive and done is None:
            now = time.monotonic()
            if now >= deadline:
                run.timed_out = not verdict
                break
            for key, _ in self._selector.select(timeout=min(0.05, deadline - now)):
                chunk = os.read(key.fd, 65536)
                if key.data != "result":
                    if not chunk:
                        self._selector.unregister(key.fileobj)
                    self._keep(buffers[key.data], chunk, run)
                    continue
                if not chunk:
                    alive = False  # the harness and its judges are gone
                    break
                lines = (self._pending + chunk).split(b"\n")
                self._pending = lines.pop()
                for line in lines:
                    message = _signed(line, nonce)
                    if message is not None and "done" in message:
                        done = message
                        continue
                    result += line + b"\n"
                    if message == {"ready": True} and not ready:
                        ready = True
                        deadline = time.monotonic() + limits.timeout
                    elif message is not None and ready and not verdict:
                        verdict = True
                        deadline = max(deadline, time.monotonic() + _DONE_GRACE_S)
        keep = done is not None and done.get("recycle") is None and not run.timed_out
        if keep:
            self._drain(buffers, run, until_eof=False)
        else:
            self.group.kill()
            self._drain(buffers, run, until_eof=True)
        run.oom_kills = self.group.oom_kills() - oom_before
        run.memory_peak = self.group.memory_peak() if peak_known else None
        run.memory_limit = self.group.memory_bytes
        if not keep:
            self.close()
        code = done.get("exit_code") if done is not None else None
        run.exit_code = code if isinstance(code, int) else self.proc.poll()
        run.stdout, run.stderr = bytes(buffers["stdout"]), bytes(buffers["stderr"])
        run.result = bytes(result)
        run.duration_s = time.monotonic() - started
        return run, keep, ready

    def _keep(self, buffer: bytearray, chunk: bytes, run: Run) -> None:
        room = self.limits.max_output_bytes - len(buffer)
        if len(chunk) > room:
            run.truncated = True
        buffer += chunk[: max(room, 0)]

    def _drain(self, buffers: dict[str, bytearray], run: Run, *, until_eof: bool) -> None:
        """Read what is left on stdout and stderr: what is there now, or up to end of file."""
        streams = {"stdout", "stderr"}
        until = time.monotonic() + _DRAIN_S
        while streams:
            wait = max(0.0, until - time.monotonic()) if until_eof else 0.0
            events = self._selector.select(timeout=wait)
            if not events:
                break
            for key, _ in events:
                chunk = os.read(key.fd, 65536)
                if key.data == "result":
                    if not chunk:
                        self._selector.unregister(key.fileobj)
                    continue
                if not chunk:
                    self._selector.unregister(key.fileobj)
                    streams.discard(key.data)
                    continue
                self._keep(buffers[key.data], chunk, run)


def _signed(line: bytes, nonce: bytes) -> dict[str, Any] | None:
    """The message of a result line whose HMAC verifies under ``nonce``, else ``None``."""
    tag, _, body = line.partition(b" ")
    expected = hmac.new(nonce, body, hashlib.sha256).hexdigest().encode()
    if not hmac.compare_digest(tag, expected):
        return None
    try:
        message = json.loads(body)
    except ValueError:
        return None
    return message if isinstance(message, dict) else None


_LOCK = threading.Lock()
# Idle sandboxes per set of limits, each with when it was returned (oldest first).
_IDLE: dict[SandboxLimits, list[tuple[float, _Pool]]] = {}


def _checkout(limits: SandboxLimits) -> _Pool:
    with _LOCK:
        stale = _expire(time.monotonic())
        idle = _IDLE.get(limits, [])
        found = None
        while idle and found is None:
            _since, pool = idle.pop()
            if pool.proc.poll() is None:
                found = pool
            else:
                stale.append(pool)
    for pool in stale:
        pool.close()
    return found if found is not None else _Pool(limits)


def _checkin(pool: _Pool) -> None:
    now = time.monotonic()
    with _LOCK:
        _IDLE.setdefault(pool.limits, []).append((now, pool))
        stale = _expire(now)
        while sum(len(idle) for idle in _IDLE.values()) > _IDLE_MAX:
            oldest = min(_IDLE, key=lambda limits: _IDLE[limits][0][0])
            stale.append(_IDLE[oldest].pop(0)[1])
            if not _IDLE[oldest]:
                del _IDLE[oldest]
    for old in stale:
        old.close()


def _expire(now: float) -> list[_Pool]:
    """Take the sandboxes idle for longer than ``_IDLE_S`` out of the registry (lock held)."""
    stale = []
    for limits in list(_IDLE):
        kept = [(since, pool) for since, pool in _IDLE[limits] if now - since <= _IDLE_S]
        stale += [pool for since, pool in _IDLE[limits] if now - since > _IDLE_S]
        if kept:
            _IDLE[limits] = kept
        else:
            del _IDLE[limits]
    return stale


def run_warm(job: dict[str, Any], nonce: bytes, limits: SandboxLimits) -> Run:
    """Run one job (``program``, ``tests``, ``entry_point``, ``limits``) in a warm sandbox.

    A sandbox that had served programs and then failed before this one's candidate ran is
    replaced once by a fresh one, so a sandbox that died while idle is never the verdict.
    """
    bwrap_version()  # as a cold run: bubblewrap must (still) be usable here
    while True:
        pool = _checkout(limits)
        fresh = pool.served == 0
        try:
            run, keep, ready = pool.run(job, nonce)
        except BaseException:
            pool.close()
            raise
        if keep:
            _checkin(pool)
        if ready or fresh:
            return run


def close_warm_sandboxes() -> None:
    """Stop every idle warm sandbox of this process."""
    with _LOCK:
        pools = [pool for idle in _IDLE.values() for _since, pool in idle]
        _IDLE.clear()
    for pool in pools:
        with contextlib.suppress(Exception):
            pool.close()


_KEEPER: list[ThreadPoolExecutor] = []


def _keeper() -> ThreadPoolExecutor:
    """The thread warm sandboxes are started from (it lives until the process exits)."""
    with _LOCK:
        if not _KEEPER:
            _KEEPER.append(ThreadPoolExecutor(1, thread_name_prefix="aieval-warm-sandboxes"))
        return _KEEPER[0]


def _forget() -> None:
    """In a forked child: the parent's sandboxes (and its thread) are not ours."""
    global _LOCK
    _LOCK = threading.Lock()
    _IDLE.clear()
    _KEEPER.clear()


atexit.register(close_warm_sandboxes)
os.register_at_fork(after_in_child=_forget)
