"""Providers installed through the ``aieval.providers`` entry point."""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

import aieval.providers._registry as registry
from aieval.errors import ConfigError
from aieval.providers import get_provider


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "site"
    (folder / "aieval_provider_plugin").mkdir(parents=True)
    (folder / "aieval_provider_plugin" / "__init__.py").write_text(
        "from aieval.providers import OpenAIProvider\n\n"
        'def make(**kwargs):\n    return OpenAIProvider("http://127.0.0.1:9/v1")\n'
    )
    info = folder / "aieval_provider_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: aieval-provider-plugin\nVersion: 1\n"
    )
    monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()
    monkeypatch.setattr(registry, "_checked", set())
    monkeypatch.setattr(registry, "_registry", dict(registry._registry))
    yield info
    sys.modules.pop("aieval_provider_plugin", None)


def test_a_plugin_provider_is_found_by_its_name(site: Path) -> None:
    (site / "entry_points.txt").write_text(
        "[aieval.providers]\nmine = aieval_provider_plugin:make\n"
    )
    assert type(get_provider("mine")).__name__ == "OpenAIProvider"


def test_a_plugin_with_a_presets_name_is_refused_not_ignored(site: Path) -> None:
    (site / "entry_points.txt").write_text(
        "[aieval.providers]\nopenai = aieval_provider_plugin:make\n"
    )
    with pytest.raises(ConfigError, match=r"provider plug-in 'openai' .* rename the entry point"):
        get_provider("openai", api_key="sk-test")
