"""The suite's order and its hand-out to pytest-xdist workers (``tests/support/schedule.py``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from tests.support.schedule import ModuleLoadScheduling, order_items

ROOT = Path(__file__).resolve().parents[1]


class _Node:
    """A worker as the scheduler sees it: what it was sent."""

    def __init__(self) -> None:
        self.sent: list[int] = []
        self.shutting_down = False
        self.gateway = SimpleNamespace(id=f"gw{id(self)}")

    def send_runtest_some(self, indices: list[int]) -> None:
        self.sent.extend(indices)

    def shutdown(self) -> None:
        self.shutting_down = True


def _config(chunk: int) -> Any:
    values = {"tx": ["2*popen"], "dist": "load", "maxschedchunk": chunk}
    return SimpleNamespace(getvalue=values.__getitem__, getoption=values.__getitem__)


def _hand_out(collection: list[str], chunk: int) -> list[_Node]:
    """Run the scheduler to the end, the workers finishing their tests in turn."""
    scheduler = ModuleLoadScheduling(_config(chunk))
    nodes = [_Node(), _Node()]
    for node in nodes:
        scheduler.add_node(node)  # type: ignore[arg-type]
        scheduler.add_node_collection(node, collection)  # type: ignore[arg-type]
    scheduler.schedule()
    while scheduler.has_pending:
        for node in nodes:
            pending = scheduler.node2pending[node]  # type: ignore[index]
            if pending:
                scheduler.mark_test_complete(node, pending[0])  # type: ignore[arg-type]
    return nodes


def test_a_modules_tests_go_to_one_worker_and_none_is_dropped_or_sent_twice() -> None:
    # schemathesis's lazy tests share one node id: each must still be sent, once
    collection = [f"tests/m{m}.py::test_{t}" for m in range(7) for t in range(m * 3 + 1)]
    collection += ["tests/lazy.py::test_no_server_errors"] * 9 + ["tests/lazy.py::test_other"]
    nodes = _hand_out(collection, chunk=2)
    assert sorted(nodes[0].sent + nodes[1].sent) == list(range(len(collection)))
    modules = [{collection[i].split("::")[0] for i in node.sent} for node in nodes]
    assert not modules[0] & modules[1], "a module was split between the workers"
    assert all(modules), "both workers had tests"


def test_modules_are_ordered_by_their_first_pick_and_kept_together() -> None:
    def item(nodeid: str, *, ray: bool = False, slow: bool = False) -> Any:
        return SimpleNamespace(
            nodeid=nodeid,
            fixturenames=["ray_cluster"] if ray else [],
            get_closest_marker=lambda name: object() if slow and name == "slow" else None,
        )

    items = [
        item("a.py::t1"),
        item("b.py::t1"),
        item("b.py::t2", slow=True),
        item("a.py::t2"),
        item("c.py::t1", slow=True),
        item("d.py::t1", ray=True),
        item("b.py::t3"),
        item("d.py::t2", slow=True),
    ]
    order_items(
        items,
        first=(
            lambda i: "ray_cluster" in i.fixturenames,
            lambda i: i.get_closest_marker("slow") is not None,
        ),
    )
    assert [i.nodeid for i in items] == [
        "d.py::t1",
        "d.py::t2",
        "b.py::t1",
        "b.py::t2",
        "b.py::t3",
        "c.py::t1",
        "a.py::t1",
        "a.py::t2",
    ]


_MODULE = """
import os, pytest

@pytest.fixture(scope="module")
def shared():
    with open(os.environ["SETUPS"], "a") as log:
        log.write(__name__ + "\\n")

@pytest.mark.parametrize("n", range(12))
def test_it(shared, n):
    pass
"""


def test_under_xdist_each_modules_fixture_is_set_up_once(tmp_path: Path) -> None:
    # with xdist's own --dist load, tests handed out two at a time split each module between
    # the workers and set its module-scoped fixture up again for every few tests
    for name in ("test_a", "test_b", "test_c"):
        (tmp_path / f"{name}.py").write_text(_MODULE)
    (tmp_path / "conftest.py").write_text(
        "from tests.support.schedule import pytest_xdist_make_scheduler  # noqa: F401\n"
    )
    setups = tmp_path / "setups.log"
    env = {
        **os.environ,
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",  # only the plugin needed: quick to start
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "SETUPS": str(setups),
    }
    pytest_args = ["-p", "xdist", "-p", "no:cacheprovider", "-q", "-c", os.devnull]
    xdist_args = ["-n", "2", "--dist", "load", "--maxschedchunk", "2"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", *pytest_args, *xdist_args, "--rootdir", str(tmp_path)],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "36 passed" in done.stdout
    assert sorted(setups.read_text().split()) == ["test_a", "test_b", "test_c"]
