"""``aieval push``: copy runs from the local store to a team store or server."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Annotated

import typer

from aieval._terminal import printable
from aieval.cli._exits import EXIT_INTERRUPTED, EXIT_TERMINATED
from aieval.cli._options import DbOption, existing_store
from aieval.cli._print import err, out
from aieval.cli._run import Interrupted
from aieval.cli._signals import Termination, sigterm_as_interrupt
from aieval.errors import ConfigError

if TYPE_CHECKING:
    from collections.abc import Callable

    from aieval.push import PushTarget, RunPushed
    from aieval.store import RunRow, Store

__all__ = ["push_command"]

_SERVER_SCHEMES = ("http://", "https://")


def push_command(
    runs: Annotated[
        list[str] | None,
        typer.Argument(
            help="Run ids, id prefixes or run names (a name is every run of that name); "
            "every run when none is given.",
            show_default=False,
        ),
    ] = None,
    to: Annotated[
        str,
        typer.Option(
            "--to",
            help="The target: another store (a path), or an aieval serve address "
            "(https://host:port).",
            show_default=False,
        ),
    ] = "",
    token: Annotated[
        str | None,
        typer.Option(
            envvar="AIEVAL_TOKEN", help="The server's bearer token (for an https:// target)."
        ),
    ] = None,
    db: DbOption = None,
) -> None:
    """Copy runs with their samples, scores, model calls and config to a team store or server.

    Same run ids and numbers on the target; pushing again adds nothing, and a run that changed
    since (resumed, finished) is updated, never duplicated. A run still running is left for a
    later push."""
    from aieval.push import push_runs

    if not to:
        raise ConfigError("--to: missing; give a store path or a server address")
    source = existing_store(db)
    target = _target(to, token, source)
    started = time.monotonic()
    terminated = Termination()
    try:
        with sigterm_as_interrupt(terminated):
            summary = push_runs(source, target, runs or (), progress=_progress(), on_run=_pushed)
    except KeyboardInterrupt:
        err.print(
            "interrupted; the runs listed above are pushed, the one in progress is written whole "
            "or not at all: push again to finish",
            highlight=False,
            soft_wrap=True,
        )
        raise Interrupted(EXIT_TERMINATED if terminated.received else EXIT_INTERRUPTED) from None
    finally:
        target.close()
        source.close()
    seconds = time.monotonic() - started
    out.print(printable(f"{summary.line()} ({seconds:.1f} s)"), highlight=False)


def _target(to: str, token: str | None, source: Store) -> PushTarget:
    from aieval.push import ServerTarget, StoreTarget
    from aieval.store import Store, parse_location

    if to.lower().startswith(_SERVER_SCHEMES):
        return ServerTarget(to, token)
    try:
        location = parse_location(to)  # a path, sqlite:///..., postgresql://...
    except ConfigError as exc:
        raise ConfigError(f"--to: {exc}; or give a server address (https://host:port)") from None
    mine = source.location
    same = (
        location.path.resolve() == mine.path.resolve()
        if location.path is not None and mine.path is not None
        else location.redacted == mine.redacted
    )
    if same:
        raise ConfigError(f"--to: {location} is the store being pushed (--db); name another store")
    return StoreTarget(Store(location))


def _pushed(run: RunPushed) -> None:
    line = f"{run.run_id} ({run.name}): {run.outcome}, {run.samples} samples copied"
    err.print(printable(line), highlight=False)


def _progress() -> Callable[[RunRow, int, int], None]:
    last = [0.0]

    def report(run: RunRow, done: int, total: int) -> None:
        now = time.monotonic()
        if total >= 1000 and (now - last[0] >= 2.0 or done == total):
            last[0] = now
            err.print(printable(f"{run.id}: {done}/{total} samples sent"), highlight=False)

    return report
