"""Warm sandboxes: programs share a sandbox, never each other's files, state or processes,
and every verdict is the one a fresh (cold) sandbox gives."""

from __future__ import annotations

import contextlib
import os
import resource
import textwrap
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from aieval.sandbox import SandboxLimits, _warm, execute
from aieval.sandbox._bwrap import host_uid
from aieval.sandbox._seccomp import syscall_number


def src(text: str) -> str:
    return textwrap.dedent(text)


@pytest.fixture
def limits() -> Iterator[SandboxLimits]:
    """Limits no other test uses, so this test's warm sandboxes are its own."""
    own = SandboxLimits(timeout=4.25, max_processes=12)
    yield own
    with _warm._LOCK:
        pools = _warm._IDLE.pop(own, [])
    for _since, pool in pools:
        pool.close()


def _idle(limits: SandboxLimits) -> list[_warm._Pool]:
    with _warm._LOCK:
        return [pool for _since, pool in _warm._IDLE.get(limits, [])]


# Each leaves something behind that the next program of the same sandbox must not see.
LEFTOVERS = {
    "files": """
        import os
        open("leak.txt", "w").write("secret")
        open("/tmp/leak2.txt", "w").write("secret")
        open("/dev/shm/leak3", "w").write("secret")
        os.makedirs("deep/er", exist_ok=True)
        open("deep/er/leak4", "w").write("secret")
        """,
    "globals and modules": """
        import json, math, sys
        json.LEAK = "secret"
        math.pi = 3
        sys.modules["leak_module"] = json
        sys.path.insert(0, "/tmp/leak")
        """,
    "builtins": """
        import builtins
        builtins.sorted = lambda *args, **kwargs: [42]
        builtins.abs = None
        builtins.LEAK = "secret"
        """,
    "thread": """
        import threading, time
        def spin():
            while True:
                open("thread.txt", "w").write("secret")
                time.sleep(0.001)
        threading.Thread(target=spin, daemon=False).start()
        time.sleep(0.05)
        """,
    "background process": """
        import os, subprocess, time
        subprocess.Popen(["/bin/sh", "-c", "while true; do echo x > child.txt; done"])
        if os.fork() == 0:
            while True:
                open("forked.txt", "w").write("secret")
                time.sleep(0.001)
        time.sleep(0.05)
        """,
}

# What the next program checks: nothing of the leftovers, and no process but the sandbox's.
CHECK = src(
    """
    import builtins, json, math, os, sys
    def staged(path):
        # where the interpreter's installation is bound (a venv under /tmp: a checkout there)
        real = os.path.realpath(path)
        homes = {os.path.realpath(p) for p in (sys.prefix, sys.base_prefix, sys.executable)}
        return any(home == real or home.startswith(real + os.sep) for home in homes)
    def leftovers():
        seen = []
        for root in (".", "/tmp", "/dev/shm"):
            found = [os.path.join(root, name) for name in os.listdir(root)]
            seen += [path for path in found if not staged(path)]
        seen += [name for name in ("LEAK",) if hasattr(json, name) or hasattr(builtins, name)]
        if math.pi != 3.141592653589793 or sorted([2, 1]) != [1, 2] or abs is None:
            seen.append("patched")
        if "leak_module" in sys.modules or "/tmp/leak" in sys.path:
            seen.append("module")
        processes = [p for p in os.listdir("/proc") if p.isdigit()]
        return seen, len(processes)
    """
)


@pytest.mark.parametrize("leftover", LEFTOVERS.values(), ids=LEFTOVERS.keys())
def test_the_next_program_in_the_same_sandbox_sees_nothing_of_the_last(
    leftover: str, limits: SandboxLimits
) -> None:
    baseline = execute(CHECK, "seen, count = leftovers()\nassert seen == [], seen", limits=limits)
    assert baseline.status == "passed", baseline.detail
    (pool,) = _idle(limits)
    first = execute(src(leftover) + "\ndef f():\n    return 1\n", "assert f() == 1", limits=limits)
    assert first.status == "passed", first.detail
    # the same sandbox serves the next program: these leftovers are cleaned, not recycled
    assert _idle(limits) == [pool] and pool.served == 2
    after = execute(CHECK, "seen, count = leftovers()\nprint(seen, count)", limits=limits)
    assert after.status == "passed", after.detail
    assert after.stdout.startswith("[] "), after.stdout
    assert _idle(limits) == [pool] and pool.served == 3
    # as many processes as for the first check: the harness's, the zygote's and this one's
    before = execute(CHECK, "seen, count = leftovers()\nprint(count)", limits=limits)
    assert before.stdout.strip() == after.stdout.split()[-1]


# Each leaves what cannot be cleaned in place: the sandbox is replaced before the next program.
RECYCLED = {
    "setsid daemon": """
        import os, time
        if os.fork() == 0:
            os.setsid()
            while True:
                open("/tmp/daemon.txt", "w").write("secret")
                time.sleep(0.001)
        time.sleep(0.05)
        """,
    "process group escape": """
        import os, time
        if os.fork() == 0:
            os.setpgid(0, 0)
            time.sleep(60)
        time.sleep(0.05)
        """,
    "scratch mode": """
        import os
        os.chmod("/tmp", 0o500)
        """,
    "System V segment": """
        import ctypes
        libc = ctypes.CDLL(None)
        assert libc.shmget(0x1234, 4096, 0o1600) >= 0
        """,
}


@pytest.mark.parametrize("leftover", RECYCLED.values(), ids=RECYCLED.keys())
def test_what_cannot_be_cleaned_recycles_the_sandbox(leftover: str, limits: SandboxLimits) -> None:
    first = execute(src(leftover) + "\ndef f():\n    return 1\n", "assert f() == 1", limits=limits)
    assert first.status == "passed", first.detail
    assert _idle(limits) == []  # closed, not kept
    after = execute(CHECK, "seen, count = leftovers()\nassert seen == [], seen", limits=limits)
    assert after.status == "passed", after.detail
    shm = execute("import os\ndef f():\n    return open('/proc/sysvipc/shm').read()", "print(f())")
    assert "4660" not in shm.stdout  # 0x1234 as /proc lists it


# Verdicts must not depend on the path: each of these, warm and cold.
BROKEN = {
    "canonical": ("def f(x):\n    return x + 1\n", "passed"),
    "wrong": ("def f(x):\n    return x\n", "failed"),
    "raises": ("def f(x):\n    raise ValueError('no')\n", "failed"),
    "syntax error": ("def f(x)\n    return x\n", "error"),
    "timeout": ("def f(x):\n    while True:\n        pass\n", "timeout"),
    "infinite output": ("import sys\ndef f(x):\n    while True:\n        print('y' * 999)\n", None),
    "exit()": ("exit(0)\n", "error"),
    "sys.exit in the call": ("import sys\ndef f(x):\n    sys.exit(0)\n", "failed"),
    "os._exit": ("import os\nos._exit(0)\n", "failed"),
    "os._exit in the call": ("import os\ndef f(x):\n    os._exit(3)\n", "failed"),
    "segfault": ("import ctypes\ndef f(x):\n    return ctypes.string_at(0)\n", "failed"),
    "memory": ("def f(x):\n    return len(bytearray(8 * 1024**3))\n", "memory_limit"),
    "fork bomb": (
        src(
            """
            import os, time
            children = 0
            try:
                while True:
                    if os.fork() == 0:
                        time.sleep(60)
                        os._exit(0)
                    children += 1
            except OSError:
                pass
            def f(x):
                return x + 1 if children <= 16 else children
            """
        ),
        "passed",
    ),
}


@pytest.mark.parametrize("case", BROKEN.values(), ids=BROKEN.keys())
def test_warm_and_cold_give_the_same_verdict(case: tuple[str, str | None]) -> None:
    program, expected = case
    results = {
        warm: execute(
            program,
            "def check(f):\n    assert f(1) == 2\n",
            entry_point="f",
            limits=SandboxLimits(timeout=3, warm=warm),
        )
        for warm in (True, False)
    }
    warm, cold = results[True], results[False]
    assert (warm.status, warm.tests_passed) == (cold.status, cold.tests_passed), (warm, cold)
    if expected is not None:
        assert warm.status == expected, warm.detail
    assert "warm:" in warm.isolation and "warm:" not in cold.isolation
    assert warm.output_truncated == cold.output_truncated


def test_the_warm_path_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AIEVAL_SANDBOX_WARM", "0")
    limits = SandboxLimits(timeout=4.5)
    assert limits.warm is False
    result = execute("def f():\n    return 1", "assert f() == 1", limits=limits)
    assert result.status == "passed" and "warm:" not in result.isolation
    assert limits not in _warm._IDLE
    monkeypatch.setenv("AIEVAL_SANDBOX_WARM", "maybe")
    with pytest.raises(Exception, match="AIEVAL_SANDBOX_WARM"):
        SandboxLimits()


def test_a_sandbox_is_replaced_after_its_quota(
    limits: SandboxLimits, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_warm, "WARM_PROGRAMS", 3)
    served = []
    for _ in range(7):
        result = execute("def f():\n    return 1", "assert f() == 1", limits=limits)
        assert result.status == "passed", result.detail
        served.append(_idle(limits)[0].served if _idle(limits) else 0)
    assert served == [1, 2, 0, 1, 2, 0, 1]


def test_a_sandbox_that_died_while_idle_is_replaced_not_blamed(limits: SandboxLimits) -> None:
    assert execute("def f():\n    return 1", "assert f() == 1", limits=limits).status == "passed"
    (pool,) = _idle(limits)
    pool.group.kill()  # e.g. killed from outside while idle
    pool.proc.wait()
    result = execute("def f():\n    return 1", "assert f() == 1", limits=limits)
    assert result.status == "passed", result.detail
    assert _idle(limits)[0] is not pool


def test_idle_sandboxes_are_bounded_and_expire(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_warm, "_IDLE_MAX", 2)
    _warm.close_warm_sandboxes()
    started = []
    for index in range(3):  # three sets of limits, one sandbox each
        limits = SandboxLimits(timeout=3 + index / 8)
        assert execute("def f():\n    return 1", "assert f() == 1", limits=limits).passed
        started.append(limits)
    with _warm._LOCK:
        assert set(_warm._IDLE) == set(started[1:])  # the oldest was closed
    monkeypatch.setattr(_warm, "_IDLE_S", 0.0)
    assert execute("def f():\n    return 1", "assert f() == 1", limits=started[0]).passed
    with _warm._LOCK:
        assert list(_warm._IDLE) == [started[0]]  # the others expired
    _warm.close_warm_sandboxes()


def test_a_sandbox_outlives_the_thread_that_started_it(limits: SandboxLimits) -> None:
    # bubblewrap's --die-with-parent follows the thread that started it
    results = []
    thread = threading.Thread(
        target=lambda: results.append(
            execute("def f():\n    return 1", "assert f() == 1", limits=limits)
        )
    )
    thread.start()
    thread.join()
    assert results[0].passed, results[0].detail
    (pool,) = _idle(limits)
    again = execute("def f():\n    return 1", "assert f() == 1", limits=limits)
    assert again.passed, again.detail
    assert _idle(limits) == [pool] and pool.served == 2


# A program that tries to change what the sandbox's own processes hand on to the next program:
# their limits, priority, scheduling, CPU affinity and I/O priority (held-out attack: FSIZE
# lowered and SCHED_IDLE on the zygote and the harness made the next correct program fail).
MEDDLER = src(
    """
    import ctypes, os, resource
    from resource import RLIMIT_FSIZE, RLIMIT_NPROC, prlimit
    libc = ctypes.CDLL(None, use_errno=True)
    IOPRIO_SET = {ioprio_set!r}
    def attempt(call):
        try:
            call()
        except OSError as exc:
            return exc.errno
        return 0
    def ioprio(which, who):  # class idle
        if libc.syscall(IOPRIO_SET, which, who, 3 << 13) != 0:
            raise OSError(ctypes.get_errno(), "ioprio_set")
    me = os.getpid()
    others = [int(p) for p in os.listdir("/proc") if p.isdigit() and int(p) != me]
    tried = {{}}
    idle = os.sched_param(0)
    for pid in others:
        tried[f"fsize {{pid}}"] = attempt(lambda: prlimit(pid, RLIMIT_FSIZE, (1, 1)))
        tried[f"nproc {{pid}}"] = attempt(lambda: prlimit(pid, RLIMIT_NPROC, (0, 0)))
        tried[f"nice {{pid}}"] = attempt(lambda: os.setpriority(os.PRIO_PROCESS, pid, 19))
        tried[f"idle {{pid}}"] = attempt(lambda: os.sched_setscheduler(pid, os.SCHED_IDLE, idle))
        tried[f"param {{pid}}"] = attempt(lambda: os.sched_setparam(pid, idle))
        tried[f"affinity {{pid}}"] = attempt(lambda: os.sched_setaffinity(pid, {{0}}))
        if IOPRIO_SET is not None:
            tried[f"ioprio {{pid}}"] = attempt(lambda: ioprio(1, pid))  # IOPRIO_WHO_PROCESS
    # a group or the whole user, named by 0
    tried["nice group"] = attempt(lambda: os.setpriority(os.PRIO_PGRP, 0, 19))
    tried["nice user"] = attempt(lambda: os.setpriority(os.PRIO_USER, 0, 19))
    if IOPRIO_SET is not None:
        tried["ioprio user"] = attempt(lambda: ioprio(3, 0))  # IOPRIO_WHO_USER
    # its own are its own to change
    mine = [
        attempt(lambda: resource.setrlimit(RLIMIT_FSIZE, (4096, 4096))),
        attempt(lambda: prlimit(0, resource.RLIMIT_CORE, (0, 0))),
        attempt(lambda: os.nice(5)),
        attempt(lambda: os.sched_setaffinity(0, os.sched_getaffinity(0))),
        attempt(lambda: prlimit(others[0], RLIMIT_FSIZE)),  # reading another's
    ]
    def f():
        return [len(others), sorted(set(tried.values())), mine]
    """
)
#: the priority and scheduler a sandbox inherits from the process that starts it (a suite run
#: under ``nice`` gives its sandboxes that nice value; a meddler must not change it)
_INHERITED = (os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0))
HONEST = src(
    """
    import os, resource
    def f():
        with open("written.txt", "w") as fh:
            fh.write("x" * 100_000)
        fsize = resource.getrlimit(resource.RLIMIT_FSIZE)
        return [fsize, os.getpriority(os.PRIO_PROCESS, 0), os.sched_getscheduler(0)]
    """
)


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_a_program_cannot_change_the_sandboxs_own_limits_or_priority(warm: bool) -> None:
    own = SandboxLimits(timeout=4.125, warm=warm)
    try:
        meddler = MEDDLER.format(ioprio_set=syscall_number("ioprio_set"))
        attack = execute(meddler, "print(f())", limits=own)
        assert attack.status == "passed", attack.detail
        others, refused, mine = eval(attack.stdout)
        assert others >= 2  # the sandbox's init and harness at least (and a warm zygote)
        assert refused == [1], attack.stdout  # every try: EPERM
        assert mine == [0] * 5
        pool = _idle(own)
        assert len(pool) == (1 if warm else 0)
        honest = execute(HONEST, "print(f())", limits=own)
        assert honest.status == "passed", honest.detail
        assert eval(honest.stdout) == [(16 * 1024 * 1024,) * 2, *_INHERITED]
        assert _idle(own) == pool  # nothing changed: the same sandbox served both
    finally:
        with _warm._LOCK:
            pools = _warm._IDLE.pop(own, [])
        for _since, idle in pools:
            idle.close()


def _descendants(pid: int) -> dict[int, bytes]:
    """Host pids below ``pid``, with their command lines."""
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            with contextlib.suppress(OSError, IndexError, ValueError):
                stat = Path(f"/proc/{entry}/stat").read_text()
                parents[int(entry)] = int(stat.rpartition(")")[2].split()[1])
    found: dict[int, bytes] = {}
    pending = [pid]
    while pending:
        parent = pending.pop()
        for child, its_parent in parents.items():
            if its_parent == parent:
                with contextlib.suppress(OSError):
                    found[child] = Path(f"/proc/{child}/cmdline").read_bytes()
                pending.append(child)
    return found


def test_a_change_to_the_sandboxs_own_processes_replaces_the_sandbox(
    limits: SandboxLimits,
) -> None:
    # The belt behind the filter: whatever changed the harness's or the zygote's limits or
    # scheduling (here, this test from outside), the sandbox is not used for another program.
    assert execute("def f():\n    return 1", "assert f() == 1", limits=limits).passed
    (pool,) = _idle(limits)
    inside = _descendants(pool.proc.pid)
    zygote = next(pid for pid, cmd in inside.items() if b"zygote" in cmd.split(b"\0"))
    # the harness is the zygote's parent (its own parent, the sandbox's init, runs "warm" too)
    harness = int(Path(f"/proc/{zygote}/stat").read_text().rpartition(")")[2].split()[1])
    assert b"warm" in inside[harness].split(b"\0")
    # as the sandbox's host uid (a root test may lack CAP_SYS_RESOURCE), in a forked child
    uid = host_uid()
    child = os.fork()
    if child == 0:
        code = 1
        try:
            if uid is not None:
                os.setgroups([])
                os.setresgid(uid, uid, uid)
                os.setresuid(uid, uid, uid)
            resource.prlimit(zygote, resource.RLIMIT_FSIZE, (1, 1))
            os.setpriority(os.PRIO_PROCESS, harness, 19)
            os.sched_setscheduler(harness, os.SCHED_IDLE, os.sched_param(0))
            code = 0
        finally:
            os._exit(code)
    assert os.waitstatus_to_exitcode(os.waitpid(child, 0)[1]) == 0  # every change was made
    # a program that does not write: it passes, and the sandbox is replaced after it
    assert execute("def f():\n    return 1", "assert f() == 1", limits=limits).passed
    assert _idle(limits) == [] and pool.closed
    honest = execute(HONEST, "print(f())", limits=limits)
    assert honest.status == "passed", honest.detail
    assert eval(honest.stdout) == [(16 * 1024 * 1024,) * 2, *_INHERITED]
