"""Scorers installed through the ``aieval.scorers`` entry point: named as the user asks for them."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

import aieval.scorers._scorer as scorer_module
from aieval import run
from aieval.errors import ConfigError

ROWS = [{"id": "a", "prompt": "q", "expected": "x", "prediction": "hello there"}]


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()
    monkeypatch.setattr(scorer_module, "_entry_points_loaded", False)
    monkeypatch.setattr(scorer_module, "_names", None)
    monkeypatch.setattr(scorer_module, "_REGISTRY", dict(scorer_module._REGISTRY))
    yield folder
    sys.modules.pop("aieval_hello_plugin", None)


def _install(site: Path, source: str, entry: str) -> None:
    (site / "aieval_hello_plugin").mkdir()
    (site / "aieval_hello_plugin" / "__init__.py").write_text(textwrap.dedent(source))
    info = site / "aieval_hello_plugin-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: aieval-hello-plugin\nVersion: 1.0\n"
    )
    (info / "entry_points.txt").write_text(f"[aieval.scorers]\n{entry}\n")


def test_a_plugin_scorer_is_stored_under_its_entry_point_name(site: Path) -> None:
    source = """
    from aieval import scorer

    @scorer
    def _hh(prediction, expected):
        return 1.0 if "hello" in prediction else 0.0
    """
    _install(site, source, "has_hello = aieval_hello_plugin:_hh")
    result = run(name="plug", dataset=ROWS, scorers=["has_hello"], store=False)
    assert list(result.samples[0].scores) == ["has_hello"]
    assert result.samples[0].scores["has_hello"].value == 1.0


def test_a_plugin_that_is_no_scorer_is_refused_naming_it(site: Path) -> None:
    _install(site, "NOT_A_SCORER = 42\n", "has_hello = aieval_hello_plugin:NOT_A_SCORER")
    with pytest.raises(ConfigError, match=r"scorer plug-in 'has_hello' \(aieval.scorers\) is int"):
        run(name="plug", dataset=ROWS, scorers=["has_hello"], store=False)


def test_a_misspelt_scorer_name_gets_the_nearest_known_name() -> None:
    with pytest.raises(ConfigError, match=r"unknown scorer 'tokn_f1' \(did you mean token_f1\?\)"):
        run(name="typo", dataset=ROWS, scorers=["tokn_f1"], store=False)


def test_a_plugin_with_a_built_in_scorers_name_is_refused_naming_both(site: Path) -> None:
    source = """
    from aieval import Scorer

    def _mine(prediction, expected):
        return 1.0

    mine = Scorer(_mine, name="exact_match")
    """
    _install(site, source, "exact_match = aieval_hello_plugin:mine")
    with pytest.raises(
        ConfigError,
        match=r"scorer plug-in 'exact_match' .* already registered here "
        r"\(aieval\.scorers\._text\.exact_match\): rename one",
    ):
        run(name="plug", dataset=ROWS, scorers=["exact_match"], store=False)


def test_a_plugin_with_a_built_in_entry_points_name_is_refused_naming_both(site: Path) -> None:
    from aieval.core import load_plugin

    _install(site, "def other(**_):\n    return None\n", "x = y")  # the package's dist-info
    (site / "aieval_hello_plugin-1.0.dist-info" / "entry_points.txt").write_text(
        "[aieval.graders]\nthreshold = aieval_hello_plugin:other\n"
    )
    with pytest.raises(
        ConfigError,
        match=r"plug-in 'threshold' of entry-point group 'aieval.graders' is both aieval's "
        r"built-in \(aieval.core._threshold:factory\) and aieval-hello-plugin's",
    ):
        load_plugin("aieval.graders", "threshold")
