"""The aieval pytest plugin (entry point ``pytest11: aieval``): eval files and marked tests.

* Files matching ``aieval_files`` (ini; default ``eval_*.yaml eval_*.yml``) that are aieval eval
  files (a mapping with ``dataset`` and ``scorers``, ``workflow`` or ``profile``) are collected
  as tests, one per run (one per recorded model of ``models:``), named by the eval's ``name`` so
  ``pytest -k`` selects them. A run that misses the policy fails with its summary and reasons;
  a broken eval file is one failing test. Any other file matching the patterns (a project's own
  ``eval_settings.yaml``) is left alone.
* ``@pytest.mark.aieval(min_pass_rate=..., min_metrics={...}, max_errors=...)`` on a test that
  returns the :class:`~aieval.runner.RunResult` (or a list of them) checks what it returns.

The policy of eval files comes from the ini options ``aieval_min_pass_rate`` (default 1.0) and
``aieval_max_errors`` (default 0); their runs go to ``--aieval-store`` (a path, or ``none``;
default ``$AIEVAL_DB`` or ``./aieval.db``), so a run a test made can be reported and compared.
Nothing heavy is imported until an eval file or a marked test is met.
"""

from __future__ import annotations

import inspect
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

_MARKER = (
    "aieval(min_pass_rate=1.0, min_metrics=None, max_errors=0): the aieval run(s) the test "
    "returns must meet this policy, or the test fails with the run's summary and reasons"
)


def pytest_addoption(parser: pytest.Parser) -> None:
    """Register the ini options and the ``--aieval-store`` command-line option."""
    parser.addini(
        "aieval_files",
        type="args",
        default=["eval_*.yaml", "eval_*.yml"],
        help="glob patterns of aieval eval files collected as tests",
    )
    parser.addini("aieval_min_pass_rate", default="1.0", help="eval files: required pass rate")
    parser.addini("aieval_max_errors", default="0", help="eval files: errors tolerated")
    parser.getgroup("aieval").addoption(
        "--aieval-store",
        default=None,
        help="where eval-file runs are stored: a SQLite path, a postgresql:// URL, or 'none'"
        " (default: $AIEVAL_DB or ./aieval.db)",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Declare the ``aieval`` marker (``--strict-markers`` accepts it)."""
    config.addinivalue_line("markers", _MARKER)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    """Collect the aieval eval files among the files matching ``aieval_files``."""
    patterns = parent.config.getini("aieval_files")
    # Path.match compares from the right: ``eval_*.yaml`` matches a name, ``evals/*.yaml`` a
    # file in any folder named ``evals``
    if any(file_path.match(p) for p in patterns) and _is_eval_file(file_path):
        collected: pytest.Collector = EvalFile.from_parent(parent, path=file_path)
        return collected
    return None


def _is_eval_file(path: Path) -> bool:
    """Whether ``path`` is an aieval eval file the plugin collects.

    A YAML file is one when its document is a mapping with a ``dataset`` key and a ``scorers``,
    ``workflow`` or ``profile`` key (what every eval file has); whether their values are valid
    is the test's to say. Any other file (another tool's config, a YAML syntax error, several
    documents) is not collected. A file of another type matched by ``aieval_files`` (``.py``)
    is always collected: naming it there is the opt-in.
    """
    if path.suffix.lower() not in (".yaml", ".yml"):
        return True
    import yaml

    try:
        # composing builds nodes only: no object, no alias expansion, whatever the file holds
        node = yaml.compose(path.read_text(encoding="utf-8"), Loader=yaml.SafeLoader)
    except (OSError, UnicodeDecodeError, yaml.YAMLError):
        return False
    if not isinstance(node, yaml.MappingNode):
        return False
    keys = {k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)}
    return "dataset" in keys and not keys.isdisjoint(_GRADING_KEYS)


_GRADING_KEYS = frozenset({"scorers", "workflow", "profile"})


@pytest.hookimpl(tryfirst=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function) -> bool | None:
    """Run a marked test and check the run(s) it returns against the marker's policy."""
    marker = pyfuncitem.get_closest_marker("aieval")
    if marker is None:
        return None
    from aieval.testing._policy import EvalFailed, EvalPolicy, assert_run, runs_of

    if marker.args:
        pytest.fail("@pytest.mark.aieval takes keyword options only", pytrace=False)
    if inspect.iscoroutinefunction(pyfuncitem.obj):
        pytest.fail(
            "@pytest.mark.aieval cannot see what an async test returns; call "
            "aieval.testing.assert_run(result) inside it instead",
            pytrace=False,
        )
    policy = EvalPolicy.of(marker.kwargs)
    names = pyfuncitem._fixtureinfo.argnames
    returned = pyfuncitem.obj(**{name: pyfuncitem.funcargs[name] for name in names})
    runs, wrong = runs_of(returned)
    if wrong is not None:
        pytest.fail(
            f"{pyfuncitem.nodeid} is marked aieval but returned {wrong}; return the RunResult "
            "of run() (or a list of them)",
            pytrace=False,
        )
    message = None
    try:
        assert_run(runs, policy=policy)
    except EvalFailed as failed:
        message = str(failed)
    if message is not None:  # raised outside the handler, so no chained traceback is shown
        pytest.fail(message, pytrace=False)
    return True


class EvalFile(pytest.File):
    """An eval file: one test per run it makes."""

    def collect(self) -> Iterator[pytest.Item]:
        """One item per recorded model (or one for the eval); a broken file is one failing item,
        so the rest of the session still runs."""
        from aieval.errors import UserError
        from aieval.runner import load_eval

        try:
            config = load_eval(self.path)
        except UserError as exc:
            yield BrokenEvalFile.from_parent(self, name=self.path.name, error=exc)
            return
        models: list[str | None] = [*config.models] if config.models else [None]
        for model in models:
            name = config.name if model is None else f"{config.name}[{model}]"
            yield EvalItem.from_parent(self, name=name, model=model)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException]) -> Any:  # type: ignore[override]
        """A bad eval file reads as its one-line error, not a traceback."""
        return _plain(excinfo) or super().repr_failure(excinfo)


class BrokenEvalFile(pytest.Item):
    """An eval file that does not load: a test that fails with the file's error."""

    def __init__(self, *, error: Exception, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.error = error

    def runtest(self) -> None:
        """Fail with the error that loading the file raised."""
        raise self.error

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        """The file's one-line error (it names the file and the field), not a traceback."""
        return _plain(excinfo) or super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the item comes from, for pytest's report lines."""
        return self.path, None, f"aieval eval file {self.path.name}"


class EvalItem(pytest.Item):
    """One run of an eval file, checked against the ini policy."""

    def __init__(self, *, model: str | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.model = model

    def runtest(self) -> None:
        """Run the eval (this model only) and assert the policy."""
        from aieval.testing._policy import EvalPolicy, assert_run, run_eval_file

        policy = EvalPolicy(
            min_pass_rate=float(self.config.getini("aieval_min_pass_rate")),
            max_errors=int(self.config.getini("aieval_max_errors")),
        )
        models = [self.model] if self.model is not None else None
        results = run_eval_file(self.path, models=models, store=_store(self.config))
        assert_run(results, policy=policy)

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style: Any = None) -> Any:
        """A missed policy or a user error reads as its message, not a traceback."""
        return _plain(excinfo) or super().repr_failure(excinfo, style)

    def reportinfo(self) -> tuple[Path, int | None, str]:
        """Where the item comes from, for pytest's report lines."""
        return self.path, None, f"aieval eval {self.name}"


def _store(config: pytest.Config) -> str | bool:
    value = config.getoption("--aieval-store")
    if value is None:
        return True
    return False if str(value).lower() == "none" else str(value)


def _plain(excinfo: pytest.ExceptionInfo[BaseException]) -> str | None:
    from aieval.errors import UserError
    from aieval.testing._policy import EvalFailed

    if isinstance(excinfo.value, EvalFailed | UserError):
        return str(excinfo.value)
    return None
