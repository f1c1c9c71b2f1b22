"""What a run lends the judges on its own endpoint: provider, base URL and credential."""

from __future__ import annotations

from aieval._endpoint import RunEndpoint
from aieval._secrets import is_secret_key
from aieval.runner._spec import RunSpec

__all__ = ["run_endpoint"]


def run_endpoint(spec: RunSpec, store_path: str | None, *, named: bool = True) -> RunEndpoint:
    """What judges without an endpoint of their own inherit from this run: its provider and
    base URL (when the provider is ``named``, not an instance), its key's variable and its
    credential headers (see :meth:`RunEndpoint.credential_for`)."""
    if not named or spec.target.provider is None:
        return RunEndpoint(store_path=store_path)
    headers = spec.target.params.get("headers")
    credentials = tuple(
        (name, value)
        for name, value in (headers.items() if isinstance(headers, dict) else ())
        if isinstance(name, str) and isinstance(value, str) and is_secret_key(name)
    )
    return RunEndpoint(
        spec.target.provider, spec.target.base_url, store_path, spec.target.api_key_env, credentials
    )
