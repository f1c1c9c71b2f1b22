"""Which files an evaluation may read: any (a local run), or only those inside a server's roots.

A server confines each evaluation with :func:`confined_to`; every loader that opens a file a
user named (datasets and their folder members, workflow definitions, output schemas, rubrics,
profiles, imported scorer files, run logs) passes the path through :func:`readable`. Inside a
confinement a path is followed through every symlink and must end inside a root; anything
else, missing or not, gets the same refusal, which names neither the server's paths nor what
the file holds.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path, PurePath

from aieval.errors import ConfigError

__all__ = ["confined_roots", "confined_to", "readable", "refusal", "resolve_inside"]

_ROOTS: ContextVar[tuple[Path, ...] | None] = ContextVar("aieval_file_roots", default=None)


@contextmanager
def confined_to(roots: Sequence[Path]) -> Iterator[None]:
    """Within this block (and tasks and threads started from its context), only files
    inside ``roots`` are read."""
    token = _ROOTS.set(tuple(Path(r).resolve() for r in roots))
    try:
        yield
    finally:
        _ROOTS.reset(token)


def confined_roots() -> tuple[Path, ...] | None:
    """The roots of the current confinement, or ``None`` when reading is unrestricted."""
    return _ROOTS.get()


def readable(path: str | os.PathLike[str], field: str) -> Path:
    """``path`` itself when reading is unrestricted; inside a confinement, its real path.

    Raises:
        ConfigError: the path does not lead to an existing file or folder inside a root.
    """
    roots = _ROOTS.get()
    if roots is None:
        return Path(path)
    # a loader joins a file's folder and a reference it holds ("../rubric.yaml"): the
    # resolved real path decides, so '..' is fine here
    return resolve_inside(os.fspath(path), roots, field, allow_dotdot=True)


def refusal(field: str, value: str, roots: Sequence[Path] = ()) -> ConfigError:
    """The one refusal for a path outside the roots, missing, or unreadable."""
    return ConfigError(
        f"{field}: {_shown(value, roots)!r} is not a file this server may read; name a file inside "
        "a dataset root, by a path relative to it (files outside the dataset roots, and links "
        "leading out of them, are never read)"
    )


def resolve_inside(
    value: str, roots: Sequence[Path], field: str, *, allow_dotdot: bool = False
) -> Path:
    """The real path of ``value`` when it exists inside one of ``roots`` (already resolved).

    A relative path is looked up under each root in turn; ``..`` in a path a caller sent is
    refused outright (unless ``allow_dotdot``).
    """
    if not value:
        raise ConfigError(f"{field}: give a path inside a dataset root")
    if not allow_dotdot and ".." in PurePath(value).parts:
        raise ConfigError(
            f"{field}: '..' is not allowed in {_shown(value, roots)!r}; name a file inside a root"
        )
    path = Path(value)
    candidates = [path] if path.is_absolute() else [root / path for root in roots]
    for candidate in candidates:
        try:
            real = candidate.resolve(strict=True)
        except (OSError, RuntimeError):  # missing, a link loop, no permission
            continue
        if any(real.is_relative_to(root) for root in roots) and os.access(real, os.R_OK):
            return real
    raise refusal(field, value, roots)


def _shown(value: str, roots: Sequence[Path]) -> str:
    """The user's own path, without the roots' location if they gave an absolute one."""
    for root in roots:
        if Path(value).is_absolute() and Path(value).is_relative_to(root):
            return str(Path(value).relative_to(root))
    return value
