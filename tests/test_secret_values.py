"""Redaction by value: URL credentials, header values, and cutting only after redacting."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from aieval._secrets import (
    REDACTED,
    redact_text,
    secret_values,
    shorten,
    url_credentials,
    url_without_credentials,
)

KEY = "sk-live-0123456789abcdef"


@given(st.integers(min_value=0, max_value=60), st.integers(min_value=20, max_value=80))
def test_a_cut_never_keeps_part_of_a_key(padding: int, limit: int) -> None:
    text = "x" * padding + KEY + " tail"
    cut = shorten(text, limit, [KEY])
    assert len(cut) <= limit
    assert not any(KEY[:n] in cut for n in range(4, len(KEY) + 1))


@pytest.mark.parametrize(
    ("url", "hidden"),
    [
        pytest.param("http://bob:pw-123456@h:80/v1", ["pw-123456", "bob:pw-123456"], id="basic"),
        pytest.param("https://tok%40en-9999@h/v1", ["tok@en-9999", "tok%40en-9999"], id="quoted"),
    ],
)
def test_url_credentials_are_found_and_removed(url: str, hidden: list[str]) -> None:
    found = url_credentials(url)
    assert all(h in found for h in hidden)
    shown = url_without_credentials(url)
    assert REDACTED in shown and not any(h in shown for h in hidden)


def test_header_values_and_bearer_tokens_are_secrets_but_content_types_are_not() -> None:
    values = secret_values(
        {"headers": {"Authorization": f"Bearer {KEY}", "Content-Type": "application/json"}}
    )
    assert KEY in values and f"Bearer {KEY}" in values and "application/json" not in values


def test_the_longest_secret_is_replaced_first() -> None:
    assert redact_text(f"u:{KEY}", ["u", KEY, f"u:{KEY}"]) == REDACTED
