"""Finding keys written in plain text in an eval file, to warn about them."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from aieval._secrets import is_secret_key, url_credentials

if TYPE_CHECKING:
    from aieval.runner._evalfile import EvalConfig

__all__ = ["plaintext_keys"]


def plaintext_keys(config: EvalConfig) -> list[str]:
    """The fields of ``config`` that hold a credential in plain text: the target's credential
    headers (``target.headers.Authorization``...), ``user:password@`` in a ``base_url``, and a
    judge's ``api_key``. They work, but a file is easily shared or committed; ``api_key_env``
    (the name of an environment variable holding the key) keeps the key out of it."""
    found: list[str] = []
    target = config.target
    if target is not None:
        if target.base_url and url_credentials(target.base_url):
            found.append("target.base_url (user:password@)")
        found += _headers(target.headers, "target.headers")
        found += _headers(target.params.get("headers"), "target.params.headers")
    for i, entry in enumerate(config.scorers):
        if not isinstance(entry, dict):
            continue
        ((name, options),) = entry.items()
        if not isinstance(options, dict):
            continue
        if options.get("api_key"):
            found.append(f"scorers[{i}].{name}.api_key")
        url = options.get("base_url")
        if isinstance(url, str) and url_credentials(url):
            found.append(f"scorers[{i}].{name}.base_url (user:password@)")
    return found


def _headers(headers: Any, where: str) -> list[str]:
    if not isinstance(headers, dict):
        return []
    return [
        f"{where}.{name}" for name, value in headers.items() if is_secret_key(str(name)) and value
    ]
