"""Lend a checkout to the sandbox's host uid for one run, and take it back afterwards.

A root caller runs the sandbox as an unprivileged host uid, which could not write a checkout
owned by root. For the run, every entry owned by the checkout's owner goes to that uid;
afterwards those entries get their owner back and what the run created goes to the
checkout's owner; set-user-ID and set-group-ID bits of regular files it held are cleared.
Entries of other owners (e.g. a folder deliberately given to ``nobody``) are left as they
are. Symbolic links are never followed.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

__all__ = ["lent_to"]

_SET_ID = stat.S_ISUID | stat.S_ISGID


def _entries(root: Path) -> Iterator[str]:
    yield str(root)
    for folder, dirs, files in os.walk(root, followlinks=False):
        for name in (*dirs, *files):
            yield os.path.join(folder, name)


@contextlib.contextmanager
def lent_to(root: Path, uid: int) -> Iterator[None]:
    """Give ``root``'s tree to ``uid`` (and gid ``uid``) for the duration of the block."""
    top = os.lstat(root)
    owner = (top.st_uid, top.st_gid)
    lent: dict[str, tuple[int, int]] = {}
    try:
        for path in _entries(root):
            info = os.lstat(path)
            if info.st_uid == owner[0]:
                lent[path] = (info.st_uid, info.st_gid)
                os.lchown(path, uid, uid)
        yield
    finally:
        for path in _entries(root):
            try:
                info = os.lstat(path)
            except FileNotFoundError:
                continue
            if path in lent:
                if (info.st_uid, info.st_gid) != lent[path]:
                    os.lchown(path, *lent[path])
            elif info.st_uid == uid:
                os.lchown(path, *owner)
            else:
                continue
            # The run could rewrite what it held: no set-ID bits may survive on its files.
            if stat.S_ISREG(info.st_mode) and info.st_mode & _SET_ID:
                os.chmod(path, stat.S_IMODE(info.st_mode) & ~_SET_ID)
