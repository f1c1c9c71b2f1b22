"""A provider for any endpoint that speaks the OpenAI chat-completions HTTP API."""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from aieval._secrets import secret_values, shorten, url_credentials, url_without_credentials
from aieval.core import ToolCall
from aieval.errors import (
    ConfigError,
    ProviderConnectionError,
    ProviderError,
    ProviderRequestError,
    ProviderResponseError,
    ProviderTimeoutError,
)
from aieval.providers._base import ChatRequest, ChatResponse
from aieval.providers._cache import headers_digest
from aieval.providers._credentials import auth_hint as default_auth_hint
from aieval.providers._credentials import (
    check_key_and_headers,
    check_one_credential,
    check_request_credentials,
    has_authorization,
)
from aieval.providers._headers import check_headers
from aieval.providers._http import error_for_status, error_message, redact
from aieval.providers._params import check_request
from aieval.providers._session import LoopSession

if TYPE_CHECKING:
    import aiohttp

__all__ = ["OpenAIProvider"]

_SCHEMA_NAME = re.compile(r"[^a-zA-Z0-9_-]")


class OpenAIProvider:
    """Calls ``POST {base_url}/chat/completions`` (OpenAI, vLLM, Ollama, llama.cpp, gateways).

    The provider makes exactly one attempt per call; wrap it in
    :class:`~aieval.providers.ResilientProvider` (or use :func:`~aieval.providers.build_provider`)
    for retries, back-off and caching.

    Args:
        base_url: the API root, e.g. ``"https://api.openai.com/v1"``.
        api_key: sent as a bearer token; never shown in ``repr``, logs or errors.
        name: the provider's name in messages, reports and cache keys.
        timeout: seconds for a whole request (connect, send, answer).
        headers: extra HTTP headers for every request (a request's own
            :attr:`~aieval.providers.ChatRequest.headers` are added over them).
        supports_json_schema: send ``response_schema`` as a strict ``json_schema``
            ``response_format``; when ``False`` the schema is not sent.
        auth_hint: where a key goes, said with a 401/403 (default: ``api_key_env``).
        key_source: where ``api_key`` came from (``"api_key="``, ``"MY_KEY"``...), named when
            the server refuses it.
        key_is_fallback: ``api_key`` is an environment default nobody named
            (``openai-compatible``'s ``OPENAI_API_KEY``): a request's own ``Authorization``
            header replaces it instead of being refused.

    >>> OpenAIProvider("http://localhost:8000/v1", api_key="sk-secret")
    OpenAIProvider(name='openai', base_url='http://localhost:8000/v1', api_key='***')
    """

    sends_headers = True

    def __init__(
        self,
        base_url: str,
        api_key: str | None = None,
        *,
        name: str = "openai",
        timeout: float = 60.0,
        headers: Mapping[str, str] | None = None,
        supports_json_schema: bool = True,
        auth_hint: str | None = None,
        key_source: str | None = None,
        key_is_fallback: bool = False,
    ) -> None:
        if not base_url or not base_url.startswith(("http://", "https://")):
            raise ConfigError(
                f"provider {name!r}: base_url must start with http:// or https://, got {base_url!r}"
            )
        if timeout <= 0:
            raise ConfigError(f"provider {name!r}: timeout must be > 0 seconds, got {timeout!r}")
        headers = check_headers(headers or {}, "headers")
        # aiohttp sends URL credentials as the Authorization header: a second credential for
        # it would make every call fail, so it is refused here, before the first sample
        source = key_source or "api_key="
        check_one_credential(name, base_url, key=api_key, key_source=source, headers=headers)
        # the key is sent as the Authorization header: a header of that name would replace it
        check_key_and_headers(name, api_key, headers, key_source=source)
        self.name = name
        # shown, logged and cached without a "user:password@"; requests use the real URL
        self.base_url = url_without_credentials(base_url.rstrip("/"))
        self._url_credentials = bool(url_credentials(base_url))
        self.timeout = timeout
        self.supports_json_schema = supports_json_schema
        self._api_key = api_key or None
        self._auth_hint = auth_hint or default_auth_hint(None)
        self._key_source = source
        self._key_is_fallback = bool(self._api_key) and key_is_fallback
        self._url = base_url.rstrip("/") + "/chat/completions"
        self.secrets: frozenset[str] = frozenset(
            secret_values({"api_key": api_key, "headers": dict(headers or {}), "url": base_url})
        ) | ({self._api_key} if self._api_key else set())
        """Every configured secret value (key, header values, URL credentials): never shown."""
        self.headers_digest = headers_digest(headers)
        """A digest of ``headers`` (never their values) for the response-cache key."""
        self._headers = {"Content-Type": "application/json", "Accept": "application/json"}
        self._headers.update(headers or {})
        self._configured_headers = dict(headers or {})
        if self._api_key:
            self._headers["Authorization"] = f"Bearer {self._api_key}"
        self._session = LoopSession(self._new_session)

    @property
    def cache_settings(self) -> dict[str, Any]:
        """Settings that change the request body, where not on their default: part of the
        response-cache key (``{}`` on defaults, so those keys stay as they were)."""
        return {} if self.supports_json_schema else {"supports_json_schema": False}

    def check_request_headers(self, headers: Mapping[str, str], field: str = "headers") -> None:
        """Refuse a request's own ``Authorization`` header when this provider sends one (its
        key, its URL credentials or its own header): it would silently replace it."""
        configured = [
            source
            for source, given in (
                (self._key_source, self._api_key and not self._key_is_fallback),
                ("base_url's user:password@", self._url_credentials),
                ("its headers.Authorization", has_authorization(self._configured_headers)),
            )
            if given
        ]
        check_request_credentials(self.name, headers, configured, field=field)

    def __repr__(self) -> str:
        key = "'***'" if self._api_key else "None"
        return (
            f"{type(self).__name__}(name={self.name!r}, base_url={self.base_url!r}, api_key={key})"
        )

    async def generate(self, request: ChatRequest) -> ChatResponse:
        """Send one request; raise a :class:`~aieval.errors.ProviderError` subclass on failure."""
        import aiohttp  # imported on first use: ``import aieval`` stays light

        secrets = self._secrets_for(request)
        body = self._checked_body(request, secrets)
        if request.headers:
            try:
                self.check_request_headers(request.headers)
            except ConfigError as exc:
                raise ProviderRequestError(redact(f"{exc} (not sent)", secrets)) from None
        try:
            payload = _encode(body)
        except (TypeError, ValueError) as exc:  # a value JSON cannot carry: nothing is sent
            raise ProviderRequestError(
                redact(f"{self.name}: cannot encode the request as JSON: {exc}", secrets)
            ) from None
        session = self._session.get()
        started = time.perf_counter()
        try:
            async with session.post(
                self._url, data=payload, headers=request.headers or None
            ) as response:
                raw = await response.read()
                status = response.status
                headers = response.headers
        except TimeoutError as exc:
            raise ProviderTimeoutError(
                f"{self.name}: no answer from {self.base_url} within {self.timeout:g} s"
            ) from exc
        except aiohttp.ClientError as exc:
            raise ProviderConnectionError(
                redact(f"{self.name}: cannot reach {self.base_url}: {exc}", secrets)
            ) from exc
        except (ValueError, TypeError) as exc:  # aiohttp refuses the request before sending it
            raise ProviderRequestError(
                redact(f"{self.name}: the HTTP client cannot send the request: {exc}", secrets)
            ) from exc
        except Exception as exc:  # anything else is a failed call, never a crashed run
            raise ProviderError(
                redact(f"{self.name}: the HTTP client failed: {type(exc).__name__}: {exc}", secrets)
            ) from exc
        latency = time.perf_counter() - started
        if status >= 400:
            raise error_for_status(
                self.name,
                status,
                error_message(raw, secrets),
                headers,
                api_key=self._api_key,
                secrets=secrets,
                auth_hint=self._refused(request),
            )
        return self._parse(raw, request, latency, secrets)

    def _refused(self, request: ChatRequest) -> str:
        """What a 401/403 refused (which credential was sent, from where) and where a key goes."""
        if has_authorization(request.headers):
            sent: str | None = "the request's Authorization header (target.headers)"
        elif self._api_key:
            sent = f"the key from {self._key_source}"
        elif self._url_credentials:
            sent = "the base_url's user:password@"
        elif has_authorization(self._configured_headers):
            sent = "the Authorization header of headers="
        else:
            sent = None
        said = f"{sent} was refused" if sent else "no key was sent"
        return f"{said}; {self._auth_hint}"

    def _secrets_for(self, request: ChatRequest) -> frozenset[str]:
        """The configured secrets plus this request's own header values."""
        if not request.headers:
            return self.secrets
        return self.secrets | secret_values({"headers": request.headers})

    def _checked_body(self, request: ChatRequest, secrets: frozenset[str]) -> dict[str, Any]:
        """The request body, after checking the request's own headers: one the HTTP client
        would refuse, strip or send beside the configured ones is never sent."""
        if request.headers:
            try:
                check_headers(request.headers, "headers")
            except ConfigError as exc:
                raise ProviderRequestError(
                    redact(f"{self.name}: the request's {exc}", secrets)
                ) from None
        return self._body(request)

    def _body(self, request: ChatRequest) -> dict[str, Any]:
        check_request(request)
        body: dict[str, Any] = dict(request.params)
        body["model"] = request.model
        body["messages"] = request.messages
        if request.temperature is not None:
            body["temperature"] = request.temperature
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.response_schema is not None and self.supports_json_schema:
            body["response_format"] = _response_format(request.response_schema)
        return body

    def _parse(
        self, raw: bytes, request: ChatRequest, latency: float, secrets: frozenset[str]
    ) -> ChatResponse:
        try:
            data = json.loads(raw)
        except ValueError as exc:
            reason = f"the body is not JSON: {_preview(raw, secrets)}"
            raise self._bad_body(reason, secrets) from exc
        try:
            choice = data["choices"][0]
            content = choice["message"]["content"]
        except (KeyError, IndexError, TypeError) as exc:
            reason = _missing_content_reason(data, raw, secrets)
            raise self._bad_body(reason, secrets) from exc
        calls = _tool_calls(choice["message"].get("tool_calls"))
        if calls is None:
            raise self._bad_body(f"malformed tool_calls: {_preview(raw, secrets)}", secrets)
        if content is None and calls:  # a message of tool calls only
            content = ""
        if not isinstance(content, str):
            raise self._bad_body(_missing_content_reason(data, raw, secrets), secrets)
        usage = data.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        model = data.get("model")
        finish = choice.get("finish_reason")
        return ChatResponse(
            text=content,
            model=model if isinstance(model, str) and model else request.model,
            input_tokens=_int_or_none(usage.get("prompt_tokens")),
            output_tokens=_int_or_none(usage.get("completion_tokens")),
            latency_s=latency,
            finish_reason=finish if isinstance(finish, str) else None,
            cost=_cost_or_none(usage.get("cost")),
            tool_calls=calls,
        )

    def _bad_body(self, reason: str, secrets: frozenset[str]) -> ProviderResponseError:
        return ProviderResponseError(redact(f"{self.name}: {reason}", secrets))

    def _new_session(self) -> aiohttp.ClientSession:
        import aiohttp

        return aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0, ttl_dns_cache=300),
            headers=self._headers,
            timeout=aiohttp.ClientTimeout(total=self.timeout),
            skip_auto_headers=("User-Agent",),
        )

    async def aclose(self) -> None:
        """Close the HTTP session; a later call opens a new one."""
        await self._session.aclose()


def _encode(body: dict[str, Any]) -> bytes:
    try:
        return json.dumps(body, ensure_ascii=False, allow_nan=False).encode()
    except UnicodeEncodeError:  # a lone surrogate: send it as a JSON escape
        return json.dumps(body, allow_nan=False).encode()


def _response_format(schema: dict[str, Any]) -> dict[str, Any]:
    title = schema.get("title")
    name = _SCHEMA_NAME.sub("_", title)[:64] if isinstance(title, str) and title else "response"
    return {
        "type": "json_schema",
        "json_schema": {"name": name, "schema": schema, "strict": True},
    }


def _missing_content_reason(data: Any, raw: bytes, secrets: frozenset[str]) -> str:
    if isinstance(data, dict):
        if "error" in data:
            return f"the body is an error, not a completion: {error_message(raw, secrets)}"
        choices = data.get("choices")
        if isinstance(choices, list) and choices and isinstance(choices[0], dict):
            message = choices[0].get("message")
            if isinstance(message, dict) and message.get("refusal"):
                return f"the model refused: {message['refusal']}"
    return f"the body has no choices[0].message.content: {_preview(raw, secrets)}"


def _preview(raw: bytes, secrets: frozenset[str]) -> str:
    # redact the whole body before cutting it: a cut key is no longer found by value
    return repr(shorten(raw.decode("utf-8", "replace"), 203, secrets))


def _tool_calls(value: Any) -> tuple[ToolCall, ...] | None:
    """A message's ``tool_calls`` (absent or null: none); ``None`` when malformed."""
    if value is None:
        return ()
    if not isinstance(value, list):
        return None
    calls = []
    for entry in value:
        function = entry.get("function") if isinstance(entry, dict) else None
        if not isinstance(function, dict):
            return None
        call_id, name, arguments = entry.get("id"), function.get("name"), function.get("arguments")
        if not (isinstance(call_id, str) and isinstance(name, str) and isinstance(arguments, str)):
            return None
        calls.append(ToolCall(call_id, name, arguments))
    return tuple(calls)


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _cost_or_none(value: Any) -> float | None:
    """A gateway's own ``usage.cost`` (USD, as OpenRouter sends it), when it is a number >= 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if 0 <= value < float("inf") else None
