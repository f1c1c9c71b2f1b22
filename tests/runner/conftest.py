"""Fixtures for runner tests: one real local Ray cluster per test session, started on demand."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Any]:
    """A local Ray with 2 CPUs, shared by every test that asks for it, shut down at the end."""
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
