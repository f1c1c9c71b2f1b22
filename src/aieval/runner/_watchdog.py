"""The watchdog of a local Ray: kills what is left of the cluster once its driver is gone.

A standalone script (the standard library and ``psutil`` only, so it starts in a moment):
``python _watchdog.py PID...``, with a pipe from the driver on its standard input. While the
pipe is open it notes the given processes and every process under them, once a second; when
the pipe closes (the driver ended, or shut its Ray down) it kills those still alive and exits.
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.util
import os
import select
import sys
from pathlib import Path
from typing import Any

__all__ = ["find_psutil", "main", "with_descendants"]

#: Seconds between two looks at the cluster's processes (a worker started since is added).
_REFRESH_SECONDS = 1.0


def find_psutil() -> Any:
    """``psutil``: installed, else the copy Ray ships in its ``thirdparty_files``."""
    try:
        return importlib.import_module("psutil")
    except ImportError:
        spec = importlib.util.find_spec("ray")
        if spec is None or spec.origin is None:
            raise
        sys.path.insert(0, str(Path(spec.origin).parent / "thirdparty_files"))
        return importlib.import_module("psutil")


def process(psutil: Any, pid: int) -> Any:
    """The process ``pid`` (``None`` if it is gone)."""
    try:
        return psutil.Process(pid)
    except psutil.Error:
        return None


def with_descendants(psutil: Any, roots: list[Any]) -> set[Any]:
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
    psutil = find_psutil()
    known = {p for pid in argv if (p := process(psutil, int(pid)))}
    fd = sys.stdin.fileno()
    while not _closed(fd, _REFRESH_SECONDS):
        known = with_descendants(psutil, [p for p in known if p.is_running()])
    for proc in with_descendants(psutil, [p for p in known if p.is_running()]):
        with contextlib.suppress(psutil.Error):
            proc.kill()


if __name__ == "__main__":
    main(sys.argv[1:])
