"""``--cpu-durations=N``: the N tests that cost the most CPU, listed at the end of the run.

On a busy machine wall times say little (a test waits for the CPU others use); CPU time is what
a test costs CI's two cores. A test's figure is this process's CPU plus that of the processes it
started and waited for, over its set-up, call and tear-down; a server a fixture started counts
where the fixture stops it, and a process nobody waited for (Ray's workers, a PostgreSQL
backend) not at all. A process's last test tears down the session's fixtures too (a worker's
Chromium, with all the CPU its pages used): that tear-down is listed on a line of its own, not
as the test's. Each xdist worker's figures travel to the controller in its reports.
"""

from __future__ import annotations

import resource
from collections.abc import Generator
from typing import Any

import pytest

__all__ = [
    "cpu_seconds",
    "pytest_addoption",
    "pytest_configure",
    "pytest_runtest_makereport",
    "pytest_runtest_setup",
    "pytest_runtest_teardown",
]

#: The report property holding a phase's CPU seconds.
_PROPERTY = "cpu_seconds"
#: The report property holding the CPU seconds of the last test's tear-down, the session's.
_SESSION_PROPERTY = "cpu_seconds_session_teardown"
_STARTED = pytest.StashKey[float]()
_LAST = pytest.StashKey[bool]()


def cpu_seconds() -> float:
    """CPU seconds used so far by this process and the processes it waited for."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    waited = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + waited.ru_utime + waited.ru_stime


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.getgroup("terminal reporting").addoption(
        "--cpu-durations",
        type=int,
        default=None,
        metavar="N",
        help="list the N tests that used the most CPU (with the processes they waited for)",
    )


def _wanted(config: pytest.Config) -> bool:
    return config.getoption("cpu_durations", None) is not None


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Any, None]:
    # called right after each phase ran; the next phase's count starts here too
    outcome = yield
    if not _wanted(item.config):
        return
    now = cpu_seconds()
    started = item.stash.get(_STARTED, None)
    if started is not None:
        last = call.when == "teardown" and item.stash.get(_LAST, False)
        name = _SESSION_PROPERTY if last else _PROPERTY
        outcome.get_result().user_properties.append((name, now - started))
    item.stash[_STARTED] = now


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_teardown(
    item: pytest.Item, nextitem: pytest.Item | None
) -> Generator[None, None, None]:
    # no next test: this tear-down is also that of every session- and module-scoped fixture
    item.stash[_LAST] = nextitem is None
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Generator[None, None, None]:
    if _wanted(item.config):
        item.stash[_STARTED] = cpu_seconds()
    yield


class _Totals:
    """Each test's CPU seconds, summed over its phases (on the controller under xdist)."""

    def __init__(self) -> None:
        self.by_test: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        for name, value in report.user_properties:
            if name in (_PROPERTY, _SESSION_PROPERTY):
                key = report.nodeid
                if name == _SESSION_PROPERTY:
                    key = f"(a worker's session fixtures torn down after {report.nodeid})"
                self.by_test[key] = self.by_test.get(key, 0.0) + value

    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        count = terminalreporter.config.getoption("cpu_durations")
        ranked = sorted(self.by_test.items(), key=lambda pair: pair[1], reverse=True)
        total = sum(self.by_test.values())
        shown = ranked if count == 0 else ranked[:count]
        terminalreporter.write_sep("=", f"most CPU ({total:.1f} s in all tests)")
        for nodeid, seconds in shown:
            terminalreporter.write_line(f"{seconds:7.2f}s cpu  {nodeid}")


def pytest_configure(config: pytest.Config) -> None:
    if _wanted(config) and not hasattr(config, "workerinput"):
        config.pluginmanager.register(_Totals(), "aieval-cpu-durations")
