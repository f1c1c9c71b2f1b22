"""The run names kept for online scoring's windows (``online/<rule>/<window>``): only this
server's own scoring writes them, and its own token may move them between stores. A run of
that name from anyone else could stand in for a window, and be chosen by ``aieval compare``
as its baseline."""

from __future__ import annotations

from aieval.errors import ConfigError

__all__ = ["WINDOW_RUN_PREFIX", "refuse_window_name", "window_name_refusal"]

WINDOW_RUN_PREFIX = "online/"


def window_name_refusal(field: str, name: str, remedy: str) -> str | None:
    """Why the run name ``name`` (at ``field``) is refused, or ``None`` when it is not kept."""
    if not name.startswith(WINDOW_RUN_PREFIX):
        return None
    return (
        f"{field}: {name[:200]!r}: names starting with {WINDOW_RUN_PREFIX!r} are reserved for "
        f"online scoring's windows; {remedy}"
    )


def refuse_window_name(field: str, name: str) -> None:
    """Refuse a run an API request would start under a window's name.

    Raises:
        ConfigError: ``name`` starts with ``online/`` (a 422 naming ``field``).
    """
    refusal = window_name_refusal(field, name, "give the run another name")
    if refusal is not None:
        raise ConfigError(refusal)
