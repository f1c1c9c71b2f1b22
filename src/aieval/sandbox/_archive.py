"""Unpacking archives (a repository snapshot, a candidate's files) without escaping the target."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

from aieval.errors import DatasetError

__all__ = ["extract_archive"]


def extract_archive(archive: str | os.PathLike[str], dest: str | os.PathLike[str]) -> list[str]:
    """Extract a tar archive into ``dest``, refusing any member that would land outside it.

    Members with absolute names or ``..`` components, links that point outside ``dest`` (or
    through an earlier symlink), device files and FIFOs are refused before anything is written.

    Args:
        archive: the ``.tar``, ``.tar.gz``, ``.tar.bz2`` or ``.tar.xz`` file.
        dest: the directory to extract into (created if missing).

    Returns:
        The names of the extracted members.

    Raises:
        DatasetError: the archive cannot be read, or a member is refused (named in the message).
    """
    target = Path(dest).resolve()
    target.mkdir(parents=True, exist_ok=True)
    try:
        with tarfile.open(archive) as tar:
            members = tar.getmembers()
            links: set[str] = set()
            for member in members:
                _check(member, target, links)
            # The standard library's "data" filter re-checks every member as it writes.
            tar.extractall(target, members=members, filter="data")
    except tarfile.TarError as exc:
        raise DatasetError(f"cannot extract {os.fspath(archive)}: {exc}") from exc
    except OSError as exc:
        raise DatasetError(f"cannot extract {os.fspath(archive)}: {exc.strerror}") from exc
    return [member.name for member in members]


def _check(member: tarfile.TarInfo, target: Path, links: set[str]) -> None:
    name = member.name
    parts = Path(name).parts
    if os.path.isabs(name) or ".." in parts:
        _refuse(name, "its path leaves the target directory")
    if any(str(Path(*parts[:i])) in links for i in range(1, len(parts))):
        _refuse(name, "it would be written through a symbolic link")
    if member.isdev() or member.isfifo():
        _refuse(name, "device files and FIFOs are not extracted")
    if member.issym() or member.islnk():
        base = target / Path(name).parent if member.issym() else target
        pointed = (base / member.linkname).resolve()
        if os.path.isabs(member.linkname) or not pointed.is_relative_to(target):
            _refuse(name, f"it links outside the target directory ({member.linkname!r})")
        links.add(str(Path(*parts)))


def _refuse(name: str, why: str) -> None:
    raise DatasetError(f"refusing archive member {name!r}: {why}; nothing was extracted")
