"""The suite's pytest-xdist groups: one per test file, one for every test of the shared Ray."""

from __future__ import annotations

import pytest


def _group(item: pytest.Item) -> str:
    mark = item.get_closest_marker("xdist_group")
    assert mark is not None, f"{item.nodeid} has no xdist_group"
    return str(mark.args[0] if mark.args else mark.kwargs["name"])


def test_every_collected_test_has_its_files_group_or_the_ray_group(
    request: pytest.FixtureRequest,
) -> None:
    items = request.session.items
    assert items
    for item in items:
        expected = (
            "ray-cluster"
            if "ray_cluster" in getattr(item, "fixturenames", ())
            else item.nodeid.split("::", 1)[0].split("@", 1)[0]
        )
        assert _group(item) == expected, item.nodeid
    assert _group(request.node) == "tests/test_xdist_groups.py"
