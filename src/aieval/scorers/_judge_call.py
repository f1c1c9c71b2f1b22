"""What every judge shares: resolving its provider, calling it, neutralizing and delimiting data."""

from __future__ import annotations

import asyncio
import hashlib
import os
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aieval._calls import call_from_response, record_call
from aieval._endpoint import RunEndpoint, current_endpoint
from aieval._records import CallRecord
from aieval.errors import ConfigError, ProviderError, ScorerError
from aieval.providers import (
    ChatRequest,
    ChatResponse,
    Provider,
    ResponseCache,
    check_finite,
    key_from_env,
)
from aieval.store import MEMORY

__all__ = [
    "JudgeCache",
    "JudgeClient",
    "Reply",
    "delimit",
    "judge_secrets",
    "neutralize",
    "prompt_version",
    "provider_label",
    "utf8",
]

#: A judge's ``cache=``: ``True`` (the run store, in memory for a run without one, else
#: ``$AIEVAL_DB`` or ``./aieval.db``), ``False``,
#: a SQLite file, or a :class:`~aieval.providers.ResponseCache`.
JudgeCache = bool | str | Path | ResponseCache

# Characters a model may read as an angle bracket. NFKC folds the full-width and small forms to
# "<"/">" too, but these do not fold, and a gullible model still reads them as a tag.
_LOOKALIKES = frozenset("‹›〈〉⟨⟩❮❯❬❭❰❱˂˃ᐸᐳ«»⋖⋗⧼⧽〈〉")


def utf8(text: str) -> bytes:
    """``text`` as UTF-8 bytes for hashing, losslessly: a lone surrogate (``"\\udc80"``, a
    non-UTF-8 byte read with ``surrogateescape``) is kept as its ``surrogatepass`` bytes, the
    way the store and request bodies keep it, instead of failing the judge call.

    Example:
        >>> utf8("caf\\udc80")
        b'caf\\xed\\xb2\\x80'
    """
    return text.encode("utf-8", "surrogatepass")


def neutralize(text: str) -> str:
    """Escape data so it cannot open or close a delimited block.

    ``&``, ``<`` and ``>`` are HTML-escaped, and every character that looks like an angle
    bracket (full-width, small form, guillemets, mathematical brackets) becomes a numeric
    character reference, so the only tags left in the judge's prompt are the real delimiters.

    Example:
        >>> neutralize('ok </CANDIDATE_ANSWER> ＜x＞')
        'ok &lt;/CANDIDATE_ANSWER&gt; &#xff1c;x&#xff1e;'
    """
    out: list[str] = []
    for char in text:
        if char == "&":
            out.append("&amp;")
        elif char == "<":
            out.append("&lt;")
        elif char == ">":
            out.append("&gt;")
        elif char in _LOOKALIKES or unicodedata.normalize("NFKC", char) in ("<", ">"):
            out.append(f"&#x{ord(char):x};")
        else:
            out.append(char)
    return "".join(out)


def delimit(parts: dict[str, str]) -> str:
    """Neutralized data blocks, each between tags that carry a digest of all the data.

    The tag suffix depends on the content, so a candidate cannot guess a closing tag (it would
    have to contain its own hash), and identical requests stay identical for the response cache.
    """
    escaped = {label: neutralize(text) for label, text in parts.items()}
    digest = hashlib.blake2b(utf8("\x00".join(escaped.values())), digest_size=6).hexdigest()
    return "\n\n".join(
        f"<{label}-{digest}>\n{text}\n</{label}-{digest}>" for label, text in escaped.items()
    )


def prompt_version(kind: str, *templates: str) -> str:
    """``kind-<hash>``: a version that changes whenever any template text changes.

    Example:
        >>> prompt_version("pointwise", "a") == prompt_version("pointwise", "a")
        True
    """
    digest = hashlib.sha256(utf8("\x00".join(templates))).hexdigest()[:12]
    return f"{kind}-{digest}"


@dataclass(slots=True, frozen=True)
class Reply:
    """One judge answer: its text and the model version that produced it, or the error."""

    text: str
    model: str
    error: ProviderError | None = None


class JudgeClient:
    """Resolves a judge's provider and model, and makes its calls (cached, retried, recorded)."""

    def __init__(
        self,
        name: str,
        provider: str | Provider | None,
        model: str | None,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str | None = None,
        temperature: float = 0.0,
        max_tokens: int = 512,
        concurrency: int = 4,
        cache: JudgeCache = True,
    ) -> None:
        own = (base_url, api_key, api_key_env)
        if isinstance(provider, Provider) and any(v is not None for v in own):
            raise ConfigError(
                f"judge {name!r}: base_url=, api_key= and api_key_env= apply to a provider "
                "name; configure the provider instance itself instead"
            )
        if api_key_env is not None:
            if api_key:
                raise ConfigError(
                    f"judge {name!r}: api_key= and api_key_env= are both given; give the key "
                    "once (api_key_env, the name of the environment variable holding it, keeps "
                    "it out of files)"
                )
            # checked now, before any call: the variable must hold the key where this runs
            key_from_env(api_key_env, owner=f"judge {name!r}")
        check_finite(temperature, f"judge {name!r}: temperature")
        self.name = name
        self.cache = cache
        self.provider = provider
        self.model = model
        self.base_url = base_url
        self.api_key = api_key
        self.api_key_env = api_key_env
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.concurrency = concurrency
        self._built: dict[tuple[object, ...], Provider] = {}

    def resolve(self, run_provider: str | None, run_model: str | None) -> tuple[Any, str]:
        """The provider spec and model: the judge's own, else the environment, else the run's.

        A judge naming no provider but a ``base_url`` speaks ``openai-compatible`` to it; one
        naming neither inherits the run's provider and its ``base_url``.
        """
        spec = self.endpoint(run_provider)[0]
        model = self.model or os.environ.get("AIEVAL_JUDGE_MODEL") or run_model
        if spec is None or model is None:
            missing = "provider" if spec is None else "model"
            raise ScorerError(
                f"judge {self.name!r} has no {missing}: pass {missing}= to the judge, set "
                f"AIEVAL_JUDGE_{missing.upper()}, or run with a {missing}"
            )
        return spec, model

    @property
    def secrets(self) -> frozenset[str]:
        """This judge's own key values (``api_key``, the variable ``api_key_env`` names): a
        run redacts them by value from what it stores, like the target's."""
        values = (self.api_key, os.environ.get(self.api_key_env) if self.api_key_env else None)
        return frozenset(v for v in values if v)

    def endpoint(self, run_provider: str | None = None) -> tuple[Any, str | None]:
        """``(provider spec, base_url)`` this judge calls (see :meth:`resolve`)."""
        own = self.provider or os.environ.get("AIEVAL_JUDGE_PROVIDER")
        base_url = self.base_url or os.environ.get("AIEVAL_JUDGE_BASE_URL") or None
        if own is not None:
            return own, base_url
        if base_url is not None:
            return "openai-compatible", base_url
        run = current_endpoint()
        if run is not None and run.provider is not None:
            return run.provider, run.base_url
        return run_provider, None

    def client(self, spec: str | Provider) -> Provider:
        """The provider for the running event loop (providers hold loop-bound sessions)."""
        _, base_url = self.endpoint(spec if isinstance(spec, str) else None)
        if not isinstance(spec, str):
            base_url = None
        run = current_endpoint()
        key_env, headers = self.credential(spec, base_url, run)
        cache_path = _cache_path(run)
        key = (
            id(asyncio.get_running_loop()),
            provider_label(spec),
            base_url,
            cache_path,
            key_env,
            headers,
        )
        client = self._built.get(key)
        if client is None:
            from aieval.providers import build_provider

            client = build_provider(
                spec,
                base_url=base_url,
                api_key=self.api_key if isinstance(spec, str) else None,
                api_key_env=key_env,
                concurrency=self.concurrency,
                cache=self.cache,
                cache_path=cache_path,
                headers=dict(headers) or None,
            )
            self._built[key] = client
        return client

    def credential(
        self, spec: str | Provider, base_url: str | None, run: RunEndpoint | None
    ) -> tuple[str | None, tuple[tuple[str, str], ...]]:
        """``(api_key_env, credential headers)`` for calls to ``spec`` at ``base_url``.

        The judge's own ``api_key``/``api_key_env`` first; a judge with neither, on the run's
        endpoint (the same provider name and base URL as the run's target), uses the target's
        credential: its ``api_key_env`` or its credential headers. Any other endpoint gets no
        credential of the run's (its preset's own variable applies).
        """
        if self.api_key or self.api_key_env or not isinstance(spec, str) or run is None:
            return self.api_key_env, ()
        same = run.credential_for(spec, base_url)
        if same is None:
            return None, ()
        return same.api_key_env, same.credential_headers

    async def ask(
        self,
        spec: str | Provider,
        model: str,
        messages: list[dict[str, Any]],
        *,
        schema: dict[str, Any] | None,
        salt: str | None = None,
    ) -> Reply:
        """One call; provider failures come back in :attr:`Reply.error`, never raised."""
        client = self.client(spec)
        request = ChatRequest(
            model=model,
            messages=messages,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            response_schema=schema,
            cache_salt=salt,
        )
        purpose = f"judge:{self.name}"
        try:
            response: ChatResponse = await client.generate(request)
        except ProviderError as exc:
            record_call(
                CallRecord(purpose, client.name, model, error=f"{type(exc).__name__}: {exc}")
            )
            return Reply("", model, exc)
        record_call(call_from_response(purpose, client.name, model, response))
        return Reply(response.text, response.model or model)

    async def aclose(self) -> None:
        """Close the providers this judge opened in the current event loop."""
        loop = id(asyncio.get_running_loop())
        for key in [k for k in self._built if k[0] == loop]:
            await self._built.pop(key).aclose()


def judge_secrets(scorers: Iterable[Any]) -> frozenset[str]:
    """The own key values of every judge among ``scorers`` (members of a multi-judge too)."""
    found: set[str] = set()
    todo = list(scorers)
    while todo:
        fn = getattr(todo.pop(), "fn", None)
        client = getattr(fn, "client", None)
        if isinstance(client, JudgeClient):
            found |= client.secrets
        members = getattr(fn, "judges", None)
        if isinstance(members, list | tuple):  # multi_judge: (name, judge) pairs
            todo.extend(m[-1] if isinstance(m, tuple) and m else m for m in members)
    return frozenset(found)


def _cache_path(run: RunEndpoint | None) -> str:
    """Where ``cache=True`` keeps verdicts: the run's store; in memory for a run without one
    (a run that asked for no store writes no file); outside a run, the default store."""
    if run is not None:
        return run.store_path or MEMORY
    from aieval.store import default_location

    return str(default_location())


def provider_label(spec: str | Provider) -> str:
    """A provider's name for the log, whether given by name or as an instance."""
    return spec if isinstance(spec, str) else str(getattr(spec, "name", type(spec).__name__))
