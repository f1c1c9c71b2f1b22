"""Isolation with bubblewrap: namespaces, a read-only system view, a bounded scratch tmpfs.

The sandboxed process runs in new user, PID, mount, network, IPC, UTS and cgroup namespaces
as uid/gid 65534, sees only the system directories, the Python installation (read-only) and a
private tmpfs of bounded size, gets a fresh ``/proc``, and dies with its parent. When the host
delegates a ``pids`` cgroup (v2, or a writable v1 hierarchy, as for root in most containers),
each run also gets its own cgroup with ``pids.max``; killing that cgroup and the namespace's
pid 1 ends every process of the run, including ``setsid()`` daemons.
"""

from __future__ import annotations

import contextlib
import functools
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from aieval.errors import ConfigError

__all__ = ["Cgroup", "bwrap_argv", "bwrap_version", "open_cgroup", "scratch_split"]

#: Where the scratch tmpfs is mounted inside the sandbox (the working directory).
SCRATCH = "/tmp"
#: Where the sandbox's own scripts are mounted, read-only.
CHILD_DIR = "/opt/aieval-sandbox"
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf")
_PAGE = 4096
# Processes of the sandbox machinery itself (bwrap's two, the harness and the worker).
_OWN_PROCESSES = 4
_INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
    "bubblewrap), or pass SandboxLimits(isolation='none') to run without isolation (only for "
    "code you trust; see docs/sandbox.md)"
)


@functools.cache
def bwrap_version() -> tuple[str, tuple[int, ...], bool]:
    """The ``bwrap`` path, its version and whether it supports ``--size``, once it has been seen
    to create namespaces here.

    Raises:
        ConfigError: bubblewrap is not installed or cannot run here, with how to fix it.
    """
    path = shutil.which("bwrap")
    if path is None or not sys.platform.startswith("linux"):
        raise ConfigError(f"the code sandbox needs bubblewrap ('bwrap' on PATH): {_INSTALL_HINT}")
    try:
        done = subprocess.run([path, "--version"], capture_output=True, text=True, timeout=10)
        helptext = subprocess.run([path, "--help"], capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError) as exc:
        raise ConfigError(f"cannot run {path}: {exc}; {_INSTALL_HINT}") from exc
    probe = subprocess.run(
        [path, "--unshare-all", "--ro-bind", "/", "/", "--proc", "/proc", "--", "true"],
        capture_output=True,
        text=True,
        timeout=30,
    )
    if probe.returncode != 0:
        raise ConfigError(
            f"bubblewrap cannot create its namespaces here ({probe.stderr.strip()[:300]}): allow "
            "unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1; on Ubuntu "
            "kernel.apparmor_restrict_unprivileged_userns=0), run the container with user "
            "namespaces allowed, or pass SandboxLimits(isolation='none') for code you trust"
        )
    found = re.search(r"(\d+)\.(\d+)(?:\.(\d+))?", done.stdout)
    version = tuple(int(part) for part in found.groups() if part) if found else (0,)
    return path, version, "--size" in helptext.stdout


def _python_roots(programs: Sequence[str] = ()) -> list[str]:
    """The directories the interpreter needs: its installation and the virtualenv, if any.

    ``programs`` are further executables (absolute paths) whose installation is bound too.
    """
    roots = {sys.prefix, sys.exec_prefix, sys.base_prefix, sys.base_exec_prefix}
    for program in (sys.executable, *programs):
        roots.add(os.path.dirname(os.path.dirname(program)))
        roots.add(os.path.dirname(os.path.dirname(os.path.realpath(program))))
    roots |= {os.path.realpath(root) for root in roots}
    hidden = {"/", "/root", "/home", "/etc", "/tmp", "/var", "/proc", "/sys", "/dev", "/run"}
    # Never a whole home directory: that is where secrets live.
    kept = sorted(
        r for r in roots if r not in hidden and os.path.dirname(r) != "/home" and os.path.isdir(r)
    )
    # A root under another root is already visible through it.
    return [r for r in kept if not any(r != o and r.startswith(o + os.sep) for o in kept)]


def scratch_split(scratch_mb: int) -> tuple[int, int]:
    """How ``max_disk_mb`` divides into bytes: the ``/tmp`` scratch and ``/dev/shm`` (1/8).

    Example:
        >>> scratch_split(64)
        (58720256, 8388608)
    """
    total = scratch_mb * 1024 * 1024
    shm = max(_PAGE, total // 8 // _PAGE * _PAGE)
    return total - shm, shm


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.12g} MiB"


def bwrap_argv(
    argv: Sequence[str],
    *,
    scratch_mb: int,
    child_dir: str,
    writable: str | None = None,
) -> tuple[list[str], str]:
    """The command line that runs ``argv`` isolated, and a one-line account of the isolation.

    Args:
        argv: the command as it runs inside (paths as seen inside the sandbox).
        scratch_mb: the writable space in all: a tmpfs at ``/tmp`` (the working directory) and
            a small one at ``/dev/shm`` (see :func:`scratch_split`); the rest is read-only.
        child_dir: host directory of the sandbox scripts, mounted read-only at ``CHILD_DIR``.
        writable: a host directory bound read-write at the same path and used as the working
            directory instead of the scratch (for test runs against a checkout).
    """
    path, version, has_size = bwrap_version()
    args = [
        path,
        "--unshare-all",
        "--die-with-parent",
        "--new-session",
        "--uid",
        "65534",
        "--gid",
        "65534",
        "--hostname",
        "sandbox",
        "--proc",
        "/proc",
        "--dev",
        "/dev",
    ]
    tmp_bytes, shm_bytes = scratch_split(scratch_mb)
    if has_size:
        # POSIX semaphores (multiprocessing locks and queues) live in /dev/shm: a small bounded
        # tmpfs there, the rest of /dev read-only (device nodes stay usable).
        args += ["--size", str(shm_bytes), "--tmpfs", "/dev/shm"]
    args += ["--remount-ro", "/dev"]
    for name in _SYSTEM_DIRS:
        if os.path.islink(name):
            args += ["--symlink", os.readlink(name), name]
        elif os.path.isdir(name):
            args += ["--ro-bind", name, name]
    for name in _SYSTEM_FILES:
        if os.path.exists(name):
            args += ["--ro-bind", name, name]
    # The scratch first: an interpreter installed under /tmp (a clone or CI runner there, tox
    # or pipx caches) is bound on top of it below, so the tmpfs cannot hide it. bwrap applies
    # the mounts in order, and only the bound installation shows, not its sibling files.
    if has_size:
        args += ["--size", str(tmp_bytes)]
    args += ["--tmpfs", SCRATCH]
    # Another interpreter (e.g. the repository's own Python for a test run) needs its install.
    python = os.path.isabs(argv[0]) and os.path.basename(argv[0]).startswith("python")
    programs = [argv[0]] if python and argv[0] != sys.executable else []
    for root in _python_roots(programs):
        args += ["--ro-bind", root, root]
    args += ["--ro-bind", child_dir, CHILD_DIR]
    if writable is not None:
        args += ["--bind", writable, writable, "--chdir", writable]
    else:
        args += ["--chdir", SCRATCH]
    # The root is bubblewrap's own (unbounded) tmpfs: read-only once every mount point exists.
    args += ["--remount-ro", "/", "--", *argv]
    disk = (
        f"tmpfs {scratch_mb} MiB (/tmp {_mib(tmp_bytes)}, /dev/shm {_mib(shm_bytes)}), / and /dev "
        "read-only"
        if has_size
        else "tmpfs unbounded (bwrap without --size), /dev/shm, / and /dev read-only"
    )
    account = f"bwrap {'.'.join(map(str, version))}: namespaces, uid 65534, {disk}"
    return args, account


@dataclass(slots=True)
class Cgroup:
    """A per-run ``pids`` cgroup: caps the process count and kills every member at the end."""

    path: Path
    version: int

    @property
    def procs(self) -> Path:
        """The file a process writes its pid to in order to join."""
        return self.path / "cgroup.procs"

    def kill(self) -> None:
        """SIGKILL every process in the cgroup, until it is empty (bounded)."""
        if self.version == 2:
            with contextlib.suppress(OSError):
                (self.path / "cgroup.kill").write_text("1")
        for _ in range(200):
            try:
                pids = [int(p) for p in self.procs.read_text().split()]
            except OSError:
                return
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)

    def remove(self) -> None:
        """Kill what is left and delete the cgroup."""
        self.kill()
        for _ in range(100):
            try:
                self.path.rmdir()
                return
            except FileNotFoundError:
                return
            except OSError:
                time.sleep(0.01)


def _own_cgroup(controller: str) -> str | None:
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _id, controllers, path = line.split(":", 2)
            if controller in controllers.split(","):
                return path
    return None


def _cgroup_parents() -> Iterator[tuple[Path, int]]:
    root = Path("/sys/fs/cgroup")
    v1 = _own_cgroup("pids")
    if v1 is not None and (root / "pids").is_dir():
        yield root / "pids" / v1.lstrip("/"), 1
    v2 = _own_cgroup("")
    if v2 is not None and "pids" in _read(root / "cgroup.controllers").split():
        yield root / v2.lstrip("/"), 2


def _remove_stale(parent: Path) -> None:
    """Delete empty cgroups left by sandbox callers that were killed before cleaning up."""
    with contextlib.suppress(OSError):
        for path in parent.glob("aieval-sandbox-*"):
            owner = path.name.split("-")[2]
            if owner.isdigit() and not Path(f"/proc/{owner}").exists():
                with contextlib.suppress(OSError):
                    path.rmdir()


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


@contextlib.contextmanager
def open_cgroup(max_processes: int) -> Iterator[Cgroup | None]:
    """A fresh ``pids`` cgroup with ``pids.max`` set, or ``None`` when none may be created."""
    group = None
    for parent, version in _cgroup_parents():
        _remove_stale(parent)
        if version == 2 and "pids" not in _read(parent / "cgroup.subtree_control").split():
            with contextlib.suppress(OSError):
                (parent / "cgroup.subtree_control").write_text("+pids")
        path = parent / f"aieval-sandbox-{os.getpid()}-{secrets.token_hex(4)}"
        try:
            path.mkdir()
        except OSError:
            continue
        try:
            (path / "pids.max").write_text(str(max_processes + _OWN_PROCESSES))
        except OSError:
            with contextlib.suppress(OSError):
                path.rmdir()
            continue
        group = Cgroup(path, version)
        break
    try:
        yield group
    finally:
        if group is not None:
            group.remove()
