"""Fixtures for runner tests: one real local Ray cluster, started on demand."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="module")
def ray_cluster() -> Iterator[Any]:
    """A local Ray with 2 CPUs, shared by a module's tests that ask for it, shut down when they
    are done (they run first, each module on one worker: ``tests/conftest.py``), not at the end
    of the session: an idle Ray still uses CPU. (Not ``scope="package"``: this folder is no
    package, so pytest would keep it for the whole session.)"""
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
