"""Who runs a run: the owning process and host, and whether it is still alive.

A running run records its process id, host name and a heartbeat that the runner refreshes
while it works. A run still marked ``running`` whose process is gone (same host, no such
process) or whose heartbeat is older than :data:`STALE_AFTER_S` was interrupted: its process
died before it could say so (killed, out of memory, power loss).
"""

from __future__ import annotations

import os
import socket
import time

__all__ = ["HEARTBEAT_EVERY_S", "STALE_AFTER_S", "owner", "owner_gone"]

#: How often a running run refreshes its heartbeat.
HEARTBEAT_EVERY_S = 10.0
#: A heartbeat older than this means the run's process is gone (on any host).
STALE_AFTER_S = 120.0


def owner() -> tuple[int, str]:
    """This process's ``(pid, host)``."""
    return os.getpid(), socket.gethostname()


def owner_gone(
    pid: int | None, host: str | None, heartbeat_at: float | None, now: float | None = None
) -> bool:
    """Whether the process recorded as running a run is known to be gone."""
    if heartbeat_at is not None:
        current = time.time() if now is None else now
        if current - heartbeat_at > STALE_AFTER_S:
            return True
    if pid is None or host != socket.gethostname():
        return False
    return not _alive(pid)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    except OSError:
        return True
    return True
