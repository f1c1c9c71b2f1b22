"""Retry-After parsing, error-message extraction and key redaction."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aieval._secrets import MIN_SECRET_LEN
from aieval.providers._http import error_message, parse_retry_after, redact


@given(st.floats(min_value=0, max_value=1e6, allow_nan=False))
def test_retry_after_seconds_round_trip(seconds: float) -> None:
    assert parse_retry_after({"Retry-After": repr(seconds)}) == seconds


@given(st.integers(min_value=0, max_value=10**9))
def test_retry_after_ms_wins_over_seconds(millis: int) -> None:
    headers = {"Retry-After": "99", "Retry-After-Ms": str(millis)}
    assert parse_retry_after(headers) == pytest.approx(millis / 1000)


@given(st.integers(min_value=0, max_value=86_400))
def test_retry_after_http_date(offset: int) -> None:
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    header = format_datetime(now + timedelta(seconds=offset), usegmt=True)
    assert parse_retry_after({"retry-after": header}, now=now.timestamp()) == offset


def test_retry_after_date_in_the_past_is_zero() -> None:
    header = "Wed, 21 Oct 2015 07:28:00 GMT"
    assert parse_retry_after({"Retry-After": header}) == 0.0


@pytest.mark.parametrize(
    "value",
    [
        pytest.param("soon", id="word"),
        pytest.param("-1", id="negative"),
        pytest.param("nan", id="nan"),
        pytest.param("inf", id="inf"),
        pytest.param("", id="empty"),
        pytest.param("Wed, 99 Foo 2015", id="bad-date"),
    ],
)
def test_unusable_retry_after_is_none(value: str) -> None:
    assert parse_retry_after({"Retry-After": value}) is None


@given(st.text(min_size=1, max_size=300).filter(lambda s: s.strip()))
def test_error_message_finds_openai_and_anthropic_shapes(message: str) -> None:
    openai_body = json.dumps({"error": {"message": message, "type": "x"}}).encode()
    anthropic_body = json.dumps({"type": "error", "error": {"type": "x", "message": message}})
    expected = message.strip()[:500]
    assert error_message(openai_body)[:497] == expected[:497]
    assert error_message(anthropic_body)[:497] == expected[:497]
    assert len(error_message(openai_body)) <= 500


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        pytest.param(b'{"error": "plain string"}', "plain string", id="error-string"),
        pytest.param(b'{"detail": "Not Found"}', "Not Found", id="detail"),
        pytest.param(b'{"message": "top level"}', "top level", id="message"),
        pytest.param(b"upstream timed out", "upstream timed out", id="text"),
        pytest.param(b"\xff\xfe bytes", "\ufffd\ufffd bytes", id="not-utf8"),
    ],
)
def test_error_message_shapes(body: bytes, expected: str) -> None:
    assert error_message(body) == expected


@given(st.text(), st.text(min_size=MIN_SECRET_LEN).filter(lambda s: "*" not in s))
def test_redact_removes_every_occurrence(text: str, secret: str) -> None:
    assert secret not in redact(text + secret + text, secret)


def test_a_dummy_key_shorter_than_a_secret_leaves_messages_readable() -> None:
    """Local servers take any key ("x", "EMPTY"): replacing every "x" would garble errors."""
    message = "scorer exact_match expects text"
    assert redact(message, "x") == message
    assert redact(message, ["x", "EMPTY"]) == message


def test_redact_without_secret_is_identity() -> None:
    assert redact("nothing to hide", None) == "nothing to hide"
