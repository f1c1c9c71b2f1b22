"""Who runs a run: the owning process and host, and whether it is still alive.

A running run records its process id, host name and a heartbeat that the runner refreshes
while it works. A run still marked ``running`` whose process is gone (same host, no such
process) or whose heartbeat is older than :data:`STALE_AFTER_S` was interrupted: its process
died before it could say so (killed, out of memory, power loss).

Stores written before owners were recorded (schema version 1) hold running rows with no pid,
host or heartbeat. Such a row's start is its last known sign of life: it reads as interrupted
once that is older than :data:`STALE_AFTER_S`, like a row whose heartbeat stopped then.
"""

from __future__ import annotations

import os
import socket
import time

from aieval.errors import RunInProgressError

__all__ = ["HEARTBEAT_EVERY_S", "STALE_AFTER_S", "owner", "owner_gone", "still_running"]

#: How often a running run refreshes its heartbeat.
HEARTBEAT_EVERY_S = 10.0
#: A heartbeat older than this means the run's process is gone (on any host).
STALE_AFTER_S = 120.0


def owner() -> tuple[int, str]:
    """This process's ``(pid, host)``."""
    return os.getpid(), socket.gethostname()


def owner_gone(
    pid: int | None,
    host: str | None,
    heartbeat_at: float | None,
    now: float | None = None,
    *,
    started_at: float | None = None,
) -> bool:
    """Whether the process recorded as running a run is known to be gone.

    ``started_at`` stands in for the heartbeat of a row that records no owner at all (written
    by a version before schema 2).

    >>> owner_gone(None, None, None, now=1000.0, started_at=0.0)
    True
    >>> owner_gone(None, None, None, now=1000.0, started_at=990.0)
    False
    """
    if pid is None and host is None and heartbeat_at is None:
        heartbeat_at = started_at
    if heartbeat_at is not None:
        current = time.time() if now is None else now
        if current - heartbeat_at > STALE_AFTER_S:
            return True
    if pid is None or host != socket.gethostname():
        return False
    return not _alive(pid)


def still_running(
    run_id: str,
    pid: int | None,
    host: str | None,
    heartbeat_at: float | None,
    *,
    started_at: float | None = None,
) -> RunInProgressError:
    """The error for taking over ``run_id`` while its process (``pid`` on ``host``) still runs
    it: who holds it, how old its last sign of life is, and how to proceed. ``started_at``
    stands in for the heartbeat of a row that records no owner (as in :func:`owner_gone`)."""
    if pid is None and host is None and heartbeat_at is None:
        heartbeat_at = started_at
    age = None if heartbeat_at is None else max(0.0, time.time() - heartbeat_at)
    mine = (pid, host) == owner()
    who = "this process" if mine else "process"
    who += f" pid {pid}" if pid is not None else " (unknown: recorded by an older version)"
    if host is not None:
        who += f" on {host}"
    beat = f"{age:.0f} s ago" if age is not None else "at an unknown time"
    return RunInProgressError(
        f"run {run_id} is still running: {who} last refreshed its heartbeat {beat}. Resuming "
        "it now would run its samples a second time, at once. Wait for it to finish, or stop "
        "that process and resume then (a run whose process is gone reads as interrupted; on "
        f"another host, once its heartbeat is older than {STALE_AFTER_S:.0f} s)",
        run_id=run_id,
        pid=pid,
        host=host,
        heartbeat_age_s=age,
    )


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
