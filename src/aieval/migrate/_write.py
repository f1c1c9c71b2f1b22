"""Write an import's files into its output folder: all of them or none, never through a link.

The output folder may hold links someone else left there (a dangling ``eval.yaml ->
~/.bashrc``): a write through one lands outside the folder. So the folder is opened once
(itself not a link), every file is written to a new temporary file in it (``O_EXCL``,
``O_NOFOLLOW``, relative to the opened folder) and renamed over its name only when all are
written; a name that is a link, or not a regular file, is refused before anything is written.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import stat
from collections.abc import Mapping
from pathlib import Path

from aieval.errors import ConfigError

__all__ = ["write_files"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)


def write_files(directory: Path, files: Mapping[str, bytes], *, overwrite: bool) -> None:
    """Write ``files`` (a plain name to its content) into ``directory``, created if missing.

    Raises:
        ConfigError: ``directory`` is a link or not a folder; a name in it is a link or not a
            regular file; a name already exists and ``overwrite`` is false; or writing failed
            (then none of the files was changed).
    """
    for name in files:
        if not name or name != Path(name).name or name in {".", ".."}:
            raise ValueError(f"not a plain file name: {name!r}")
    folder = _open_folder(directory)
    try:
        _check_names(directory, folder, files, overwrite)
        temps = _write_temps(directory, folder, files)
        try:
            for name, temp in temps.items():
                os.replace(temp, name, src_dir_fd=folder, dst_dir_fd=folder)
        except OSError as exc:
            raise ConfigError(f"{directory}: cannot write: {exc.strerror or exc}") from None
        finally:
            _remove(folder, list(temps.values()))  # those not renamed, when one failed
    finally:
        os.close(folder)


def _open_folder(directory: Path) -> int:
    try:
        if directory.is_symlink():
            raise ConfigError(
                f"{directory}: the output folder is a link; give the folder it leads to"
            )
        if directory.exists() and not directory.is_dir():
            raise ConfigError(f"{directory}: not a directory")
        directory.mkdir(parents=True, exist_ok=True)
        return os.open(directory, os.O_RDONLY | _DIRECTORY | _NOFOLLOW)
    except OSError as exc:
        raise ConfigError(f"{directory}: cannot use as the output folder: {exc}") from None


def _check_names(directory: Path, folder: int, names: Mapping[str, bytes], overwrite: bool) -> None:
    present = []
    for name in names:
        try:
            info = os.lstat(name, dir_fd=folder)
        except FileNotFoundError:
            continue
        if stat.S_ISLNK(info.st_mode) or not stat.S_ISREG(info.st_mode):
            kind = "a link" if stat.S_ISLNK(info.st_mode) else "not a regular file"
            raise ConfigError(
                f"{directory / name} is {kind}; the import writes only plain files inside its "
                "folder and never through a link: remove it or choose another folder"
            )
        present.append(name)
    if present and not overwrite:
        raise ConfigError(
            f"{directory}: already holds {', '.join(present)}; choose another directory "
            "or pass --overwrite"
        )


def _write_temps(directory: Path, folder: int, files: Mapping[str, bytes]) -> dict[str, str]:
    temps: dict[str, str] = {}
    try:
        for name, content in files.items():
            temp = f".{name}.{secrets.token_hex(6)}.tmp"
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
            fd = os.open(temp, flags, 0o644, dir_fd=folder)
            temps[name] = temp
            with os.fdopen(fd, "wb") as handle:
                handle.write(content)
                handle.flush()
                os.fsync(handle.fileno())
    except OSError as exc:
        _remove(folder, list(temps.values()))
        raise ConfigError(f"{directory}: cannot write: {exc.strerror or exc}") from None
    except BaseException:
        _remove(folder, list(temps.values()))
        raise
    return temps


def _remove(folder: int, names: list[str]) -> None:
    for name in names:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name, dir_fd=folder)
