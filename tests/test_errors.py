"""``ConfigError`` is a ``ValueError``, and no ``except ValueError`` swallows one."""

from __future__ import annotations

import pytest

from aieval import run
from aieval.core import BUILTIN
from aieval.errors import ConfigError, IncompatibleDatasetError, UserError
from aieval.providers import build_provider


def test_a_bad_argument_is_a_value_error_and_a_user_error() -> None:
    assert issubclass(ConfigError, ValueError)
    assert issubclass(IncompatibleDatasetError, ValueError)
    rows = [{"prompt": "q", "expected": "a", "prediction": "a"}]
    with pytest.raises(ValueError, match="max_error_rate") as caught:
        run(name="x", dataset=rows, scorers=["exact_match"], max_error_rate=2, store=False)
    assert isinstance(caught.value, ConfigError)
    assert isinstance(caught.value, UserError)


def test_a_provider_plugin_that_cannot_load_is_named_not_guessed_around(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # checking which arguments the factory takes once caught ValueError: the plug-in's load
    # error (a ConfigError, so a ValueError) must reach the caller, naming the plug-in
    monkeypatch.setitem(BUILTIN, "aieval.providers", {"broken": "no_such_module_x:factory"})
    with pytest.raises(ConfigError, match=r"'broken'.*'aieval.providers'.*no_such_module_x"):
        build_provider("broken", headers={"X-Team": "a"}, cache=False)
