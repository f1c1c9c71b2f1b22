"""Fixtures for runner tests: one real local Ray cluster, started on demand."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="package")
def ray_cluster() -> Iterator[Any]:
    """A local Ray with 2 CPUs, shared by the tests that ask for it, shut down when the tests
    leave this folder (they run first, side by side: ``tests/conftest.py``), not at the end of
    the session: an idle Ray still uses CPU."""
    import ray

    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        object_store_memory=128 * 1024 * 1024,
        log_to_driver=False,
    )
    try:
        yield ray
    finally:
        ray.shutdown()
