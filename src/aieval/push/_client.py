"""A server's upload endpoint as a push target: ``https://host:port`` with a bearer token.

A run goes up in parts of at most :data:`PART_SAMPLES` samples or about :data:`PART_BYTES`
bytes, then one commit with its header; the server writes it to its store in one transaction.
A part or commit whose answer is lost to a transient failure (connection refused or reset, a
timeout, 429, 502, 503, 504, after the server's ``Retry-After`` when it gives one; a 500 once)
is sent again with the same upload id and number: the server keeps one copy of each part, and a
repeated commit answers what the first one did, so a retry never duplicates a sample. Anything
else (another 4xx, an untrusted TLS certificate) fails at once: sending it again would fail the
same way.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import uuid
from collections.abc import Iterable
from typing import Any
from urllib.parse import quote, urlsplit, urlunsplit

import aiohttp

from aieval.errors import AievalError, ConfigError
from aieval.push._push import Progress
from aieval.push._wire import MAX_PART_SAMPLES, WIRE_VERSION, run_in, sample_in
from aieval.store import ImportOutcome, RunHolding, RunRow, StoredSample

__all__ = ["PART_BYTES", "PART_SAMPLES", "ServerTarget", "UploadError"]

#: Samples per part (the server accepts up to ``MAX_PART_SAMPLES``).
PART_SAMPLES = 1000
#: A part is sent once its JSON reaches about this many bytes.
PART_BYTES = 4_000_000
#: Answers sent again (after a pause, or the server's ``Retry-After``) up to ``attempts`` times.
_TRANSIENT = frozenset({429, 502, 503, 504})
#: A 500 is sent again once only: it is more often a lasting store problem than a hiccup.
_SERVER_ERROR_ATTEMPTS = 2
#: The longest wait between attempts a server's ``Retry-After`` obtains.
MAX_RETRY_AFTER_S = 30.0


class UploadError(AievalError):
    """The server refused or did not answer an upload request; the message says why.

    Attributes:
        transient: the failure may pass (the server did not answer, or was busy), so pushing
            again later may succeed; ``False`` when the same request would fail the same way.
        changed_since: the server's copy of the run changed since it was compared (409 from
            another writer): comparing again may find the copies the same.
    """

    def __init__(
        self, message: str, *, transient: bool = False, changed_since: bool = False
    ) -> None:
        super().__init__(message)
        self.transient = transient
        self.changed_since = changed_since


class ServerTarget:
    """``aieval serve``'s upload endpoint (``POST /api/runs/import``) as a push target.

    Args:
        url: the server's address, ``http(s)://host:port`` (a path prefix is kept).
        token: the server's bearer token (``AIEVAL_TOKEN``).
        attempts: tries per request before giving up on a transient failure (connection
            refused or reset, timeout, 429, 502, 503, 504; a 500 is tried twice at most).
        timeout_s: seconds each request may take.
    """

    def __init__(
        self,
        url: str,
        token: str | None,
        *,
        attempts: int = 4,
        timeout_s: float = 300.0,
        part_samples: int = PART_SAMPLES,
        part_bytes: int = PART_BYTES,
    ) -> None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ConfigError(f"--to: {_shown(url)} is not a server address (http(s)://host:port)")
        if parts.username or parts.password:
            raise ConfigError("--to: give the token with --token or AIEVAL_TOKEN, not in the URL")
        self.where = urlunsplit((parts.scheme, parts.netloc, parts.path.rstrip("/"), "", ""))
        self._base = self.where
        self._token = token or None
        self._attempts = max(1, attempts)
        self._timeout = aiohttp.ClientTimeout(total=timeout_s)
        self._part_samples = min(part_samples, MAX_PART_SAMPLES)
        self._part_bytes = part_bytes
        # run id -> the server's digest of what it held, echoed by the commit
        self._held: dict[str, str] = {}

    def holding(self, run_id: str) -> RunHolding | None:
        body = self._call("GET", f"/api/runs/import/holding?run_id={quote(run_id, safe='')}")
        try:
            held = body.get("held")
            if isinstance(held, str):
                self._held[run_id] = held
            run = body["run"]
            if run is None:
                return None
            digests = {str(k): str(v) for k, v in body["digests"].items()}
            if set(digests) != set(body["sample_ids"]):
                raise ValueError("the sample digests do not match the sample ids")
            return RunHolding(RunRow(**run), frozenset(body["sample_ids"]), digests)
        except (AttributeError, KeyError, TypeError, ValueError) as exc:
            raise UploadError(
                f"{self.where} answered what it holds of run {run_id} in a form this version "
                f"does not read ({type(exc).__name__}: {exc}); is it an aieval server of the "
                "same version?"
            ) from exc

    def write(
        self, run: RunRow, samples: Iterable[StoredSample], count: int, progress: Progress
    ) -> ImportOutcome:
        upload = uuid.uuid4().hex
        part, done, size = 0, 0, 0
        batch: list[tuple[str, str]] = []  # (sample id, its JSON)
        for sample in samples:
            text = _dumps(sample_in(sample))
            if batch and size + len(text) > self._part_bytes:  # a big sample goes on its own
                self._send_part(run, upload, part, batch)
                part, done, batch, size = part + 1, done + len(batch), [], 0
                progress(run, done, count)
            batch.append((sample.sample_id, text))
            size += len(text)
            if len(batch) >= self._part_samples or size >= self._part_bytes:
                self._send_part(run, upload, part, batch)
                part, done, batch, size = part + 1, done + len(batch), [], 0
                progress(run, done, count)
        if batch:
            self._send_part(run, upload, part, batch)
            part, done = part + 1, done + len(batch)
        progress(run, done, count)
        commit = {"version": WIRE_VERSION, "upload": upload, "parts": part, "run": run_in(run)}
        held = self._held.pop(run.id, None)
        if held is not None:  # the server refuses the write if the run changed there since
            commit["held"] = held
        answer = self._call("POST", "/api/runs/import", _dumps(commit))
        return ImportOutcome(answer["run_id"], answer["outcome"], int(answer["samples_added"]))

    def close(self) -> None:
        """Nothing to release: each request opens and closes its own session and event loop,
        so none is left open whether or not the caller closes the target."""

    def _send_part(
        self, run: RunRow, upload: str, part: int, samples: list[tuple[str, str]]
    ) -> None:
        head = f'{{"version": {WIRE_VERSION}, "upload": "{upload}", "part": {part}, "samples": ['
        body = head + ", ".join(text for _, text in samples) + "]}"
        try:
            self._call("POST", "/api/runs/import", body)
        except _TooLarge as exc:
            sample_id, text = max(samples, key=lambda s: len(s[1]))
            raise UploadError(
                f"sample {sample_id!r} of run {run.id} is too large to upload: {len(text)} "
                f"bytes as JSON, in a request of {len(body)} bytes; {exc}"
            ) from None

    def _call(self, method: str, path: str, body: str | None = None) -> dict[str, Any]:
        return asyncio.run(self._request(method, path, body))

    async def _request(self, method: str, path: str, body: str | None) -> dict[str, Any]:
        # the session lives as long as the request (with its retries): closed on every path.
        # No connection is kept for a retry: after a Retry-After of 5 s it would be reused just
        # as the server drops it (uvicorn keeps an idle one 5 s), a reset that is no answer
        connector = aiohttp.TCPConnector(force_close=True)
        async with aiohttp.ClientSession(timeout=self._timeout, connector=connector) as session:
            return await self._attempts_of(session, method, path, body)

    async def _attempts_of(
        self, session: aiohttp.ClientSession, method: str, path: str, body: str | None
    ) -> dict[str, Any]:
        headers = {"Accept": "application/json"}
        if body is not None:
            headers["Content-Type"] = "application/json"
        if self._token is not None:
            headers["Authorization"] = f"Bearer {self._token}"
        url = self._base + path
        problem, attempt, pause = "", 0, 0.0
        while True:
            attempt += 1
            try:
                async with session.request(
                    method, url, data=None if body is None else body.encode("ascii"),
                    headers=headers,
                ) as response:  # fmt: skip
                    text = await response.text()
                    status = response.status
                    if status == 200:
                        answer: dict[str, Any] = json.loads(text)
                        return answer
                    problem = _refusal(status, text, self.where, token_sent=self._token is not None)
                    if status == 413:
                        raise _TooLarge(problem)
                    limit = self._attempts if status in _TRANSIENT else 0
                    if status == 500:
                        limit = min(self._attempts, _SERVER_ERROR_ATTEMPTS)
                    if attempt >= limit:
                        raise UploadError(
                            problem + _tries(attempt),
                            transient=status in _TRANSIENT,
                            changed_since=status == 409 and _changed_since(text),
                        )
                    # what the server asked for (Retry-After), if more than the backoff
                    pause = max(
                        _backoff(attempt), _retry_after(response.headers.get("Retry-After"))
                    )
            except aiohttp.ClientSSLError as exc:
                raise UploadError(_tls_problem(self.where, exc)) from None
            except (aiohttp.ClientConnectionError, aiohttp.ClientPayloadError, TimeoutError) as exc:
                problem = f"{self.where} did not answer: {type(exc).__name__}: {exc}"
                if attempt >= self._attempts:
                    raise UploadError(problem + _tries(attempt), transient=True) from None
                pause = _backoff(attempt)
            except aiohttp.ClientError as exc:
                raise UploadError(f"{self.where}: {type(exc).__name__}: {exc}") from None
            await asyncio.sleep(pause)


class _TooLarge(UploadError):
    """The server answered 413 (the message is the refusal, with its limit)."""


def _backoff(attempt: int) -> float:
    return min(0.5 * 2.0 ** (attempt - 1), 8.0)


def _tries(attempt: int) -> str:
    return f" (after {attempt} attempts)" if attempt > 1 else ""


def _tls_problem(where: str, exc: aiohttp.ClientSSLError) -> str:
    cause: Exception = exc.os_error
    if isinstance(exc, aiohttp.ClientConnectorCertificateError):
        cause = exc.certificate_error
    if isinstance(cause, ssl.SSLCertVerificationError):
        why = cause.verify_message or str(cause)
        return (
            f"{where}: certificate not trusted ({why}): set SSL_CERT_FILE to your CA bundle "
            "(a PEM file holding the CA that signed the server's certificate)"
        )
    return f"{where}: the TLS connection failed ({cause}); is it an https:// server?"


def _dumps(value: Any) -> str:
    # ASCII escapes keep lone surrogates (\udcXX) and NUL (\u0000) exact; no NaN in JSON
    return json.dumps(value, ensure_ascii=True, allow_nan=False, separators=(",", ":"))


def _refusal(status: int, text: str, where: str, *, token_sent: bool) -> str:
    """What the server's refusal means, its own message quoted.

    >>> said = _refusal(401, '{"message": "the token was not accepted"}', "h", token_sent=True)
    >>> said.startswith("h refused the upload (401: the token was not accepted); give the token")
    True
    """
    try:
        body = json.loads(text)
        message = str(body.get("message", text))
        reasons = [str(r) for r in body.get("reasons", [])]
    except (ValueError, AttributeError):
        message, reasons = text[:300], []
    if status == 401:
        # the server's reasons name its own headers; the client's are its options
        what = "the token was not accepted" if token_sent else "no token was given"
        said = message if what in message else f"{message}: {what}"
        return (
            f"{where} refused the upload (401: {said}); give the token the server was "
            "started with, with --token or AIEVAL_TOKEN"
        )
    if status == 503:
        # the server's message names its store and when to try again
        return f"{where} cannot take the upload now (503: {message})"
    detail = "; ".join(dict.fromkeys([message, *reasons]))
    return f"{where} refused the upload ({status}: {detail})"


def _changed_since(text: str) -> bool:
    """Whether a 409 answer says the run changed there since it was compared."""
    try:
        return json.loads(text).get("changed_since") is True
    except (ValueError, AttributeError):
        return False


def _retry_after(value: str | None) -> float:
    """``Retry-After`` in seconds (at most :data:`MAX_RETRY_AFTER_S`); 0 when absent or a date.

    >>> _retry_after("5"), _retry_after(None), _retry_after("3600")
    (5.0, 0.0, 30.0)
    """
    try:
        return min(max(float(value or 0), 0.0), MAX_RETRY_AFTER_S)
    except ValueError:
        return 0.0


def _shown(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = host + (f":{parts.port}" if parts.port else "")
    return urlunsplit((parts.scheme, netloc, parts.path, "", "")) or "(empty)"
