"""How the test suite is ordered and handed out to pytest-xdist workers.

A module's tests stay together, in one worker, one after the other: a module- or package-scoped
fixture (a live server with its runs, a browser, a local Ray) is set up once, not once for each
few tests a worker happens to be handed (pytest tears a module's fixtures down whenever the
next test comes from another module). xdist's own ``--dist loadfile`` does not do: it keys tests
by node id, and schemathesis's lazily generated tests share one node id (all but one would be
dropped without a word); this hands out tests by index, as ``--dist load`` does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pytest
from xdist.scheduler import LoadScheduling
from xdist.workermanage import WorkerController

__all__ = ["ModuleLoadScheduling", "module_of", "order_items", "pytest_xdist_make_scheduler"]


def module_of(nodeid: str) -> str:
    """The file part of a test's node id (``tests/x/test_y.py::test_z[a]`` ->
    ``tests/x/test_y.py``)."""
    return nodeid.split("::", 1)[0]


def order_items(
    items: list[pytest.Item], *, first: Sequence[Callable[[pytest.Item], bool]]
) -> None:
    """Sort ``items`` in place by module: the modules holding a test that ``first[0]`` picks,
    then those holding one ``first[1]`` picks, ..., then the rest; modules of a rank in their
    usual order, each module's tests together and in their usual order."""
    rank: dict[str, tuple[int, int]] = {}
    for position, item in enumerate(items):
        module = module_of(item.nodeid)
        picked = next((i for i, pick in enumerate(first) if pick(item)), len(first))
        best, where = rank.get(module, (len(first), position))
        rank[module] = (min(best, picked), where)
    items.sort(key=lambda item: rank[module_of(item.nodeid)])


class ModuleLoadScheduling(LoadScheduling):
    """``--dist load`` that never splits a module's run of tests between two workers: a chunk
    sent to a worker is extended to the end of the module its last test belongs to."""

    def _send_tests(self, node: WorkerController, num: int) -> None:
        assert self.collection is not None
        if 0 < num < len(self.pending):
            module = module_of(self.collection[self.pending[num - 1]])
            while (
                num < len(self.pending) and module_of(self.collection[self.pending[num]]) == module
            ):
                num += 1
        super()._send_tests(node, num)


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # no hook without xdist (-p no:xdist)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> LoadScheduling | None:
    """``--dist load`` hands out each module's tests to one worker, together; any other
    ``--dist`` is xdist's own."""
    if config.getvalue("dist") != "load":
        return None
    return ModuleLoadScheduling(config, log)
