"""A local Ray started for a run dies with the process that started it.

Ray ties its ``gcs_server`` and ``raylet`` to the driver, but the agents the raylet starts
(``DashboardAgent``, ``RuntimeEnvAgent``) outlive a killed driver (SIGKILL, the OOM killer)
by about a minute: they wait for the gone GCS before they exit. So a small watchdog process
starts beside such a cluster. It holds the read end of a pipe only the driver writes to; when
the pipe closes (the driver ended, or shut its Ray down), it kills what is left of the
cluster: the processes Ray started for it, and theirs, as seen at most a second before.

Run as ``python -m aieval.runner._reaper PID...`` with the pipe on its standard input.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import select
import subprocess
import sys
from pathlib import Path
from typing import Any

__all__ = ["ClusterReaper", "watch_cluster"]

#: Seconds between two looks at the cluster's processes (a worker started since is added).
_REFRESH_SECONDS = 1.0


class ClusterReaper:
    """The watchdog of one local Ray: :meth:`release` after ``ray.shutdown()``."""

    def __init__(self, process: subprocess.Popen[bytes]) -> None:
        self.process = process

    def release(self) -> None:
        """Close the pipe: the watchdog kills any straggler of the (shut down) cluster, exits."""
        if self.process.stdin is not None:
            self.process.stdin.close()
        self.process.wait()


def watch_cluster(ray: Any) -> ClusterReaper | None:
    """Start the watchdog of the local Ray this process just started (POSIX only).

    ``None`` where it cannot run (Windows), or when Ray names no process of its node.
    """
    if sys.platform == "win32":
        return None
    node = getattr(getattr(ray, "_private", None), "worker", None)
    node = getattr(node, "_global_node", None)
    found = getattr(node, "all_processes", None) or {}
    pids = [info.process.pid for infos in found.values() for info in infos]
    if not pids:
        return None
    psutil = _psutil()
    known = _with_descendants(psutil, [p for pid in pids if (p := _process(psutil, pid))])
    process = subprocess.Popen(
        [sys.executable, "-m", "aieval.runner._reaper", *(str(p.pid) for p in known)],
        stdin=subprocess.PIPE,
        start_new_session=True,  # a Ctrl-C at the terminal is the driver's, not the watchdog's
    )
    return ClusterReaper(process)


def _psutil() -> Any:
    """``psutil``: installed, else the copy Ray ships in its ``thirdparty_files``."""
    try:
        return importlib.import_module("psutil")
    except ImportError:
        spec = importlib.util.find_spec("ray")
        if spec is None or spec.origin is None:
            raise
        sys.path.insert(0, str(Path(spec.origin).parent / "thirdparty_files"))
        return importlib.import_module("psutil")


def _process(psutil: Any, pid: int) -> Any:
    try:
        return psutil.Process(pid)
    except psutil.Error:
        return None


def _with_descendants(psutil: Any, roots: list[Any]) -> set[Any]:
    """``roots`` and every process under them (``psutil.Process`` compares pid and start)."""
    found = set(roots)
    for root in roots:
        with contextlib.suppress(psutil.Error):
            found.update(root.children(recursive=True))
    return found


def _closed(fd: int, timeout: float) -> bool:
    """Whether the pipe on ``fd`` closed (EOF) within ``timeout`` seconds."""
    ready, _, _ = select.select([fd], [], [], timeout)
    return bool(ready) and not os.read(fd, 4096)


def main(argv: list[str]) -> None:
    """Watch the given processes (and theirs) until standard input closes, then kill them."""
    psutil = _psutil()
    known = {p for pid in argv if (p := _process(psutil, int(pid)))}
    fd = sys.stdin.fileno()
    while not _closed(fd, _REFRESH_SECONDS):
        known = _with_descendants(psutil, [p for p in known if p.is_running()])
    for proc in _with_descendants(psutil, [p for p in known if p.is_running()]):
        with contextlib.suppress(psutil.Error):
            proc.kill()


if __name__ == "__main__":
    main(sys.argv[1:])
