"""Targets: where a sample's output comes from (recorded, a provider, or a Python callable)."""

from __future__ import annotations

import asyncio
import contextvars
import functools
import inspect
import json
import string
import time
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from aieval._calls import call_from_response
from aieval._records import CallRecord
from aieval._types import Example
from aieval.core import Output, Target, Usage
from aieval.datasets import recorded_usage
from aieval.errors import ConfigError, DatasetError, ProviderError, StoreError
from aieval.providers import ChatRequest, Provider, check_headers, check_params, sends_headers

__all__ = [
    "CallableTarget",
    "Output",
    "ProviderTarget",
    "RecordedTarget",
    "Target",
    "Usage",
]


class RecordedTarget(Target):
    """Outputs recorded in the data: no model is called."""

    async def produce(self, example: Example) -> Output:
        return self.output(example)

    def output(self, example: Example) -> Output:
        """The recorded output of ``example`` (what :meth:`produce` returns, without a call)."""
        # the row's recorded_calls and recorded_latency_s (an imported log's usage and timing)
        calls, latency = recorded_usage(example.fields)
        if example.prediction is None:
            if example.recorded_error is not None:  # e.g. an imported log's errored sample
                return Output(None, error=example.recorded_error, latency_s=latency, calls=calls)
            return Output(None, error="row has no recorded prediction and no target was given")
        return Output(example.prediction, example.prediction, latency_s=latency, calls=calls)


class ProviderTarget(Target):
    """A chat model behind a provider; the prompt is the example input or a template over it.

    ``params["headers"]`` are HTTP headers, sent as headers with every request and never in
    the body (no chat API has a ``headers`` body field). ``params`` keeps them, so the run's
    redaction sees their values and the stored configuration shows them ``[redacted]``.
    An API key among ``params`` (``api_key``, ``Authorization``...) is refused: in the body it
    would not authenticate.
    """

    def __init__(
        self,
        provider: Provider,
        model: str,
        *,
        template: str | None = None,
        system: str | None = None,
        params: Mapping[str, Any] | None = None,
    ) -> None:
        self.provider = provider
        self.name = provider.name
        self.model = model
        self.template = template
        self.system = system
        self.params = dict(params or {})
        check_params(self.params)
        self.temperature = self.params.pop("temperature", None)
        self.max_tokens = self.params.pop("max_tokens", None)
        self.headers: dict[str, str] = {}
        if "headers" in self.params:
            self.headers = check_headers(self.params["headers"], "params.headers")
            if self.headers and not sends_headers(provider):
                raise ConfigError(
                    f"params.headers: provider {provider.name!r} cannot send HTTP headers (it "
                    "does not declare sends_headers = True); configure them on the provider "
                    "itself, or drop them"
                )
            _check_request_credentials(provider, self.headers)
        self._body_params = {k: v for k, v in self.params.items() if k != "headers"}
        if template is not None:
            _check_template(template)

    def messages(self, example: Example) -> list[dict[str, Any]]:
        if self.template is not None:
            messages = [{"role": "user", "content": _render(self.template, example)}]
        else:
            messages = example.messages
        if self.system:
            messages = [{"role": "system", "content": self.system}, *messages]
        return messages

    async def produce(self, example: Example) -> Output:
        request = ChatRequest(
            model=self.model,
            messages=self.messages(example),
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            params=self._body_params,
            headers=self.headers,
            # a repeat (epochs > 1) is never answered with another epoch's cached answer;
            # the first epoch keeps the key of a run without epochs
            cache_salt=f"epoch-{example.epoch}" if example.epoch and example.epoch > 1 else None,
        )
        started = time.perf_counter()
        try:
            response = await self.provider.generate(request)
        except ProviderError as exc:
            call = CallRecord(
                "target",
                self.name,
                self.model,
                latency_s=time.perf_counter() - started,
                error=f"{type(exc).__name__}: {exc}",
            )
            return Output(None, error=call.error, calls=[call])
        call = call_from_response("target", self.name, self.model, response)
        return Output(response.text, response.text, latency_s=response.latency_s, calls=[call])

    async def aclose(self) -> None:
        await self.provider.aclose()


class CallableTarget(Target):
    """A user's sync or async Python callable taking the example (workflow, agent, chain)."""

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        concurrency: int,
        timeout: float | None,
        model: str | None = None,
    ) -> None:
        if model is not None:
            if not _takes_model(fn):
                raise ConfigError(
                    f"model={model!r} cannot reach target {_name(fn)}: give it a keyword "
                    "parameter 'model' (it is called with model=...), or drop model="
                )
            fn = functools.partial(fn, model=model)
        self.fn = fn
        self.name = _name(fn)
        self.timeout = timeout
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            type(fn).__call__
        )
        self._pool: ThreadPoolExecutor | None = None
        if not self.is_async:
            self._pool = ThreadPoolExecutor(max_workers=concurrency, thread_name_prefix="aieval")

    async def produce(self, example: Example) -> Output:
        started = time.perf_counter()
        try:
            if self.is_async:
                result = await asyncio.wait_for(_guarded(self.fn(example)), self.timeout)
            else:
                loop = asyncio.get_running_loop()
                # the worker thread sees this task's context (a workflow's step recorder)
                context = contextvars.copy_context()
                call = functools.partial(_own_timeouts, self.fn, example)
                future = loop.run_in_executor(self._pool, context.run, call)
                result = await asyncio.wait_for(future, self.timeout)
        except TimeoutError:  # only the runner's own deadline: the target's are _OwnTimeout
            return Output(None, error=f"target timed out after {self.timeout} s")
        except (SystemExit, _Exited) as exc:  # exit() in user code ends this sample only
            code = exc.args[0] if isinstance(exc, _Exited) else exc.code
            return Output(None, error=f"target called exit({code!r})")
        except _OwnTimeout as exc:
            return Output(None, error=f"target raised {_described(exc.original)}")
        except (KeyboardInterrupt, asyncio.CancelledError, StoreError):
            raise  # a store failure (a response cache's) is the run's, not the target's
        except BaseException as exc:  # Exception, and a user's own BaseException subclass
            return Output(None, error=f"target raised {_described(exc)}")
        latency = time.perf_counter() - started
        return Output(_as_text(result), result, latency_s=latency)

    async def aclose(self) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=False, cancel_futures=True)


class _Exited(Exception):
    """A user's async target called ``exit()`` (re-raised as an ordinary exception)."""


class _OwnTimeout(Exception):
    """A ``TimeoutError`` the target raised itself, kept apart from the runner's deadline."""

    def __init__(self, original: TimeoutError) -> None:
        super().__init__(str(original))
        self.original = original


async def _guarded(coro: Any) -> Any:
    # asyncio re-raises SystemExit out of the event loop when it escapes a task, taking the
    # whole run down; turn it into an ordinary exception inside the task instead.
    try:
        return await coro
    except SystemExit as exc:
        raise _Exited(exc.code) from None
    except TimeoutError as exc:  # the runner's deadline cancels the task: this one is the target's
        raise _OwnTimeout(exc) from exc


def _own_timeouts(fn: Callable[..., Any], example: Example) -> Any:
    try:
        return fn(example)
    except TimeoutError as exc:
        raise _OwnTimeout(exc) from exc


def _described(exc: BaseException) -> str:
    """``Type: message``, or just ``Type`` for an exception without a message."""
    message = str(exc)
    return f"{type(exc).__name__}: {message}" if message else type(exc).__name__


def _name(fn: Callable[..., Any]) -> str:
    inner = fn.func if isinstance(fn, functools.partial) else fn
    return getattr(inner, "__name__", type(inner).__name__)


def _takes_model(fn: Callable[..., Any]) -> bool:
    """Whether ``fn(example, model=...)`` is a valid call."""
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    usable = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return any(
        p.kind is inspect.Parameter.VAR_KEYWORD or (p.name == "model" and p.kind in usable)
        for p in parameters
    )


def _as_text(result: Any) -> str | None:
    if result is None or isinstance(result, str):
        return result
    text = getattr(result, "text", None)
    if isinstance(text, str):
        return text
    try:
        return json.dumps(result, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(result)


def _check_template(template: str) -> None:
    try:
        list(string.Formatter().parse(template))
    except ValueError as exc:
        raise ConfigError(f"invalid prompt template {template!r}: {exc}") from None


def _render(template: str, example: Example) -> str:
    values = {**example.fields, "prompt": example.prompt, "input": example.prompt}
    try:
        return template.format_map(values)
    except KeyError as exc:
        raise DatasetError(
            f"prompt template needs field {exc.args[0]!r}, which example {example.id!r} lacks"
        ) from None


def _check_request_credentials(provider: Any, headers: Mapping[str, str]) -> None:
    """A credential header in ``params.headers`` that the provider (or the one a wrapper holds
    in ``inner``) would let replace its own credential is refused before the first sample."""
    seen = 0
    while provider is not None and seen < 16:
        check = getattr(provider, "check_request_headers", None)
        if callable(check):
            check(headers, "params.headers")
            return
        provider = getattr(provider, "inner", None)
        seen += 1
