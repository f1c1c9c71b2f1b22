"""The running evaluation's model endpoint and store, for judges that name none of their own.

The runner sets it for the duration of a run (tasks it starts inherit it), so an ``llm_judge``
without ``provider=``/``base_url=`` calls the same gateway as the target, and every judge keeps
its response cache in the run's store rather than in a file of the working directory.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from dataclasses import dataclass, field

__all__ = ["RunEndpoint", "current_endpoint", "enter_endpoint", "leave_endpoint"]


@dataclass(frozen=True, slots=True)
class RunEndpoint:
    """Where the current run's target calls go, and where the run is stored.

    Attributes:
        provider: the run's provider name or preset (``None`` for an instance or no provider).
        base_url: the run's endpoint override, if any.
        store_path: the run's SQLite store, if it has one.
        api_key_env: the variable holding the target's key, if the run names one.
        credential_headers: the target's credential headers (``Authorization``...), if any;
            held in memory for judges on the same endpoint, never stored.
    """

    provider: str | None = None
    base_url: str | None = None
    store_path: str | None = None
    api_key_env: str | None = None
    credential_headers: tuple[tuple[str, str], ...] = field(default=(), repr=False)

    def credential_for(self, provider: str, base_url: str | None) -> RunEndpoint | None:
        """This run's endpoint when ``provider`` and ``base_url`` are its own (the same
        provider name, the same base URL but for a trailing ``/``), else ``None``."""
        if self.provider is None or provider != self.provider:
            return None
        return self if _url(base_url) == _url(self.base_url) else None


def _url(url: str | None) -> str | None:
    return url.rstrip("/") if url else None


_current: ContextVar[RunEndpoint | None] = ContextVar("aieval_run_endpoint", default=None)


def current_endpoint() -> RunEndpoint | None:
    """The endpoint of the run being executed, or ``None`` outside a run."""
    return _current.get()


def enter_endpoint(endpoint: RunEndpoint) -> Token[RunEndpoint | None]:
    """Make ``endpoint`` the current run's; give the token back to :func:`leave_endpoint`."""
    return _current.set(endpoint)


def leave_endpoint(token: Token[RunEndpoint | None]) -> None:
    """Restore the endpoint that was current before :func:`enter_endpoint`."""
    _current.reset(token)
