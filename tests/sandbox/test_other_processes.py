"""A program reaches no process of its sandbox but its own descendants: not the sandbox's init
(pid 1), not the harness, not a warm sandbox's zygote: neither their memory, nor their
descriptors (a warm sandbox's job pipe carries the next program's key), nor ``ptrace``."""

from __future__ import annotations

import textwrap

import pytest

from aieval.sandbox import SandboxLimits, _warm, execute
from aieval.sandbox._seccomp import syscall_number

# Held-out attack: pidfd_getfd on bubblewrap's (dumpable) init handed the program its stdin, a
# warm sandbox's job pipe, and /proc/1/mem its memory. Every way in is tried on every process.
REACHER = textwrap.dedent(
    """
    import ctypes, os
    libc = ctypes.CDLL(None, use_errno=True)
    CALLS = {calls!r}
    def refused(call):
        try:
            call()
        except OSError as exc:
            return exc.errno
        return 0
    def raw(name, *args):
        if libc.syscall(CALLS[name], *args) < 0:
            raise OSError(ctypes.get_errno(), name)
    def read(path):
        with open(path, "rb") as fh:
            fh.read(1)
    me = os.getpid()
    others = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != me]
    tried = {{}}
    for pid in others:
        tried[f"pidfd_open {{pid}}"] = refused(lambda: raw("pidfd_open", pid, 0))
        tried[f"ptrace {{pid}}"] = refused(lambda: raw("ptrace", 16, pid, 0, 0))  # ATTACH
        tried[f"kcmp {{pid}}"] = refused(lambda: raw("kcmp", me, pid, 0, 0, 0))  # KCMP_FILE
        for name in ("mem", "environ", "fd/0", "fd/1"):
            tried[f"{{name}} {{pid}}"] = refused(lambda: read(f"/proc/{{pid}}/{{name}}"))
        tried[f"fd list {{pid}}"] = refused(lambda: os.listdir(f"/proc/{{pid}}/fd"))
    # pidfd_getfd with a pidfd of its own (a child's): refused whatever the target
    child = os.fork()
    if child == 0:
        os._exit(0)
    tried["pidfd_open of its own child"] = refused(lambda: raw("pidfd_open", child, 0))
    tried["pidfd_getfd"] = refused(lambda: raw("pidfd_getfd", 0, 0, 0))
    os.waitpid(child, 0)
    def f():
        return [1 in others, {{k: v for k, v in tried.items() if v not in (1, 13)}}]
    """
)
CALLS = ("pidfd_open", "pidfd_getfd", "ptrace", "kcmp")


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_a_program_reaches_no_other_process_of_its_sandbox(warm: bool) -> None:
    own = SandboxLimits(timeout=4.375, warm=warm)
    try:
        calls = {name: syscall_number(name) for name in CALLS}
        attack = execute(REACHER.format(calls=calls), "print(f())", limits=own)
        assert attack.status == "passed", attack.detail
        sees_init, reached = eval(attack.stdout)
        assert sees_init  # pid 1 is there to try: the sandbox's init
        assert reached == {}, attack.stdout  # every try: EPERM or EACCES
        with _warm._LOCK:
            pools = [pool for _since, pool in _warm._IDLE.get(own, [])]
        assert len(pools) == (1 if warm else 0)
        honest = execute("def f():\n    return 3", "assert f() == 3", limits=own)
        assert honest.status == "passed", honest.detail
        with _warm._LOCK:
            assert [pool for _since, pool in _warm._IDLE.get(own, [])] == pools  # same one
    finally:
        with _warm._LOCK:
            idle = _warm._IDLE.pop(own, [])
        for _since, pool in idle:
            pool.close()


SIGNALLER = textwrap.dedent(
    """
    import os, signal
    for sig in ("SIGINT", "SIGTERM", "SIGHUP", "SIGUSR1", "SIGSTOP", "SIGKILL"):
        os.kill(1, getattr(signal, sig))
    def f():
        return 1
    """
)


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_signals_to_the_sandboxs_init_change_nothing(warm: bool) -> None:
    own = SandboxLimits(timeout=4.625, warm=warm)
    try:
        attack = execute(SIGNALLER, "assert f() == 1", limits=own)
        assert attack.status == "passed", attack.detail  # the sandbox lived on
        with _warm._LOCK:
            pools = [pool for _since, pool in _warm._IDLE.get(own, [])]
        assert len(pools) == (1 if warm else 0)
        honest = execute("def f():\n    return 3", "assert f() == 3", limits=own)
        assert honest.status == "passed", honest.detail
        with _warm._LOCK:
            assert [pool for _since, pool in _warm._IDLE.get(own, [])] == pools  # same one
    finally:
        with _warm._LOCK:
            idle = _warm._IDLE.pop(own, [])
        for _since, pool in idle:
            pool.close()
