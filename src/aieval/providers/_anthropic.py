"""A provider for Anthropic's Messages API, through the official SDK (the ``anthropic`` extra)."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import os
import time
from collections.abc import Mapping
from types import ModuleType
from typing import Any

from aieval._secrets import secret_values, shorten, url_credentials, url_without_credentials
from aieval.errors import (
    ConfigError,
    ProviderAuthError,
    ProviderConnectionError,
    ProviderError,
    ProviderRequestError,
    ProviderResponseError,
    ProviderTimeoutError,
)
from aieval.providers._base import ChatRequest, ChatResponse
from aieval.providers._cache import headers_digest
from aieval.providers._credentials import (
    auth_hint,
    check_key_and_headers,
    check_one_credential,
    check_request_credentials,
    credential_header,
    has_authorization,
)
from aieval.providers._headers import check_headers
from aieval.providers._http import error_for_status, error_message, redact
from aieval.providers._params import check_request

__all__ = ["AnthropicProvider"]

_DEFAULT_MAX_TOKENS = 1024
_INSTALL_HINT = "the anthropic provider needs the SDK: pip install 'aieval[anthropic]'"
# headers that carry the credential: the SDK sends the key as one of them (Authorization in newer
# versions, X-Api-Key in older ones)
_CREDENTIAL_HEADERS = ("authorization", "x-api-key")
_AUTH_HINT = auth_hint("ANTHROPIC_API_KEY")
_FINISH_REASONS = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "max_tokens": "length",
    "tool_use": "tool_calls",
}


def _import_sdk() -> ModuleType:
    try:
        return importlib.import_module("anthropic")
    except ImportError as exc:
        raise ConfigError(_INSTALL_HINT) from exc


class AnthropicProvider:
    """Calls Anthropic's ``POST /v1/messages`` with the official async SDK.

    System messages become the ``system`` prompt; ``stop`` becomes ``stop_sequences``;
    ``response_schema`` is sent as a JSON-schema output format; other params pass through.
    The SDK's own retries are off: wrap this in :class:`~aieval.providers.ResilientProvider`.

    Args:
        api_key: defaults to ``ANTHROPIC_API_KEY``; a missing key fails here, not mid-run.
        base_url: defaults to ``ANTHROPIC_BASE_URL``, else Anthropic's API.
        name: the provider's name in messages, reports and cache keys.
        timeout: seconds for a whole request.
        default_max_tokens: ``max_tokens`` when the request does not set one (the API needs it).
        headers: extra HTTP headers for every request (a request's own
            :attr:`~aieval.providers.ChatRequest.headers` are added over them).
        key_source: where ``api_key`` came from (``"api_key="``, ``"MY_KEY"``...), named when
            the server refuses it.
    """

    sends_headers = True

    def __init__(
        self,
        api_key: str | None = None,
        *,
        base_url: str | None = None,
        name: str = "anthropic",
        timeout: float = 60.0,
        default_max_tokens: int = _DEFAULT_MAX_TOKENS,
        headers: Mapping[str, str] | None = None,
        key_source: str | None = None,
    ) -> None:
        self._sdk = _import_sdk()
        # the SDK's HTTP client sends header values as ASCII and passes control characters on
        headers = check_headers(headers or {}, "headers", ascii_only=True)
        header = credential_header(headers, _CREDENTIAL_HEADERS)
        self._api_key = api_key or os.environ.get("ANTHROPIC_API_KEY") or None
        key_source = (key_source or "api_key=") if api_key else "ANTHROPIC_API_KEY"
        self._key_source = key_source
        if not self._api_key and header is None:
            raise ProviderAuthError(
                f"provider {name!r} needs an API key: {_AUTH_HINT} (or give the credential as "
                "an Authorization or x-api-key header)"
            )
        in_authorization = _key_in_authorization(self._sdk)
        # the SDK puts the key in its credential header and lets a header of ours replace it
        # (or sends both): a key and a credential header are refused together
        check_key_and_headers(
            name,
            self._api_key,
            headers,
            key_source=key_source,
            key_sent_as="'Authorization: Bearer ...'" if in_authorization else "'X-Api-Key'",
            names=_CREDENTIAL_HEADERS,
        )
        if header is not None and os.environ.get("ANTHROPIC_AUTH_TOKEN"):
            # without a key the SDK reads this variable and sends it as Authorization
            raise ConfigError(
                f"provider {name!r}: ANTHROPIC_AUTH_TOKEN (sent by the SDK as 'Authorization: "
                f"Bearer ...') and the credential header headers.{header} are both given; one "
                "would silently replace the other (or both would be sent). Give the credential "
                f"once: drop headers.{header}, or unset ANTHROPIC_AUTH_TOKEN"
            )
        self.name = name
        url = (base_url or os.environ.get("ANTHROPIC_BASE_URL") or "").rstrip("/") or None
        # the HTTP client sends URL credentials as the Authorization header, replacing any
        # other credential there without a word: a second one is refused before any call
        check_one_credential(
            name,
            url,
            key=self._api_key if in_authorization else None,
            key_source=key_source,
            headers=headers,
            url_source="base_url" if base_url else "ANTHROPIC_BASE_URL",
        )
        self._url = url
        self._url_credentials = bool(url and url_credentials(url))
        # shown, logged and cached without a "user:password@"; requests use the real URL
        self.base_url = url_without_credentials(url) if url else None
        self._headers = dict(headers or {})
        self.headers_digest = headers_digest(self._headers)
        """A digest of ``headers`` (never their values) for the response-cache key."""
        self.secrets: frozenset[str] = frozenset(
            secret_values({"url": url or "", "headers": self._headers})
        ) | ({self._api_key} if self._api_key else set())
        """Every configured secret value (key, header values, URL credentials): never shown."""
        self.timeout = timeout
        self.default_max_tokens = default_max_tokens
        self._client: Any = None
        self._client_loop: asyncio.AbstractEventLoop | None = None

    @property
    def cache_settings(self) -> dict[str, Any]:
        """Settings that change the request body, where not on their default: part of the
        response-cache key (``{}`` on defaults, so those keys stay as they were)."""
        if self.default_max_tokens == _DEFAULT_MAX_TOKENS:
            return {}
        return {"default_max_tokens": self.default_max_tokens}

    def check_request_headers(self, headers: Mapping[str, str], field: str = "headers") -> None:
        """Refuse a request's own credential header (``Authorization``, ``x-api-key``) when
        this provider sends one (its key, its URL credentials or its own header): the SDK would
        let it replace that one, or send both."""
        own = credential_header(self._headers, _CREDENTIAL_HEADERS)
        configured = [
            source
            for source, given in (
                (self._key_source, self._api_key),
                ("base_url's user:password@", self._url_credentials),
                (f"its headers.{own}", own),
            )
            if given
        ]
        check_request_credentials(
            self.name, headers, configured, names=_CREDENTIAL_HEADERS, field=field
        )

    def _refused(self) -> str:
        """What a 401/403 refused (which credential, from where) and where a key goes."""
        own = credential_header(self._headers, _CREDENTIAL_HEADERS)
        sent = f"the key from {self._key_source}" if self._api_key else f"headers.{own}"
        return f"{sent} was refused; {_AUTH_HINT}"

    def __repr__(self) -> str:
        key = "'***'" if self._api_key else "None"
        return f"AnthropicProvider(name={self.name!r}, base_url={self.base_url!r}, api_key={key})"

    def _get_client(self) -> Any:
        loop = asyncio.get_running_loop()
        if self._client is None or self._client_loop is not loop:
            # The SDK's connection pool is bound to the loop it first ran in.
            self._client = self._sdk.AsyncAnthropic(
                api_key=self._api_key,
                base_url=self._url,
                timeout=self.timeout,
                max_retries=0,
                default_headers=self._headers or None,
            )
            self._client_loop = loop
        return self._client

    async def generate(self, request: ChatRequest) -> ChatResponse:
        """Send one request; raise a :class:`~aieval.errors.ProviderError` subclass on failure."""
        kwargs = self._arguments(request)
        client = self._get_client()
        sdk = self._sdk
        secrets = self.secrets
        if request.headers:
            secrets = secrets | secret_values({"headers": request.headers})
            try:  # a header the SDK cannot send is refused here, never sent nor retried
                check_headers(request.headers, "headers", ascii_only=True)
            except ConfigError as exc:
                raise ProviderRequestError(
                    redact(f"{self.name}: the request's {exc}", secrets)
                ) from None
            kwargs["extra_headers"] = dict(request.headers)
            try:
                self.check_request_headers(request.headers)
            except ConfigError as exc:
                raise ProviderRequestError(redact(f"{exc} (not sent)", secrets)) from None
        unencodable = _unencodable_field(request)
        started = time.perf_counter()
        try:
            if unencodable is not None and _takes_raw_body(client.post):
                message = await self._send_escaped(client, kwargs)
            else:
                message = await client.messages.create(**kwargs)
        except UnicodeEncodeError as exc:  # raised while building the request: nothing was sent
            raise self._unsendable(unencodable, exc, secrets) from None
        except sdk.APITimeoutError as exc:
            raise ProviderTimeoutError(f"{self.name}: no answer within {self.timeout:g} s") from exc
        except sdk.APIConnectionError as exc:
            raise ProviderConnectionError(
                redact(f"{self.name}: cannot reach the API: {exc}", secrets)
            ) from exc
        except sdk.APIStatusError as exc:
            raise error_for_status(
                self.name,
                exc.status_code,
                error_message(exc.response.text, secrets),
                exc.response.headers,
                api_key=self._api_key,
                secrets=secrets,
                auth_hint=self._refused(),
            ) from None  # the SDK's own message quotes the raw body, which may echo the key
        except (sdk.APIError, ValueError) as exc:
            # The SDK lets a body that is not JSON surface as a bare JSONDecodeError.
            raise self._bad_body(f"invalid response: {exc}", secrets) from None
        except Exception as exc:  # anything else is a failed call, never a crashed run
            raise ProviderError(
                redact(f"{self.name}: the SDK failed: {type(exc).__name__}: {exc}", secrets)
            ) from None
        latency = time.perf_counter() - started
        return self._parse(message, request, latency, secrets)

    async def _send_escaped(self, client: Any, kwargs: dict[str, Any]) -> Any:
        """``messages.create(**kwargs)`` with a body encoded here: the SDK encodes UTF-8
        strictly and cannot send a lone surrogate, which JSON carries as a ``\\udcXX`` escape
        (as the OpenAI provider sends it)."""
        body = {k: v for k, v in kwargs.items() if k not in ("extra_body", "extra_headers")}
        body.update(kwargs.get("extra_body", {}))
        options = {"headers": kwargs["extra_headers"]} if "extra_headers" in kwargs else {}
        return await client.post(
            "/v1/messages",
            cast_to=self._sdk.types.Message,
            content=json.dumps(body).encode(),  # ASCII: a lone surrogate becomes its escape
            options=options,
        )

    def _unsendable(
        self, field: str | None, exc: UnicodeEncodeError, secrets: frozenset[str]
    ) -> ProviderRequestError:
        if field is None:
            reason = f"cannot encode the request: {exc}"
        else:
            reason = (
                f"cannot send {field}: it holds a lone surrogate (a byte that is not UTF-8, "
                "e.g. read with errors='surrogateescape'), which this version of the anthropic "
                "SDK cannot encode; upgrade the anthropic package, or clean the text"
            )
        return ProviderRequestError(redact(f"{self.name}: {reason}", secrets))

    def _arguments(self, request: ChatRequest) -> dict[str, Any]:
        check_request(request)
        system = [m["content"] for m in request.messages if m.get("role") == "system"]
        others = [m for m in request.messages if m.get("role") != "system"]
        extra: dict[str, Any] = dict(request.params)
        extra.pop("seed", None)  # no seed in this API; it still keys the response cache
        if "stop" in extra:
            stop = extra.pop("stop")
            extra["stop_sequences"] = [stop] if isinstance(stop, str) else stop
        if request.temperature is not None:
            extra["temperature"] = request.temperature
        if request.response_schema is not None:
            extra["output_config"] = {
                "format": {"type": "json_schema", "schema": request.response_schema}
            }
        kwargs: dict[str, Any] = {
            "model": request.model,
            "messages": others,
            "max_tokens": request.max_tokens or self.default_max_tokens,
        }
        if system:
            kwargs["system"] = "\n\n".join(
                s if isinstance(s, str) else json.dumps(s) for s in system
            )
        # Optional fields go in the body as-is, so SDK versions lacking a keyword still work.
        if extra:
            kwargs["extra_body"] = extra
        return kwargs

    def _parse(
        self, message: Any, request: ChatRequest, latency: float, secrets: frozenset[str]
    ) -> ChatResponse:
        try:
            blocks = [b.text for b in message.content if getattr(b, "type", None) == "text"]
            usage = message.usage
            model = message.model
            stop_reason = message.stop_reason
        except (AttributeError, TypeError) as exc:
            preview = shorten(str(message), 200, secrets)
            raise self._bad_body(f"the body is not a message: {preview!r}", secrets) from exc
        if not blocks:
            raise self._bad_body("the message has no text content", secrets)
        return ChatResponse(
            text="".join(blocks),
            model=model if isinstance(model, str) and model else request.model,
            input_tokens=getattr(usage, "input_tokens", None),
            output_tokens=getattr(usage, "output_tokens", None),
            latency_s=latency,
            finish_reason=_FINISH_REASONS.get(stop_reason, stop_reason),
        )

    def _bad_body(self, reason: str, secrets: frozenset[str]) -> ProviderResponseError:
        return ProviderResponseError(redact(f"{self.name}: {reason}", secrets))

    async def aclose(self) -> None:
        """Close the SDK client; a later call opens a new one."""
        client, self._client, self._client_loop = self._client, None, None
        if client is not None:
            await client.close()


def _key_in_authorization(sdk: ModuleType) -> bool:
    """Whether this SDK version sends the API key as the ``Authorization`` header (newer
    versions do; older ones send ``X-Api-Key``). When it cannot tell, it assumes so."""
    auth = getattr(getattr(sdk, "AsyncAnthropic", None), "_api_key_auth", None)
    if not isinstance(auth, property) or auth.fget is None:
        return True
    try:
        headers = auth.fget(_KeyProbe())
    except Exception:
        return True
    return not isinstance(headers, Mapping) or has_authorization(headers)


class _KeyProbe:
    api_key = "probe"


def _takes_raw_body(post: Any) -> bool:
    """Whether the SDK client's ``post`` sends a body given as bytes (``content=``)."""
    try:
        return "content" in inspect.signature(post).parameters
    except (TypeError, ValueError):
        return False


def _unencodable_field(request: ChatRequest) -> str | None:
    """The first field of ``request`` (``messages[1].content``) holding text that UTF-8 cannot
    encode (a lone surrogate), or ``None``."""
    fields = {
        "model": request.model,
        "messages": request.messages,
        "params": request.params,
        "response_schema": request.response_schema,
    }
    return _lone_surrogate_at(fields, "")


def _lone_surrogate_at(value: Any, path: str) -> str | None:
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return path
        return None
    if isinstance(value, dict):
        items: Any = ((f"{path}.{key}" if path else str(key), v) for key, v in value.items())
    elif isinstance(value, list | tuple):
        items = ((f"{path}[{i}]", v) for i, v in enumerate(value))
    else:
        return None
    for name, item in items:
        found = _lone_surrogate_at(item, name)
        if found is not None:
            return found
    return None
