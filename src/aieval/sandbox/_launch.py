"""Start bubblewrap for one run: ``python -I -S _launch.py SETTINGS -- BWRAP-ARGV...``.

Before bubblewrap runs, and so before anything of the run can, this process:

1. joins the run's cgroup directories (``cgroups``: the ``cgroup.procs`` files);
2. lowers ``RLIMIT_NOFILE`` to ``max_open_files`` (soft and hard);
3. when started as root with ``binds``, enters a private mount namespace and bind-mounts each
   source on its staging directory, a path an unprivileged uid can reach (the sources, e.g. a
   Python installation under ``/root``, may not be); the host's mount table is untouched;
4. with ``uid``, drops to that uid and gid with no supplementary groups, so bubblewrap runs
   unprivileged and the sandbox's user namespace maps to that uid, never to root.

It imports nothing of aieval (it runs with ``-S``, outside any virtualenv). A failure is one
line on stderr starting with ``aieval-sandbox-launch:`` and exit status 125.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from typing import Any

_CLONE_NEWNS = 0x00020000
_MS_BIND = 4096
_MS_REC = 16384
_MS_PRIVATE = 1 << 18


def _fail(message: str) -> None:
    sys.stderr.write(f"aieval-sandbox-launch: {message}\n")
    sys.stderr.flush()
    os._exit(125)


def _stage(binds: list[list[str]]) -> None:
    import ctypes  # only here: most launches need no mount

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(_CLONE_NEWNS) != 0:
        _fail(f"cannot enter a private mount namespace: {os.strerror(ctypes.get_errno())}")
    if libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        _fail(f"cannot make the mount namespace private: {os.strerror(ctypes.get_errno())}")
    for source, stage in binds:
        if libc.mount(source.encode(), stage.encode(), None, _MS_BIND | _MS_REC, None) != 0:
            _fail(f"cannot bind {source} on {stage}: {os.strerror(ctypes.get_errno())}")


def main(settings: dict[str, Any], argv: list[str]) -> None:
    """Apply ``settings`` to this process, then become ``argv``."""
    for procs in settings.get("cgroups", []):
        try:
            with open(str(procs), "w") as fh:
                fh.write(str(os.getpid()))
        except OSError as exc:
            _fail(f"cannot join the run's cgroup {procs}: {exc}")
    files = int(settings["max_open_files"])
    try:
        resource.setrlimit(resource.RLIMIT_NOFILE, (files, files))
    except (OSError, ValueError) as exc:
        _fail(f"cannot set RLIMIT_NOFILE to {files}: {exc}")
    if settings.get("binds"):
        _stage(settings["binds"])
    uid = settings.get("uid")
    if uid is not None:
        try:
            os.setgroups([])
            os.setresgid(uid, uid, uid)
            os.setresuid(uid, uid, uid)
        except OSError as exc:
            _fail(f"cannot drop to uid {uid}: {exc}")
    try:
        os.execv(argv[0], argv)
    except OSError as exc:
        _fail(f"cannot run {argv[0]}: {exc}")


if __name__ == "__main__":
    main(json.loads(sys.argv[1]), sys.argv[3:])
