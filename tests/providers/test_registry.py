"""Presets, the registry, entry points and build_provider."""

from __future__ import annotations

from collections.abc import Iterator
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest
from tests.support.openai_server import OpenAIServer

import aieval.providers._registry as registry_module
from aieval.errors import (
    ConfigError,
    ProviderAuthError,
    ProviderNotFoundError,
    UserError,
)
from aieval.providers import (
    AnthropicProvider,
    CachedProvider,
    ChatRequest,
    ChatResponse,
    OpenAIProvider,
    Provider,
    ResilientProvider,
    ResponseCache,
    available_providers,
    build_provider,
    get_provider,
    register_provider,
)

ENV_VARS = [
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "SARMALINK_BASE_URL",
    "SARMALINK_API_KEY",
    "VLLM_BASE_URL",
    "VLLM_API_KEY",
    "OLLAMA_BASE_URL",
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_BASE_URL",
]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for name in ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    # Registrations made by a test stay in that test.
    monkeypatch.setattr(registry_module, "_registry", dict(registry_module._registry))
    monkeypatch.setattr(metadata, "entry_points", lambda **kwargs: [])
    yield


def _openai(provider: Provider) -> OpenAIProvider:
    assert isinstance(provider, OpenAIProvider)
    return provider


@pytest.mark.parametrize(
    ("name", "env", "base_url"),
    [
        pytest.param(
            "openai", {"OPENAI_API_KEY": "k"}, "https://api.openai.com/v1", id="openai-default"
        ),
        pytest.param(
            "openai",
            {"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": "https://proxy.example/v1/"},
            "https://proxy.example/v1",
            id="openai-base-url",
        ),
        pytest.param(
            "sarmalink",
            {"SARMALINK_BASE_URL": "https://sarma.example/v1", "SARMALINK_API_KEY": "k"},
            "https://sarma.example/v1",
            id="sarmalink",
        ),
        pytest.param("vllm", {}, "http://localhost:8000/v1", id="vllm-default"),
        pytest.param(
            "vllm", {"VLLM_BASE_URL": "http://gpu:9000/v1"}, "http://gpu:9000/v1", id="vllm-env"
        ),
        pytest.param("ollama", {}, "http://localhost:11434/v1", id="ollama-default"),
        pytest.param(
            "ollama", {"OLLAMA_BASE_URL": "http://box:11434/v1"}, "http://box:11434/v1", id="ollama"
        ),
    ],
)
def test_presets_read_the_environment(
    monkeypatch: pytest.MonkeyPatch, name: str, env: dict[str, str], base_url: str
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    provider = _openai(get_provider(name))
    assert provider.name == name
    assert provider.base_url == base_url


@pytest.mark.parametrize(
    ("name", "env", "error_type", "names_var"),
    [
        pytest.param("openai", {}, ProviderAuthError, "OPENAI_API_KEY", id="openai-key"),
        pytest.param(
            "openai", {"OPENAI_API_KEY": ""}, ProviderAuthError, "OPENAI_API_KEY", id="empty-key"
        ),
        pytest.param(
            "sarmalink",
            {"SARMALINK_API_KEY": "k"},
            ConfigError,
            "SARMALINK_BASE_URL",
            id="sarmalink-url",
        ),
        pytest.param(
            "sarmalink",
            {"SARMALINK_BASE_URL": "https://sarma.example/v1"},
            ProviderAuthError,
            "SARMALINK_API_KEY",
            id="sarmalink-key",
        ),
        pytest.param("anthropic", {}, ProviderAuthError, "ANTHROPIC_API_KEY", id="anthropic-key"),
        pytest.param("openai-compatible", {}, ConfigError, "base_url=", id="compatible-url"),
    ],
)
def test_missing_settings_fail_at_build_time(
    monkeypatch: pytest.MonkeyPatch,
    name: str,
    env: dict[str, str],
    error_type: type[Exception],
    names_var: str,
) -> None:
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    with pytest.raises(error_type, match=names_var) as info:
        build_provider(name, cache=False)
    assert isinstance(info.value, UserError)


def test_arguments_override_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-from-env")
    monkeypatch.setenv("OPENAI_BASE_URL", "https://env.example/v1")
    provider = _openai(get_provider("openai", base_url="http://arg.example/v1", api_key="sk-arg"))
    assert provider.base_url == "http://arg.example/v1"
    assert provider._api_key == "sk-arg"


def test_keys_stay_out_of_reprs(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("SARMALINK_BASE_URL", "https://sarma.example/v1")
    monkeypatch.setenv("SARMALINK_API_KEY", "sk-sarma-very-secret")
    built = build_provider("sarmalink", cache_path=tmp_path / "c.db")
    assert "sk-sarma-very-secret" not in repr(built)
    assert "sk-sarma-very-secret" not in str(built)


def test_unknown_name_lists_known_ones() -> None:
    with pytest.raises(ProviderNotFoundError) as info:
        get_provider("nope")
    for known in ("anthropic", "ollama", "openai", "openai-compatible", "sarmalink", "vllm"):
        assert known in str(info.value)
    assert isinstance(info.value, UserError)


def test_unknown_argument_is_a_config_error() -> None:
    with pytest.raises(ConfigError, match=r"'vllm'.*colour"):
        get_provider("vllm", colour="blue")


class EchoProvider:
    """A user's own provider: a name, an async generate and an aclose."""

    def __init__(self, name: str = "echo", prefix: str = "") -> None:
        self.name = name
        self.prefix = prefix
        self.closed = False

    async def generate(self, request: ChatRequest) -> ChatResponse:
        return ChatResponse(text=self.prefix + request.messages[-1]["content"], model=request.model)

    async def aclose(self) -> None:
        self.closed = True


def test_register_and_get() -> None:
    register_provider("echo", EchoProvider)
    provider = get_provider("echo", prefix="> ")
    assert isinstance(provider, EchoProvider) and provider.prefix == "> "
    assert "echo" in available_providers()
    assert available_providers() == sorted(available_providers())


def test_factory_must_return_a_provider() -> None:
    register_provider("broken", lambda **kwargs: object())
    with pytest.raises(ConfigError, match=r"'broken'.*object"):
        get_provider("broken")


@pytest.mark.parametrize(
    ("name", "factory"),
    [pytest.param("", EchoProvider, id="empty-name"), pytest.param("x", 42, id="not-callable")],
)
def test_bad_registration(name: str, factory: Any) -> None:
    with pytest.raises(ConfigError):
        register_provider(name, factory)


class _FakeEntryPoint:
    def __init__(self, name: str, value: str, target: object) -> None:
        self.name, self.value, self.target = name, value, target
        self.loads = 0

    def load(self) -> object:
        self.loads += 1
        if isinstance(self.target, Exception):
            raise self.target
        return self.target


def test_entry_points_are_listed_then_loaded_lazily(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = _FakeEntryPoint("gateway", "acme.providers:Gateway", EchoProvider)
    seen_groups: list[str] = []

    def fake_entry_points(**kwargs: str) -> list[_FakeEntryPoint]:
        seen_groups.append(kwargs["group"])
        return [entry]

    monkeypatch.setattr(metadata, "entry_points", fake_entry_points)
    assert "gateway" in available_providers()
    assert entry.loads == 0
    provider = get_provider("gateway", name="gateway")
    assert provider.name == "gateway"
    get_provider("gateway")
    assert entry.loads == 1
    assert set(seen_groups) == {"aieval.providers"}


def test_broken_entry_point_names_itself(monkeypatch: pytest.MonkeyPatch) -> None:
    entry = _FakeEntryPoint("bad", "acme.missing:Thing", ImportError("No module named 'acme'"))
    monkeypatch.setattr(metadata, "entry_points", lambda **kwargs: [entry])
    with pytest.raises(ConfigError, match=r"acme\.missing:Thing.*No module named"):
        get_provider("bad")


def test_build_provider_composes_cache_over_resilience(tmp_path: Path) -> None:
    built = build_provider("vllm", retries=5, concurrency=7, cache_path=tmp_path / "x.db")
    assert isinstance(built, CachedProvider)
    assert built.cache.path == tmp_path / "x.db"
    resilient = built.inner
    assert isinstance(resilient, ResilientProvider)
    assert resilient.retry.max_retries == 5
    assert resilient.limiter.max_concurrency == 7
    assert isinstance(resilient.inner, OpenAIProvider)
    assert built.name == "vllm"


@pytest.mark.parametrize(
    ("cache", "expected_path"),
    [
        pytest.param(False, None, id="off"),
        pytest.param("custom.db", "custom.db", id="path-string"),
    ],
)
def test_build_provider_cache_choices(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, cache: Any, expected_path: str | None
) -> None:
    monkeypatch.chdir(tmp_path)
    built = build_provider("ollama", cache=cache)
    if expected_path is None:
        assert isinstance(built, ResilientProvider)
    else:
        assert isinstance(built, CachedProvider)
        assert built.cache.path == Path(expected_path)


async def test_build_provider_wraps_an_instance(
    tmp_path: Path, openai_server: OpenAIServer
) -> None:
    cache = ResponseCache(tmp_path / "c.db")
    own = EchoProvider()
    built = build_provider(own, cache=cache)
    request = ChatRequest(model="m", messages=[{"role": "user", "content": "hey"}], temperature=0)
    assert (await built.generate(request)).text == "hey"
    assert (await built.generate(request)).cached is True
    await built.aclose()
    assert own.closed
    assert cache.get("missing") is None  # a cache passed in stays open for its owner
    cache.close()


async def test_build_provider_timeout_reaches_the_preset(openai_server: OpenAIServer) -> None:
    built = build_provider("openai-compatible", base_url=openai_server.base_url, timeout=3.5)
    assert isinstance(built, CachedProvider) and isinstance(built.inner, ResilientProvider)
    assert _openai(built.inner.inner).timeout == 3.5
    await built.aclose()


def test_build_provider_refuses_overrides_for_an_instance() -> None:
    with pytest.raises(ConfigError, match="base_url"):
        build_provider(EchoProvider(), base_url="http://x/v1")


def test_build_provider_rejects_other_objects() -> None:
    with pytest.raises(ConfigError, match="provider must be"):
        build_provider(42)  # type: ignore[arg-type]


def test_anthropic_preset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-secret")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:1/")
    provider = get_provider("anthropic")
    assert isinstance(provider, AnthropicProvider)
    assert provider.base_url == "http://127.0.0.1:1"
    assert "sk-ant-secret" not in repr(provider)
