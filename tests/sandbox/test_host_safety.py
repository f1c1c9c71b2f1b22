"""Nothing of a run writes to the host, and a run's memory is bounded however it is taken.

Run as whoever runs the tests: root in CI, where the sandbox must still map to an unprivileged
host uid, see `/proc` read-only and stay within its memory cgroup.
"""

from __future__ import annotations

import os
import platform
import secrets
import shutil
import stat
import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest

from aieval.errors import ConfigError
from aieval.sandbox import SandboxLimits, execute, run_command
from aieval.sandbox._bwrap import HOST_UID
from aieval.sandbox._seccomp import seccomp_program

_MIB = 1024 * 1024
EXPECTED_HOST_UID = HOST_UID if os.geteuid() == 0 else os.getuid()


def src(text: str) -> str:
    return textwrap.dedent(text)


# --- no write to the host -------------------------------------------------------------------


def test_no_file_under_proc_sys_or_the_rest_of_proc_opens_for_writing() -> None:
    program = src(
        """
        import os
        def probe():
            tried, opened = 0, []
            for folder, dirs, files in os.walk('/proc'):
                if folder == '/proc':
                    # the sandbox's own processes; everything else of /proc is walked
                    own = ('self', 'thread-self')
                    dirs[:] = [d for d in dirs if not d.isdigit() and d not in own]
                for name in files:
                    path = os.path.join(folder, name)
                    tried += 1
                    try:
                        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
                    except OSError:
                        continue
                    os.close(fd)  # nothing is written
                    opened.append(path)
            for path in ('/proc/self/oom_score_adj', '/proc/self/attr/current'):
                try:
                    os.close(os.open(path, os.O_WRONLY))
                    opened.append(path)
                except OSError:
                    pass
            return [tried, opened]
        """
    )
    limits = SandboxLimits(timeout=120)
    result = execute(program, "print(probe())", limits=limits)
    assert result.status == "passed", result.detail
    tried, opened = eval(result.stdout)  # plain literals printed above
    sysctls = sum(1 for _ in Path("/proc/sys").rglob("*"))
    assert tried > min(sysctls, 500)  # the walk reached /proc/sys
    assert opened == []


def _find_process(marker: str, deadline: float) -> int:
    """The host pid whose command line holds ``marker`` (waits until the run started it)."""
    while time.monotonic() < deadline:
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
                except OSError:
                    continue
                if marker.encode() in cmdline.split(b"\0"):
                    return int(entry)
        time.sleep(0.05)
    raise AssertionError(f"no process with {marker} appeared")


def _host_ids(pid: int) -> list[int]:
    status = Path(f"/proc/{pid}/status").read_text()
    uids = next(line for line in status.splitlines() if line.startswith("Uid:"))
    gids = next(line for line in status.splitlines() if line.startswith("Gid:"))
    return [int(v) for v in uids.split()[1:] + gids.split()[1:]]


def test_the_candidate_runs_as_an_unprivileged_host_uid() -> None:
    marker = f"{secrets.randbelow(10**6) + 10**6}.5"
    program = f"import subprocess\nM = '{marker}'\n"
    program += "def hold():\n    return subprocess.run(['sleep', M]).returncode"
    found: dict[str, object] = {}

    def run() -> None:
        found["result"] = execute(program, "print(hold())", limits=SandboxLimits(timeout=300))

    worker = threading.Thread(target=run)
    worker.start()
    try:
        pid = _find_process(marker, time.monotonic() + 240)
        ids = _host_ids(pid)
    finally:
        if "pid" in locals():
            os.kill(pid, 9)
        worker.join()
    assert ids == [EXPECTED_HOST_UID] * 8
    assert 0 not in ids
    result = found["result"]
    assert result.status == "passed", result.detail  # type: ignore[attr-defined]


def test_a_checkout_is_written_as_the_unprivileged_uid_and_handed_back(tmp_path: Path) -> None:
    checkout = tmp_path / "checkout"
    (checkout / "pkg").mkdir(parents=True)
    (checkout / "pkg" / "mod.py").write_text("x = 1\n")
    kept = checkout / "kept-by-nobody"
    kept.mkdir()
    if os.geteuid() == 0:
        os.chown(kept, 65534, 65534)
    owner = (os.stat(checkout).st_uid, os.stat(checkout).st_gid)
    marker = f"{secrets.randbelow(10**6) + 10**6}.25"
    script = (
        "echo new > made && echo changed >> pkg/mod.py && cp /bin/true setid && chmod 6755 setid"
        f" && exec sleep {marker}"
    )
    found: dict[str, object] = {}

    def run() -> None:
        found["result"] = run_command(
            ["/bin/sh", "-c", script], cwd=checkout, limits=SandboxLimits(timeout=300)
        )

    worker = threading.Thread(target=run)
    worker.start()
    try:
        pid = _find_process(marker, time.monotonic() + 240)
        ids = _host_ids(pid)
        during = os.stat(checkout / "made").st_uid
    finally:
        if "pid" in locals():
            os.kill(pid, 9)
        worker.join()
    assert ids == [EXPECTED_HOST_UID] * 8 and during == EXPECTED_HOST_UID != 0
    done = found["result"]
    assert done.exit_code in (128 + 9, -9), done  # type: ignore[attr-defined]
    # Handed back: the checkout's owner owns it all again, no set-ID bit survives.
    for path in (checkout, checkout / "made", checkout / "pkg" / "mod.py", checkout / "setid"):
        info = os.lstat(path)
        assert (info.st_uid, info.st_gid) == owner, path
    assert os.stat(checkout / "setid").st_mode & (stat.S_ISUID | stat.S_ISGID) == 0
    assert (checkout / "pkg" / "mod.py").read_text() == "x = 1\nchanged\n"
    assert os.stat(kept).st_uid == (65534 if os.geteuid() == 0 else owner[0])


@pytest.mark.skipif(platform.machine() != "x86_64", reason="system call numbers of x86-64")
def test_system_calls_no_candidate_needs_are_refused() -> None:
    program = src(
        """
        import ctypes, os
        libc = ctypes.CDLL(None, use_errno=True)
        CALLS = {'keyctl': 250, 'bpf': 321, 'perf_event_open': 298, 'userfaultfd': 323,
                 'io_uring_setup': 425, 'clone3': 435, 'unshare': 272, 'setns': 308,
                 'mount': 165, 'ptrace': 101, 'add_key': 248, 'kexec_load': 246,
                 'mq_open': 240, 'mq_unlink': 241}
        def refused():
            out = {}
            for name, number in CALLS.items():
                res = libc.syscall(number, 0, 0, 0, 0, 0)
                out[name] = [res, ctypes.get_errno()]
            # unshare(CLONE_NEWUSER) and a clone with CLONE_NEWUSER
            out['unshare-user'] = [libc.unshare(0x10000000), ctypes.get_errno()]
            res = libc.syscall(56, 0x10000000 | 17, 0, 0, 0, 0)  # clone(CLONE_NEWUSER | SIGCHLD)
            out['clone-newuser'] = [res, ctypes.get_errno()]
            return out
        """
    )
    result = execute(program, "print(refused())")
    assert result.status == "passed", result.detail
    assert "seccomp filter" in result.isolation
    outcome = eval(result.stdout)
    for name, (res, err) in outcome.items():
        assert res == -1, name
        assert err == (38 if name == "clone3" else 1), (name, err)  # ENOSYS, EPERM


def test_the_filter_is_a_bpf_program() -> None:
    program = seccomp_program()
    assert len(program) % 8 == 0 and len(program) > 8 * 20


def test_open_files_are_capped_per_process() -> None:
    program = src(
        """
        import os, resource
        def files():
            held = []
            try:
                while len(held) < 5000:
                    held.append(os.open('/dev/null', os.O_RDONLY))
            except OSError as exc:
                return [list(resource.getrlimit(resource.RLIMIT_NOFILE)), len(held), exc.errno]
            return [list(resource.getrlimit(resource.RLIMIT_NOFILE)), len(held), 0]
        """
    )
    result = execute(program, "print(files())", limits=SandboxLimits(max_open_files=100))
    assert result.status == "passed", result.detail
    limit, held, err = eval(result.stdout)
    assert limit == [100, 100] and held < 100 and err == 24  # EMFILE


# --- memory bounded per run --------------------------------------------------------------------

LIMITS = SandboxLimits(
    memory_mb=128, max_disk_mb=16, max_file_mb=1024, timeout=240, max_open_files=4096
)
RUN_LIMIT = LIMITS.run_memory_mb * _MIB

HOGS = {
    "memfd": """
        import os
        def hog():
            fd = os.memfd_create('hog')
            held = 0
            while held < 384 * 1048576:
                os.write(fd, b'x' * 1048576)
                held += 1048576
            return held
        """,
    "sysv": """
        import ctypes
        def hog():
            libc = ctypes.CDLL(None, use_errno=True)
            libc.shmat.restype = ctypes.c_void_p
            libc.shmdt.argtypes = [ctypes.c_void_p]
            held = 0
            # 24 segments of 16 MiB: 384 MiB, each touched, then detached: the segment stays
            for _ in range(24):
                shm = libc.shmget(0, 16 * 1048576, 0o1600)
                if shm < 0:
                    raise OSError(ctypes.get_errno(), 'shmget')
                address = libc.shmat(shm, None, 0)
                if address in (None, ctypes.c_void_p(-1).value):
                    raise OSError(ctypes.get_errno(), 'shmat')
                ctypes.memset(address, 1, 16 * 1048576)
                libc.shmdt(address)
                held += 16 * 1048576
            return held
        """,
    "files": """
        import os
        def hog():
            os.mkdir('many')
            made = 0
            try:
                while made < 1000000:
                    os.close(os.open(f'many/{made}', os.O_CREAT | os.O_WRONLY, 0o600))
                    made += 1
            except OSError as exc:
                raise OSError(exc.errno, f'stopped after {made} files') from None
            return made
        """,
}


@pytest.mark.parametrize("hog", HOGS.values(), ids=HOGS.keys())
def test_memory_taken_outside_the_address_space_stops_at_the_run_limit(hog: str) -> None:
    result = execute(src(hog), "print(hog())", limits=LIMITS)
    assert f"memory {LIMITS.run_memory_mb} MiB for the run" in result.isolation
    assert result.memory_peak_bytes is not None
    assert result.memory_peak_bytes <= RUN_LIMIT
    if result.status == "failed":
        # The kernel refused the last file (no memory for its inode): stopped before the limit.
        assert "stopped after" in result.detail and ("12" in result.detail or "28" in result.detail)
    else:
        assert result.status == "memory_limit", result.detail


def test_pipe_buffers_count_against_the_run_limit() -> None:
    program = src(
        """
        import fcntl, os
        def hog():
            held, pipes = 0, []
            while held < 384 * 1048576:
                try:
                    r, w = os.pipe()
                except OSError:
                    break
                pipes.append((r, w))
                try:
                    fcntl.fcntl(w, 1031, 1048576)  # F_SETPIPE_SZ
                except OSError:
                    pass
                os.set_blocking(w, False)
                try:
                    while True:
                        held += os.write(w, b'x' * 65536)
                except BlockingIOError:
                    pass
            return held
        """
    )
    result = execute(program, "print(hog())", limits=LIMITS)
    assert result.memory_peak_bytes is not None and result.memory_peak_bytes <= RUN_LIMIT
    if result.status == "passed":
        # The kernel's per-user pipe limits stopped it first: what it held was counted.
        assert result.memory_peak_bytes >= int(result.stdout)
    else:
        assert result.status == "memory_limit", result.detail


UNSHARE = ["unshare", "--mount", "--propagation", "private", "/bin/sh", "-c"]


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root")
def test_without_a_cgroup_the_sandbox_refuses_unless_told_otherwise() -> None:
    # A host that offers no cgroup: an empty tmpfs over /sys/fs/cgroup, in a private mount
    # namespace of the child only.
    code = src(
        """
        from aieval.errors import ConfigError
        from aieval.sandbox import SandboxLimits, execute
        try:
            execute('def f():\\n    return 1', 'assert f() == 1')
        except ConfigError as exc:
            print('refused:', exc)
        result = execute('def f():\\n    return 1', 'assert f() == 1',
                         limits=SandboxLimits(require_cgroup=False))
        print(result.status, '|', result.isolation)
        """
    )
    done = subprocess.run(
        [*UNSHARE, 'mount -t tmpfs none /sys/fs/cgroup && exec "$0" -c "$1"', sys.executable, code],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    refused, ran = done.stdout.strip().splitlines()
    assert refused.startswith(
        "refused: the sandbox cannot bound the run's process count and memory"
    )
    assert "require_cgroup=False" in refused
    assert ran.startswith("passed |") and "process count and memory not capped per run" in ran


def test_require_cgroup_must_be_a_bool() -> None:
    with pytest.raises(ConfigError, match="require_cgroup"):
        SandboxLimits(require_cgroup="no")  # type: ignore[arg-type]
