"""A local Ray started for a run dies with the process that started it.

Ray ties its ``gcs_server`` and ``raylet`` to the driver, but the agents the raylet starts
(``DashboardAgent``, ``RuntimeEnvAgent``) outlive a killed driver (SIGKILL, the OOM killer)
by about a minute: they wait for the gone GCS before they exit. So a small watchdog process
(:mod:`._watchdog`) starts beside such a cluster. It holds the read end of a pipe only the
driver writes to; when the pipe closes (the driver ended, or shut its Ray down), it kills what
is left of the cluster: the processes Ray started for it, and theirs, as seen at most a second
before.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from aieval.runner._watchdog import find_psutil, process, with_descendants

__all__ = ["ClusterReaper", "watch_cluster"]


class ClusterReaper:
    """The watchdog of one local Ray: :meth:`release` after ``ray.shutdown()``."""

    def __init__(self, watchdog: subprocess.Popen[bytes]) -> None:
        self.process = watchdog

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
    psutil = find_psutil()
    known = with_descendants(psutil, [p for pid in pids if (p := process(psutil, pid))])
    script = Path(__file__).with_name("_watchdog.py")  # by path: no package import, quick
    watchdog = subprocess.Popen(
        [sys.executable, str(script), *(str(p.pid) for p in known)],
        stdin=subprocess.PIPE,
        start_new_session=True,  # a Ctrl-C at the terminal is the driver's, not the watchdog's
    )
    return ClusterReaper(watchdog)
