"""What a provider that calls another one shares with every such provider."""

from __future__ import annotations

from aieval.providers._base import Provider

__all__ = ["Wrapper"]


class Wrapper:
    """A provider around another, :attr:`inner`, that makes its calls."""

    inner: Provider

    @property
    def base_url(self) -> str | None:
        """The wrapped provider's endpoint, if it has one."""
        return getattr(self.inner, "base_url", None)
