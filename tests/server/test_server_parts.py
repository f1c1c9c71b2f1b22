"""The server's pure parts: Host parsing, redaction, path confinement, error reasons."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from aieval.errors import ConfigError
from aieval.server._errors import validation_reasons
from aieval.server._paths import confine
from aieval.server._redact import REDACTED, Redactor, is_secret_key
from aieval.server._security import _hostname
from aieval.server._settings import ServerSettings, is_loopback

names = st.from_regex(r"[a-z0-9]([a-z0-9-]{0,20}[a-z0-9])?(\.[a-z0-9]{1,10}){0,3}", fullmatch=True)


@given(name=names, port=st.integers(1, 65535))
def test_hostname_drops_the_port(name: str, port: int) -> None:
    assert _hostname(f"{name}:{port}") == name
    assert _hostname(name.upper()) == name


@given(port=st.integers(1, 65535))
def test_hostname_of_bracketed_ipv6(port: int) -> None:
    assert _hostname(f"[::1]:{port}") == "::1"
    assert _hostname("[::1]") == "::1"


@pytest.mark.parametrize(
    ("host", "loopback"),
    [
        pytest.param("127.0.0.1", True, id="v4"),
        pytest.param("127.8.9.10", True, id="v4-net"),
        pytest.param("::1", True, id="v6"),
        pytest.param("[::1]", True, id="v6-brackets"),
        pytest.param("LOCALHOST", True, id="name"),
        pytest.param("0.0.0.0", False, id="any"),
        pytest.param("192.168.1.4", False, id="lan"),
        pytest.param("localhost.evil.example", False, id="lookalike"),
    ],
)
def test_is_loopback(host: str, loopback: bool) -> None:
    assert is_loopback(host) is loopback


def test_settings_allowlist_includes_bound_and_extra_hosts() -> None:
    s = ServerSettings(host="0.0.0.0", token="t" * 12, allowed_hosts=("Eval.LAN",))
    s.check()
    assert {"localhost", "127.0.0.1", "::1", "0.0.0.0", "eval.lan"} == s.host_allowlist()


@pytest.mark.parametrize(
    "bad",
    [
        pytest.param({"max_concurrent_runs": 0}, id="concurrency"),
        pytest.param({"keepalive_s": 0}, id="keepalive"),
        pytest.param({"dataset_roots": ()}, id="roots"),
        pytest.param({"token": ""}, id="empty-token"),
    ],
)
def test_settings_refused(bad: dict[str, Any]) -> None:
    with pytest.raises(ConfigError):
        ServerSettings(**bad).check()


@pytest.mark.parametrize(
    ("key", "secret"),
    [
        pytest.param("api_key", True, id="api_key"),
        pytest.param("OPENAI_API_KEY", True, id="env-style"),
        pytest.param("Authorization", True, id="authorization"),
        pytest.param("x-api-key", True, id="dashed"),
        pytest.param("headers", True, id="headers"),
        pytest.param("client_secret", True, id="secret"),
        pytest.param("input_tokens", False, id="token-count"),
        pytest.param("max_tokens", False, id="max-tokens"),
        pytest.param("prompt", False, id="prompt"),
    ],
)
def test_secret_keys(key: str, secret: bool) -> None:
    assert is_secret_key(key) is secret


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=20,
)
secrets = st.text(alphabet="abcdefXYZ0123456789-", min_size=8, max_size=24)


@settings(suppress_health_check=[HealthCheck.too_slow])
@given(data=json_values, secret=secrets, where=st.sampled_from(["key", "text", "nested"]))
def test_a_learned_secret_never_survives_redaction(data: Any, secret: str, where: str) -> None:
    # a digits-only "secret" can occur by chance inside an unrelated number of the data
    assume(secret not in json.dumps(data))
    redactor = Redactor(environ={})
    redactor.learn({"target": {"params": {"api_key": secret}}})
    planted = {
        "key": {"data": data, "api_key": secret},
        "text": {"data": data, "message": f"provider said: bad key {secret}!"},
        "nested": [data, {"headers": {"X-Custom": f"Bearer {secret}"}}],
    }[where]
    out = json.dumps(redactor.redact(planted))
    assert secret not in out


@given(data=json_values)
def test_redaction_keeps_data_without_secrets(data: Any) -> None:
    def clean(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: clean(v) for k, v in value.items() if not is_secret_key(k)}
        if isinstance(value, list):
            return [clean(v) for v in value]
        return value

    plain = clean(data)
    assert Redactor(environ={}).redact(plain) == plain


def test_environment_secrets_are_redacted() -> None:
    redactor = Redactor(environ={"MY_SERVICE_TOKEN": "tok-0123456789", "HOME": "/home/someone"})
    assert redactor.redact("use tok-0123456789") == f"use {REDACTED}"
    assert redactor.redact("/home/someone") == "/home/someone"


segment = st.sampled_from(["a", "b", "data", "..", ".", "link"])


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture], max_examples=60)
@given(parts=st.lists(segment, min_size=1, max_size=5))
def test_confined_paths_stay_inside_the_root(tmp_path: Path, parts: list[str]) -> None:
    root = tmp_path / "root"
    (root / "a" / "b").mkdir(parents=True, exist_ok=True)
    (root / "data").write_text("x", encoding="utf-8")
    (tmp_path / "outside").write_text("x", encoding="utf-8")
    link = root / "a" / "link"
    if not link.is_symlink():
        link.symlink_to(tmp_path / "outside")
    value = "/".join(parts)
    try:
        found = confine(value, [root], "dataset")
    except ConfigError as exc:
        assert str(exc).startswith("dataset:")
        return
    assert ".." not in parts
    assert found.is_relative_to(root.resolve())


def test_validation_reasons_name_field_paths() -> None:
    errors = [
        {"loc": ("body", "dataset", "limit"), "msg": "must be >= 0"},
        {"loc": ("query", "limit"), "msg": "too big"},
        {"loc": (), "msg": "empty"},
    ]
    assert validation_reasons(errors) == [
        "dataset.limit: must be >= 0",
        "query.limit: too big",
        "(body): empty",
    ]
