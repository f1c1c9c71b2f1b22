"""Run observers: a third-party plug-in found by its entry point sees a real run, in order."""

from __future__ import annotations

import importlib
import logging
import sys
import textwrap
from pathlib import Path

import pytest

from aieval import Store, run
from aieval.core import RunFinish, RunStart, SampleRecord
from aieval.errors import ConfigError

ROWS = [
    {"id": f"r{i}", "prompt": f"q{i}", "expected": "YES", "prediction": "YES" if i % 2 else "no"}
    for i in range(5)
]

PLUGIN = """
EVENTS = []


class Recorder:
    def on_start(self, run):
        EVENTS.append(("start", run.id, run.name, run.n_examples, run.dataset_hash))

    def on_sample(self, run, sample, done, total):
        EVENTS.append(("sample", run.id, sample.id, sample.passed, done, total))

    def on_finish(self, run, end):
        EVENTS.append(("finish", end.id, end.status, end.summary["samples"], end.error))


def factory(options):
    EVENTS.append(("options", options.telemetry))
    return Recorder()
"""


def _install(site: Path, name: str, source: str, entry: str) -> None:
    """A package ``name`` with an ``aieval.observers`` entry point, importable from ``site``."""
    (site / name).mkdir(parents=True)
    (site / name / "__init__.py").write_text(textwrap.dedent(source))
    info = site / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[aieval.observers]\n{entry}\n")


@pytest.fixture
def site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "site"
    folder.mkdir()
    monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()
    return folder


def test_a_third_party_observer_sees_a_real_run(site: Path, tmp_path: Path) -> None:
    _install(site, "aieval_recorder", PLUGIN, "recorder = aieval_recorder:factory")
    db = tmp_path / "runs.db"
    try:
        result = run(name="observed", dataset=ROWS, scorers=["exact_match"], store=db)
        events = list(sys.modules["aieval_recorder"].EVENTS)
    finally:
        sys.modules.pop("aieval_recorder", None)
    stored = {s.id: s.passed for s in Store(db).iter_samples(result.id)}
    assert events[0] == ("options", False)
    assert events[1] == ("start", result.id, "observed", 5, result.dataset_hash)
    samples = events[2:-1]
    assert [e[4] for e in samples] == [1, 2, 3, 4, 5]  # each once it is stored, in order
    assert {e[2]: e[3] for e in samples} == stored
    assert stored == {r["id"]: r["prediction"] == "YES" for r in ROWS}
    assert all(e[1] == result.id and e[5] == 5 for e in samples)
    assert events[-1] == ("finish", result.id, "completed", 5, None)


class _Given:
    def __init__(self, fail_on: str | None = None) -> None:
        self.fail_on = fail_on
        self.seen: list[str] = []

    def on_start(self, run: RunStart) -> None:
        self._note("start")

    def on_sample(self, run: RunStart, sample: SampleRecord, done: int, total: int) -> None:
        self._note(f"sample {done}/{total}")

    def on_finish(self, run: RunStart, end: RunFinish) -> None:
        self._note(f"finish {end.status}")

    def _note(self, what: str) -> None:
        self.seen.append(what)
        if self.fail_on is not None and what.startswith(self.fail_on):
            raise RuntimeError(f"observer broke on {what}")


def test_an_observer_that_raises_is_logged_and_dropped_never_failing_the_run(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from aieval.runner import RunSpec, run_spec

    broken, fine = _Given(fail_on="sample 2"), _Given()
    spec = RunSpec(name="obs", dataset=ROWS, scorers=["exact_match"], store=str(tmp_path / "d"))
    with caplog.at_level(logging.WARNING, logger="aieval"):
        result = run_spec(spec, observers=[broken, fine])
    assert result.status == "completed"
    assert broken.seen == ["start", "sample 1/5", "sample 2/5"]
    assert fine.seen == ["start", *(f"sample {i}/5" for i in range(1, 6)), "finish completed"]
    assert "observer _Given failed in on_sample" in caplog.text


def test_an_observer_plugin_that_refuses_stops_the_run_before_anything_is_stored(
    site: Path, tmp_path: Path
) -> None:
    source = """
    from aieval.errors import ConfigError

    def factory(options):
        raise ConfigError("the refuser needs its extra: pip install refuser[all]")
    """
    _install(site, "aieval_refuser", source, "refuser = aieval_refuser:factory")
    db = tmp_path / "runs.db"
    try:
        with pytest.raises(ConfigError, match=r"refuser needs its extra"):
            run(name="refused", dataset=ROWS, scorers=["exact_match"], store=db)
    finally:
        sys.modules.pop("aieval_refuser", None)
    assert not db.exists() or Store(db).list_runs() == []


def test_an_object_without_the_hooks_is_refused_naming_it() -> None:
    from aieval.runner import RunSpec, run_spec

    spec = RunSpec(name="obs", dataset=ROWS, scorers=["exact_match"], store=False)
    with pytest.raises(ConfigError, match=r"observers\[0\]: list lacks on_start"):
        run_spec(spec, observers=[[]])  # type: ignore[list-item]


def test_an_observer_plugin_whose_factory_crashes_is_named_and_nothing_is_stored(
    site: Path, tmp_path: Path
) -> None:
    source = """
    def factory(options):
        raise RuntimeError("factory exploded")
    """
    _install(site, "aieval_crasher", source, "crasher = aieval_crasher:factory")
    db = tmp_path / "runs.db"
    try:
        with pytest.raises(
            ConfigError, match=r"observer plug-in 'crasher' failed: RuntimeError: factory exploded"
        ):
            run(name="crashed", dataset=ROWS, scorers=["exact_match"], store=db)
    finally:
        sys.modules.pop("aieval_crasher", None)
    assert not db.exists() or Store(db).list_runs() == []


@pytest.mark.parametrize("key", ["concurrency", "max_error_rate"])
def test_a_number_given_as_text_is_refused_naming_it(key: str) -> None:
    with pytest.raises(ConfigError, match=rf"run\(\): {key} must be a number, got str"):
        run(name="typed", dataset=ROWS, scorers=["exact_match"], store=False, **{key: "4"})
