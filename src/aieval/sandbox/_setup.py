"""What every sandboxed run shares: the sandbox scripts, the start grace, the staging folder,
the scratch mounts, the cgroup's account and the raw outcome of a run, for the cold
(``_execute``) and warm (``_warm``) paths."""

from __future__ import annotations

import functools
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aieval.errors import ConfigError
from aieval.sandbox._bwrap import bwrap_argv, host_uid, scratch_inodes, scratch_split
from aieval.sandbox._cgroup import Cgroup
from aieval.sandbox._limits import SandboxLimits
from aieval.sandbox._seccomp import seccomp_program

__all__ = [
    "CHILD",
    "LAUNCH",
    "MIB",
    "START_GRACE_S",
    "Run",
    "Staging",
    "cgroup_account",
    "scratch_mounts",
    "stage_dir",
]

#: The sandboxed side (harness, worker, warm harness, zygote) and the launcher.
CHILD = str(Path(__file__).with_name("_child.py"))
LAUNCH = str(Path(__file__).with_name("_launch.py"))
MIB = 1024 * 1024
#: The sandbox gets this long beyond the timeout to start; the candidate's wall clock starts
#: once the harness signs that it is ready, so a slow start on a busy machine is never its
#: timeout.
START_GRACE_S = 30.0


@dataclass(slots=True)
class Run:
    """What a run produced, before it is read as a verdict or a command's result."""

    stdout: bytes = b""
    stderr: bytes = b""
    result: bytes = b""
    exit_code: int | None = None
    timed_out: bool = False
    truncated: bool = False
    duration_s: float = 0.0
    totals: dict[str, int] = field(default_factory=dict)
    isolation: str = ""
    oom_kills: int = 0
    memory_peak: int | None = None
    memory_limit: int | None = None


_STAGE_PREFIX = "aieval-stage-"
_swept = False


def _sweep_stale_stages() -> None:
    """Remove staging folders left by processes that are gone (killed before they could).

    A folder is named after the process that made it; one whose process no longer exists, or
    an unnamed one (made by an earlier version) older than a day, is removed, if it is ours.
    Done once per process.
    """
    global _swept
    if _swept:
        return
    _swept = True
    for folder in Path(tempfile.gettempdir()).glob(_STAGE_PREFIX + "*"):
        try:
            info = folder.lstat()
            if not stat.S_ISDIR(info.st_mode) or info.st_uid != os.getuid():
                continue
            owner = folder.name[len(_STAGE_PREFIX) :].split("-", 1)[0]
            if owner.isdigit():
                gone = not _alive(int(owner))
            else:
                gone = time.time() - info.st_mtime > 86400
        except OSError:
            continue
        if gone:
            shutil.rmtree(folder, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True
    return True


def stage_dir() -> str:
    """A fresh directory the sandbox's host uid can pass through but not list."""
    _sweep_stale_stages()
    folder = tempfile.mkdtemp(prefix=f"{_STAGE_PREFIX}{os.getpid()}-")
    os.chmod(folder, 0o711)
    for part in Path(folder).parents:
        if part.stat().st_mode & stat.S_IXOTH == 0:
            shutil.rmtree(folder, ignore_errors=True)
            raise ConfigError(
                f"the sandbox's staging folder {folder} is under {part}, which other users "
                "cannot pass through: set TMPDIR to a folder such as /tmp"
            )
    return folder


class Staging:
    """Paths the sandbox's host uid cannot reach, staged as bind targets in a fresh folder.

    Called with a path, it returns where bubblewrap should find it (the path itself when the
    sandbox does not drop to another uid); :attr:`binds` lists the ``[source, target]`` pairs.
    :meth:`mount_point` gives an empty directory for the launcher to mount on.
    """

    def __init__(self, dropped: bool) -> None:
        self.dropped = dropped
        self.folder = stage_dir() if dropped else None
        self.binds: list[list[str]] = []
        self._points = 0

    def __call__(self, path: str) -> str:
        if not self.dropped:
            return path
        target = os.path.join(self._folder(), str(len(self.binds)))
        os.mkdir(target, 0o700)
        self.binds.append([path, target])
        return target

    def mount_point(self) -> str:
        """A fresh empty directory the launcher mounts a file system on."""
        self._points += 1
        target = os.path.join(self._folder(), f"mount-{self._points}")
        os.mkdir(target, 0o700)
        return target

    def _folder(self) -> str:
        if self.folder is None:
            # bubblewrap runs as us: the folder need not be reachable by another uid
            _sweep_stale_stages()
            self.folder = tempfile.mkdtemp(prefix=f"{_STAGE_PREFIX}{os.getpid()}-")
        return self.folder

    def remove(self) -> None:
        """Remove the staging folder (if any)."""
        if self.folder is not None:
            shutil.rmtree(self.folder, ignore_errors=True)


def scratch_mounts(stage: Staging, scratch_mb: int) -> list[tuple[str, int, int]]:
    """The scratch file systems the launcher mounts for ``/tmp`` and ``/dev/shm``: mount
    point, bytes and inodes of each; empty where it cannot mount them (see
    :func:`can_mount_scratch`)."""
    if not can_mount_scratch():
        return []
    return [(stage.mount_point(), size, scratch_inodes(size)) for size in scratch_split(scratch_mb)]


@functools.cache
def can_mount_scratch() -> bool:
    """Whether the launcher can mount a tmpfs with an inode bound here, tried once: as root,
    or in a user namespace of its own (which some hosts refuse or leave without the right to
    mount). Where it cannot, bubblewrap's own tmpfs bounds the scratch's bytes only."""
    stage = Staging(dropped=False)
    try:
        point = stage.mount_point()
        settings: dict[str, object] = {"max_open_files": 64, "uid": host_uid(), "probe": True}
        settings["scratch"] = [[point, 1024 * 1024, 16]]
        probe = [sys.executable, "-I", "-S", LAUNCH, json.dumps(settings), "--"]
        done = subprocess.run(probe, capture_output=True, timeout=30, cwd="/")
    except (OSError, subprocess.SubprocessError):
        return False
    finally:
        stage.remove()
    return done.returncode == 0


def cgroup_account(group: Cgroup, limits: SandboxLimits) -> str:
    """The cgroup part of the isolation text; refuses a run without one when it is required."""
    missing = [
        what
        for what, value in (("process count", group.max_processes), ("memory", group.memory_bytes))
        if value is None
    ]
    if missing and limits.require_cgroup:
        why = "; ".join(group.problems) or "no cgroup may be created here"
        raise ConfigError(
            f"the sandbox cannot bound the run's {' and '.join(missing)} with a cgroup ({why}): "
            "run aieval as root (as in a container or CI) or in a cgroup v2 subtree delegated "
            "to your user with the pids and memory controllers, or pass "
            "SandboxLimits(require_cgroup=False) to accept per-process limits only (see "
            "docs/sandbox.md)"
        )
    parts = []
    if group.max_processes is not None:
        parts.append(f"pids.max {group.max_processes}")
    if group.memory_bytes is not None:
        parts.append(f"memory {group.memory_bytes // MIB} MiB for the run")
    text = f"; cgroup v{group.version}: {', '.join(parts)}" if parts else ""
    if missing:
        text += f"; {' and '.join(missing)} not capped per run (no cgroup may be created here)"
    return text


def seccomp_memfd() -> int:
    """A memory file holding the seccomp filter, at its start, for bubblewrap to read (the
    caller closes it)."""
    fd = os.memfd_create("aieval-seccomp")
    try:
        os.write(fd, seccomp_program())
        os.lseek(fd, 0, os.SEEK_SET)
    except BaseException:
        os.close(fd)
        raise
    return fd


def launch_argv(
    argv: list[str],
    group: Cgroup,
    limits: SandboxLimits,
    stage: Staging,
    scratch: list[tuple[str, int, int]],
    uid: int | None,
) -> list[str]:
    """The launcher's command: it joins ``group``, applies the limits, then starts ``argv``."""
    settings: dict[str, Any] = {
        "cgroups": [str(p) for p in group.procs],
        "max_open_files": limits.max_open_files,
        "binds": stage.binds,
        "scratch": scratch,
        "uid": uid,
    }
    return [sys.executable, "-I", "-S", LAUNCH, json.dumps(settings), "--", *argv]


def isolated_argv(
    inner: list[str],
    limits: SandboxLimits,
    stage: Staging,
    seccomp_fd: int,
    writable: str | None = None,
) -> tuple[list[str], str, list[tuple[str, int, int]]]:
    """bubblewrap's command running ``inner`` (the child script's folder mounted, ``writable``
    the one folder it may write), its one-line account, and the scratch file systems."""
    scratch = scratch_mounts(stage, limits.max_disk_mb)
    argv, account = bwrap_argv(
        inner,
        scratch_mb=limits.max_disk_mb,
        child_dir=str(Path(CHILD).parent),
        writable=writable,
        seccomp_fd=seccomp_fd,
        stage=stage,
        scratch=scratch,
    )
    return argv, account, scratch
