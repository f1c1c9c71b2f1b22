"""Start bubblewrap for one run: ``python -I -S _launch.py SETTINGS -- BWRAP-ARGV...``.

Before bubblewrap runs, and so before anything of the run can, this process:

1. joins the run's cgroup directories (``cgroups``: the ``cgroup.procs`` files);
2. lowers ``RLIMIT_NOFILE`` to ``max_open_files`` (soft and hard);
3. with ``binds`` or ``scratch``, enters a private mount namespace (as root; otherwise in a
   user namespace of its own that maps only its own uid and gid), so the host's mount table is
   untouched. When started as root it bind-mounts each of ``binds`` on its staging directory, a
   path an unprivileged uid can reach (the sources, e.g. a Python installation under
   ``/root``, may not be). It mounts a tmpfs on each ``scratch`` mount point with that size
   and inode count, owned by the uid bubblewrap runs as: bubblewrap binds them at ``/tmp`` and
   ``/dev/shm`` (its own ``--tmpfs`` bounds bytes only, never the number of files);
4. with ``uid``, drops to that uid and gid with no supplementary groups, so bubblewrap runs
   unprivileged and the sandbox's user namespace maps to that uid, never to root.

It imports nothing of aieval (it runs with ``-S``, outside any virtualenv). A failure is one
line on stderr starting with ``aieval-sandbox-launch:`` and exit status 125. With ``probe``,
it exits 0 once the mounts are made, without running anything.
"""

from __future__ import annotations

import json
import os
import resource
import sys
from typing import Any

_CLONE_NEWNS = 0x00020000
_CLONE_NEWUSER = 0x10000000
_MS_NOSUID = 2
_MS_NODEV = 4
_MS_BIND = 4096
_MS_REC = 16384
_MS_PRIVATE = 1 << 18


def _fail(message: str) -> None:
    sys.stderr.write(f"aieval-sandbox-launch: {message}\n")
    sys.stderr.flush()
    os._exit(125)


def _mounts(settings: dict[str, Any]) -> None:
    """Make the staging binds and the scratch file systems, in a private mount namespace."""
    import ctypes  # only here: a launch without mounts needs none

    libc = ctypes.CDLL(None, use_errno=True)
    binds: list[list[str]] = settings.get("binds") or []
    uid = settings.get("uid")
    owner = (os.getuid(), os.getgid()) if uid is None else (uid, uid)
    if os.geteuid() != 0 or libc.unshare(_CLONE_NEWNS) != 0:
        if binds:
            _fail(f"cannot enter a private mount namespace: {os.strerror(ctypes.get_errno())}")
        # Not root (or root without the right to mount): a user namespace of our own, mapping
        # only our ids, may mount a tmpfs.
        if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS) != 0:
            _fail(f"cannot enter a private mount namespace: {os.strerror(ctypes.get_errno())}")
        try:
            for name, text in (
                ("uid_map", f"{owner[0]} {owner[0]} 1"),
                ("setgroups", "deny"),
                ("gid_map", f"{owner[1]} {owner[1]} 1"),
            ):
                with open(f"/proc/self/{name}", "w") as fh:
                    fh.write(text)
        except OSError as exc:
            _fail(f"cannot map our ids in a user namespace of our own: {exc}")
    if libc.mount(None, b"/", None, _MS_REC | _MS_PRIVATE, None) != 0:
        _fail(f"cannot make the mount namespace private: {os.strerror(ctypes.get_errno())}")
    for source, stage in binds:
        if libc.mount(source.encode(), stage.encode(), None, _MS_BIND | _MS_REC, None) != 0:
            _fail(f"cannot bind {source} on {stage}: {os.strerror(ctypes.get_errno())}")
    for point, size, inodes in settings.get("scratch") or []:
        options = (
            f"size={int(size)},nr_inodes={int(inodes)},mode=0755,uid={owner[0]},gid={owner[1]}"
        )
        flags = _MS_NOSUID | _MS_NODEV
        if libc.mount(b"tmpfs", str(point).encode(), b"tmpfs", flags, options.encode()) != 0:
            _fail(f"cannot mount the scratch tmpfs on {point}: {os.strerror(ctypes.get_errno())}")


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
    if settings.get("binds") or settings.get("scratch"):
        _mounts(settings)
    if settings.get("probe"):
        os._exit(0)
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
