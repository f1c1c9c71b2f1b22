"""``ConfigError`` is a ``ValueError``, no ``except ValueError`` swallows one, and every error
survives pickling."""

from __future__ import annotations

import pickle

import pytest

import aieval.errors as errors
from aieval import run
from aieval.core import BUILTIN
from aieval.errors import ConfigError, IncompatibleDatasetError, ProviderError, UserError
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


def _every_error() -> list[Exception]:
    """One of each error in the tree, those with their own arguments built with them."""
    built: dict[str, Exception] = {
        "IncompatibleDatasetError": errors.IncompatibleDatasetError(
            "rows lack diff", missing_inputs={"diff": ["r1"]}
        ),
        "DatasetError": errors.DatasetError("bad row", source="data.jsonl", line=3),
        "RunInProgressError": errors.RunInProgressError(
            "busy", run_id="r1", pid=7, host="h", heartbeat_age_s=1.5
        ),
        "ProviderError": errors.ProviderError("failed", status=418),
        "RateLimitError": errors.RateLimitError("slow down", retry_after=2.0),
        "PushError": errors.PushError("refused", run_id="r1", forbidden=True),
        "ReplayMissError": errors.ReplayMissError("s-1", 3, "no turn 3", mode="strict"),
    }
    for name in errors.__all__:
        if name not in built:
            built[name] = getattr(errors, name)(f"a {name}")
    return list(built.values())


@pytest.mark.parametrize("error", _every_error(), ids=lambda e: type(e).__name__)
def test_every_error_survives_pickling_with_its_message_and_attributes(error: Exception) -> None:
    """A worker process (or Ray) sends errors back pickled: each comes back the same class,
    message and attributes, never a TypeError from calling ``__init__`` with the message."""
    if isinstance(error, ProviderError):
        error.retries = 2  # set by the retry layer after the error was made
    again = pickle.loads(pickle.dumps(error))
    assert type(again) is type(error)
    assert (str(again), again.args, vars(again)) == (str(error), error.args, vars(error))
