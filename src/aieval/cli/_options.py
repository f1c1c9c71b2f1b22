"""Options and checks the commands share: one ``--db``, one ``--format``, one executor check,
one way to open an existing store and one atomic writer."""

from __future__ import annotations

import enum
import os
import sys
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape

from aieval.errors import ConfigError, UserError

if TYPE_CHECKING:
    from aieval.store import Store, StoreLocation

__all__ = [
    "RAY_EXTRA_HELP",
    "BaselineDbOption",
    "DbOption",
    "Format",
    "FormatOption",
    "OutputOption",
    "RunRef",
    "check_executor",
    "check_ray",
    "existing_store",
    "existing_store_path",
    "share",
    "store_location",
    "write_atomic",
    "write_text",
]

#: ``pip install 'aieval[ray]'`` for a ``--help`` text (escaped: help is Rich markup, where an
#: unescaped ``[ray]`` would be read as a tag and vanish).
RAY_EXTRA_HELP = escape("pip install 'aieval[ray]'")

DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="Store: an SQLite file, sqlite:///path or postgresql://user@host/db"
        " (default: $AIEVAL_DB or ./aieval.db).",
    ),
]
#: A second store, read like ``--db`` (same type, opened with :func:`existing_store`, as an
#: untrusted file: it is often a download).
BaselineDbOption = Annotated[
    str | None,
    typer.Option(
        "--baseline-db",
        help="Store holding the baseline when not --db: an SQLite file or a database URL.",
    ),
]
RunRef = Annotated[str, typer.Argument(help="Run id, id prefix, or run name (latest).")]
OutputOption = Annotated[
    Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")
]


class Format(enum.StrEnum):
    """Output formats of ``report``, ``compare``, ``code`` and ``code-report``.

    ``md`` is another spelling of ``markdown``: :meth:`canonical` maps it.
    """

    text = "text"
    json = "json"
    markdown = "markdown"
    md = "md"
    html = "html"

    def canonical(self) -> Format:
        """The format itself, with ``md`` read as ``markdown``."""
        return Format.markdown if self is Format.md else self


FormatOption = Annotated[
    Format,
    typer.Option(
        "--format", "-f", help="text (terminal), json, markdown or md (a PR comment), or html."
    ),
]


def share(value: float | None) -> float | None:
    """A share option: a number from 0 to 1 (NaN is no number: it compares false with both)."""
    if value is not None and not 0.0 <= value <= 1.0:
        raise typer.BadParameter(f"must be a number between 0 and 1, got {value!r}")
    return value


def check_executor(executor: str | None) -> None:
    """Refuse an ``--executor`` that names no executor."""
    from aieval.runner import EXECUTORS

    if executor is not None and executor not in EXECUTORS:
        choices = " or ".join(EXECUTORS)
        raise ConfigError(f"--executor: unknown executor {executor!r}; use {choices}")


def check_ray(executor: str | None, ray_address: str | None) -> None:
    """For the Ray executor, that Ray is installed (its install hint before anything runs or is
    stored); for any other, that no ``--ray-address`` was given."""
    if executor == "ray":
        from aieval.runner import import_ray

        import_ray()
    elif ray_address is not None:
        raise ConfigError("--ray-address applies to the Ray executor only; add --executor ray")


def store_location(db: str | None) -> StoreLocation:
    """``--db`` (or ``$AIEVAL_DB``, or ``./aieval.db``) parsed: a path or a database URL."""
    from aieval.store import default_location, parse_location  # the store loads only when used

    return parse_location(db) if db else default_location()


def existing_store_path(db: str | None) -> StoreLocation:
    """``--db`` (or the default store), which must exist: commands that read never create one
    (an SQLite file must be there; a PostgreSQL database is checked when connected to)."""
    location = store_location(db)
    if location.path is not None and not location.path.is_file():
        raise UserError(f"no store at {location}; run an eval first or pass --db")
    return location


def existing_store(db: str | None, *, untrusted: bool = False) -> Store:
    """The existing store at ``--db`` (or the default store); ``untrusted``: a file someone
    else made (``--baseline-db``), opened read-only with its schema checked and each query
    timed."""
    from aieval.errors import StoreError, UntrustedStoreError
    from aieval.store import Store

    location = existing_store_path(db)
    if not untrusted:
        return Store(location)
    try:
        return Store(location, untrusted=True)
    except UntrustedStoreError:
        raise
    except StoreError as exc:  # not a database, cut short...: a bad input (exit 2), never
        # "blocked" (exit 1)
        raise UntrustedStoreError(str(exc)) from exc


def write_text(text: str, output: Path | None) -> None:
    """``text`` to ``output`` (atomically) or, ending in a newline, to stdout."""
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    write_atomic(output, text)


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder, so readers never see half a document."""
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise UserError(f"cannot write {path}: folder {folder} does not exist")
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would hide a shared report from its readers
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
