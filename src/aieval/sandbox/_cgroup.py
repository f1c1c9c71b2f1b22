"""A cgroup per sandboxed run: ``pids.max`` and a memory limit that counts kernel memory.

cgroup v2 (one directory with ``pids.max``, ``memory.max`` and ``memory.swap.max = 0``) or
cgroup v1 (one directory in the ``pids`` hierarchy, one in the ``memory`` hierarchy with
``memory.limit_in_bytes`` and, when swap is accounted, ``memory.memsw.limit_in_bytes``). The
memory controller charges every page of the run to it: anonymous memory, tmpfs and memfd
pages, System V segments, pipe buffers, inodes and dentries. Killing the cgroup ends every
process of the run, including ``setsid()`` daemons.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["CGROUP_ROOT", "Cgroup", "open_cgroup"]

#: Where the cgroup file systems are mounted.
CGROUP_ROOT = Path("/sys/fs/cgroup")
_PREFIX = "aieval-sandbox-"


@dataclass(slots=True)
class Cgroup:
    """The cgroup directories of one run and the limits set in them.

    Attributes:
        version: 1 or 2.
        paths: the run's directories (v2: one; v1: one per controller hierarchy).
        max_processes: the ``pids.max`` set, or ``None`` when no ``pids`` controller was had.
        memory_bytes: the memory limit set, or ``None`` when no memory controller was had.
        problems: why a controller could not be used, one line each.
    """

    version: int
    paths: list[Path] = field(default_factory=list)
    max_processes: int | None = None
    memory_bytes: int | None = None
    problems: list[str] = field(default_factory=list)

    @property
    def procs(self) -> list[Path]:
        """The files a process writes its pid to in order to join every directory."""
        return [path / "cgroup.procs" for path in self.paths]

    def _memory_dir(self) -> Path | None:
        if self.memory_bytes is None:
            return None
        return next((p for p in self.paths if (p / _memory_file(self.version)).exists()), None)

    def oom_kills(self) -> int:
        """How many processes the run's memory limit has killed so far."""
        path = self._memory_dir()
        if path is None:
            return 0
        name = "memory.events" if self.version == 2 else "memory.oom_control"
        for line in _read(path / name).splitlines():
            key, _, value = line.partition(" ")
            if key == "oom_kill" and value.strip().isdigit():
                return int(value)
        return 0

    def memory_peak(self) -> int | None:
        """The most memory the run held at once, in bytes (``None`` if not reported)."""
        path = self._memory_dir()
        if path is None:
            return None
        name = "memory.peak" if self.version == 2 else "memory.max_usage_in_bytes"
        value = _read(path / name).strip()
        return int(value) if value.isdigit() else None

    def reset_peak(self) -> bool:
        """Restart :meth:`memory_peak` from the current usage; whether that could be done.

        cgroup v1 allows it (``memory.max_usage_in_bytes``); v2's ``memory.peak`` does not
        here, so a caller that needs a fresh peak must then report none.
        """
        path = self._memory_dir()
        if path is None or self.version != 1:
            return False
        try:
            _write(path / "memory.max_usage_in_bytes", "0")
        except OSError:
            return False
        return True

    def kill(self) -> None:
        """SIGKILL every process in the cgroup, until it is empty (bounded)."""
        for path in self.paths:
            if self.version == 2:
                with contextlib.suppress(OSError):
                    _write(path / "cgroup.kill", "1")
            for _ in range(200):
                try:
                    pids = [int(p) for p in (path / "cgroup.procs").read_text().split()]
                except OSError:
                    break
                if not pids:
                    break
                for pid in pids:
                    with contextlib.suppress(ProcessLookupError, PermissionError):
                        os.kill(pid, signal.SIGKILL)
                time.sleep(0.005)

    def remove(self) -> None:
        """Kill what is left and delete the directories."""
        self.kill()
        for path in self.paths:
            for _ in range(100):
                try:
                    path.rmdir()
                    break
                except FileNotFoundError:
                    break
                except OSError:
                    time.sleep(0.01)


def _memory_file(version: int) -> str:
    return "memory.max" if version == 2 else "memory.limit_in_bytes"


def _read(path: Path) -> str:
    try:
        return path.read_text()
    except OSError:
        return ""


def _write(path: Path, value: str) -> None:
    """Write a cgroup file that the kernel made; never create one."""
    fd = os.open(path, os.O_WRONLY)
    try:
        os.write(fd, value.encode())
    finally:
        os.close(fd)


def _own_cgroup(controller: str) -> str | None:
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _id, controllers, path = line.split(":", 2)
            if controller in controllers.split(","):
                return path
    return None


def _remove_stale(parent: Path) -> None:
    """Delete empty cgroups left by sandbox callers that were killed before cleaning up."""
    with contextlib.suppress(OSError):
        for path in parent.glob(f"{_PREFIX}*"):
            owner = path.name.split("-")[2]
            if owner.isdigit() and not Path(f"/proc/{owner}").exists():
                with contextlib.suppress(OSError):
                    path.rmdir()


def _make(parent: Path, name: str, settings: list[tuple[str, str, bool]]) -> Path:
    """Create ``parent/name`` and write ``settings`` (file, value, required) into it."""
    _remove_stale(parent)
    path = parent / name
    path.mkdir()
    try:
        for file, value, required in settings:
            try:
                _write(path / file, value)
            except FileNotFoundError:
                if required:
                    raise
    except OSError:
        with contextlib.suppress(OSError):
            path.rmdir()
        raise
    return path


def _v2(max_processes: int, memory_bytes: int) -> Cgroup | None:
    own = _own_cgroup("")
    available = _read(CGROUP_ROOT / "cgroup.controllers").split()
    if own is None or not available:
        return None
    group = Cgroup(version=2)
    parent = CGROUP_ROOT / own.lstrip("/")
    wanted = [c for c in ("pids", "memory") if c in available]
    for controller in wanted:
        if controller not in _read(parent / "cgroup.subtree_control").split():
            with contextlib.suppress(OSError):
                _write(parent / "cgroup.subtree_control", f"+{controller}")
    enabled = set(_read(parent / "cgroup.subtree_control").split())
    settings: list[tuple[str, str, bool]] = []
    if "pids" in enabled:
        settings.append(("pids.max", str(max_processes), True))
    if "memory" in enabled:
        settings += [("memory.max", str(memory_bytes), True), ("memory.swap.max", "0", False)]
    if not settings:
        group.problems.append(f"cgroup v2: {parent} delegates neither pids nor memory")
        return group
    try:
        group.paths.append(_make(parent, _name(), settings))
    except OSError as exc:
        group.problems.append(f"cgroup v2: {parent}: {exc}")
        return group
    group.max_processes = max_processes if "pids" in enabled else None
    group.memory_bytes = memory_bytes if "memory" in enabled else None
    for controller in ("pids", "memory"):
        if controller not in enabled:
            group.problems.append(f"cgroup v2: {parent} does not delegate {controller}")
    return group


def _v1(max_processes: int, memory_bytes: int) -> Cgroup | None:
    hierarchies = [c for c in ("pids", "memory") if (CGROUP_ROOT / c / "cgroup.procs").exists()]
    if not hierarchies:
        return None
    group = Cgroup(version=1)
    name = _name()
    for controller in hierarchies:
        own = _own_cgroup(controller)
        parent = CGROUP_ROOT / controller / (own or "/").lstrip("/")
        if controller == "pids":
            settings = [("pids.max", str(max_processes), True)]
        else:
            # memsw (memory + swap) may only be set at or above the memory limit, so after it.
            settings = [
                ("memory.limit_in_bytes", str(memory_bytes), True),
                ("memory.memsw.limit_in_bytes", str(memory_bytes), False),
            ]
        try:
            group.paths.append(_make(parent, name, settings))
        except OSError as exc:
            group.problems.append(f"cgroup v1 {controller}: {parent}: {exc}")
            continue
        if controller == "pids":
            group.max_processes = max_processes
        else:
            group.memory_bytes = memory_bytes
    return group


def _name() -> str:
    return f"{_PREFIX}{os.getpid()}-{secrets.token_hex(4)}"


@contextlib.contextmanager
def open_cgroup(max_processes: int, memory_bytes: int) -> Iterator[Cgroup]:
    """A fresh cgroup for one run, with as many of its limits as the host allows.

    The result's ``max_processes`` and ``memory_bytes`` say which limits were set, and
    ``problems`` why the others could not be; on exit every process in it is killed and the
    directories are removed.
    """
    group = _v2(max_processes, memory_bytes)
    if group is None or not group.paths:
        fallback = _v1(max_processes, memory_bytes)
        if fallback is not None and (fallback.paths or group is None):
            if group is not None:
                fallback.problems = group.problems + fallback.problems
            group = fallback
    if group is None:
        group = Cgroup(version=0, problems=[f"no cgroup file system at {CGROUP_ROOT}"])
    try:
        yield group
    finally:
        group.remove()
