"""Isolation with bubblewrap: namespaces, a read-only system view, a bounded scratch tmpfs.

The sandboxed process runs in new user, PID, mount, network, IPC, UTS and cgroup namespaces
as uid/gid 65534 with no capabilities, may not create further user namespaces, runs under a
system-call filter (``_seccomp``), sees only the system directories, the Python installation
(read-only) and a private tmpfs of bounded size (and, where the launcher mounts it, bounded
file count), gets a fresh read-only ``/proc``, and dies with its parent. There is no bubblewrap init
(``--as-pid-1``): the sandbox's script is pid 1 and starts an init of its own that a program
cannot reach (see ``_child``).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from aieval.errors import ConfigError

__all__ = [
    "CHILD_DIR",
    "HOST_UID",
    "SCRATCH",
    "bwrap_argv",
    "bwrap_version",
    "host_uid",
    "scratch_inodes",
    "scratch_split",
]

#: Where the scratch tmpfs is mounted inside the sandbox (the working directory).
SCRATCH = "/tmp"
#: Where the sandbox's own scripts are mounted, read-only.
CHILD_DIR = "/opt/aieval-sandbox"
#: The host uid (and gid) a root caller runs bubblewrap as, so that the sandbox's uid 65534
#: maps to it and never to root. Not 65534 (``nobody``), whose files (e.g. a SWE run's
#: write-only report folder) the sandbox must not own.
HOST_UID = 65533
_SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_SYSTEM_FILES = ("/etc/ld.so.cache", "/etc/localtime", "/etc/nsswitch.conf")
_PAGE = 4096
_INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: apt-get install bubblewrap; Fedora: dnf install "
    "bubblewrap), or pass SandboxLimits(isolation='none') to run without isolation (only for "
    "code you trust; see docs/sandbox.md)"
)


def _mapped(map_file: str, inside: int) -> int | None:
    """What ``inside`` (an id of this user namespace) is in the parent's, if it is mapped."""
    try:
        lines = Path(map_file).read_text().splitlines()
    except OSError:
        return inside  # no user namespaces here: every id is its own
    for line in lines:
        first, outside, count = (int(part) for part in line.split())
        if first <= inside < first + count:
            return outside + inside - first
    return None


@functools.cache
def host_uid() -> int | None:
    """The uid bubblewrap runs as: ``HOST_UID`` for a root caller, ``None`` to keep ours.

    A caller that is root only inside its own user namespace (``unshare -r``, rootless
    containers) where ``HOST_UID`` is not mapped keeps its uid: it is not root on the host.

    Raises:
        ConfigError: the caller is the host's root and ``HOST_UID`` cannot be had here.
    """
    if os.geteuid() != 0:
        return None
    if (
        _mapped("/proc/self/uid_map", HOST_UID) is not None
        and _mapped("/proc/self/gid_map", HOST_UID) is not None
    ):
        return HOST_UID
    if _mapped("/proc/self/uid_map", 0) == 0:
        raise ConfigError(
            f"aieval runs as root, but uid and gid {HOST_UID}, which the sandbox runs as so "
            "that it is never root on the host, are not mapped in this user namespace: map "
            f"them (e.g. a container's uid range including {HOST_UID}) or run as another user"
        )
    return None


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
    # As the sandbox will run: unprivileged (a root caller drops to the sandbox's host uid).
    uid = host_uid()
    namespaces = ["--unshare-all", "--unshare-user", "--disable-userns"]
    try:
        probe = subprocess.run(
            [path, *namespaces, "--ro-bind", "/", "/", "--proc", "/proc", "--", "true"],
            capture_output=True,
            text=True,
            timeout=30,
            cwd="/",
            user=uid,
            group=uid,
            extra_groups=None if uid is None else [],
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise ConfigError(
            f"cannot run {path} as the sandbox's host uid {os.getuid() if uid is None else uid}: "
            f"{exc}; install bubblewrap where every user can run it (e.g. /usr/bin)"
        ) from exc
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


def scratch_inodes(size: int) -> int:
    """The files, folders and links a scratch tmpfs of ``size`` bytes may hold: one per page
    (4 KiB), so the bound never stops a file with content before its bytes would.

    Example:
        >>> scratch_inodes(scratch_split(64)[0]), scratch_inodes(scratch_split(64)[1])
        (14336, 2048)
    """
    return max(16, size // _PAGE)


def _mib(size: int) -> str:
    return f"{size / (1024 * 1024):.12g} MiB"


def _same(path: str) -> str:
    return path


def bwrap_argv(
    argv: Sequence[str],
    *,
    scratch_mb: int,
    child_dir: str,
    writable: str | None = None,
    seccomp_fd: int | None = None,
    stage: Callable[[str], str] = _same,
    scratch: Sequence[tuple[str, int, int]] = (),
) -> tuple[list[str], str]:
    """The command line that runs ``argv`` isolated, and a one-line account of the isolation.

    Args:
        argv: the command as it runs inside (paths as seen inside the sandbox).
        scratch_mb: the writable space in all: a tmpfs at ``/tmp`` (the working directory) and
            a small one at ``/dev/shm`` (see :func:`scratch_split`); the rest is read-only.
        child_dir: host directory of the sandbox scripts, mounted read-only at ``CHILD_DIR``.
        writable: a host directory bound read-write at the same path and used as the working
            directory instead of the scratch (for test runs against a checkout).
        seccomp_fd: an open descriptor holding the BPF filter bubblewrap loads before ``argv``.
        stage: where bubblewrap finds each bound directory other than the system ones (its
            argument: the directory's path; by default, that path itself).
        scratch: the tmpfs file systems the launcher mounted for ``/tmp`` and ``/dev/shm``
            (mount point, bytes, inodes), bound there; empty: bubblewrap's own tmpfs (with
            ``--size``), whose number of files is bounded only by the run's memory.
    """
    path, version, has_size = bwrap_version()
    args = [
        path,
        "--unshare-all",
        "--unshare-user",
        "--disable-userns",
        "--cap-drop",
        "ALL",
        "--die-with-parent",
        "--new-session",
        # no bubblewrap init: the sandbox's script is pid 1 and starts its own (see _child)
        "--as-pid-1",
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
    if scratch:
        # POSIX semaphores (multiprocessing locks and queues) live in /dev/shm: a small bounded
        # tmpfs there, the rest of /dev read-only (device nodes stay usable).
        args += ["--bind", scratch[1][0], "/dev/shm"]
    elif has_size:
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
    if scratch:
        args += ["--bind", scratch[0][0], SCRATCH]
    elif has_size:
        args += ["--size", str(tmp_bytes), "--tmpfs", SCRATCH]
    else:
        args += ["--tmpfs", SCRATCH]
    # Another interpreter (e.g. the repository's own Python for a test run) needs its install.
    python = os.path.isabs(argv[0]) and os.path.basename(argv[0]).startswith("python")
    programs = [argv[0]] if python and argv[0] != sys.executable else []
    for root in _python_roots(programs):
        args += ["--ro-bind", stage(root), root]
    args += ["--ro-bind", stage(child_dir), CHILD_DIR]
    if writable is not None:
        args += ["--bind", stage(writable), writable, "--chdir", writable]
    else:
        args += ["--chdir", SCRATCH]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    # /proc read-only: no sysctl, no /proc/self/* knob can be written. The root is bubblewrap's
    # own (unbounded) tmpfs: read-only once every mount point exists.
    args += ["--remount-ro", "/proc", "--remount-ro", "/", "--", *argv]
    if scratch:
        (_, tmp_bytes, tmp_files), (_, shm_bytes, shm_files) = scratch[0], scratch[1]
        disk = (
            f"tmpfs {scratch_mb} MiB (/tmp {_mib(tmp_bytes)}, {tmp_files} files; /dev/shm "
            f"{_mib(shm_bytes)}, {shm_files} files), / and /dev read-only"
        )
    elif has_size:
        disk = (
            f"tmpfs {scratch_mb} MiB (/tmp {_mib(tmp_bytes)}, /dev/shm {_mib(shm_bytes)}; files "
            "not capped, only the run's memory bounds them), / and /dev read-only"
        )
    else:
        disk = "tmpfs unbounded (bwrap without --size), /dev/shm, / and /dev read-only"
    account = (
        f"bwrap {'.'.join(map(str, version))}: namespaces, uid 65534, no capabilities, "
        f"no new user namespaces, {disk}, /proc read-only"
    )
    if seccomp_fd is not None:
        account += ", seccomp filter"
    return args, account
