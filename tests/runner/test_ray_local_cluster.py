"""The local Ray a driver starts (no address given) dies with it, even when the driver is
killed (SIGKILL), and is shut down with its watchdog when the driver ends normally."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from aieval.runner._watchdog import find_psutil

ROOT = Path(__file__).parents[2]

DRIVER = textwrap.dedent(
    """
    import asyncio, pathlib, sys, time
    from aieval.runner import RayExecutor

    flag = pathlib.Path(sys.argv[1])

    def hold(item):
        flag.touch()
        time.sleep(600)

    async def main():
        async for _ in RayExecutor(address="local", num_cpus=1).map(hold, [1]):
            pass

    asyncio.run(main())
    """
)


def marked(psutil: Any, mark: str, seen: set[Any]) -> set[Any]:
    """Live processes whose environment carries ``mark`` (each a driver starts inherits it),
    those under them, and those of ``seen`` still alive (a renamed process, such as Ray's
    agents, may have lost its environment's text)."""
    found = set()
    for proc in psutil.process_iter():
        try:
            if proc.environ().get("AIEVAL_TEST_CLUSTER") == mark:
                found |= {proc, *proc.children(recursive=True)}
        except psutil.Error:
            continue
    return {p for p in found | seen if _alive(psutil, p)}


def _alive(psutil: Any, proc: Any) -> bool:
    try:
        return bool(proc.is_running()) and proc.status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


@pytest.mark.slow
def test_a_killed_drivers_local_ray_dies_with_it(tmp_path: Path) -> None:
    psutil = find_psutil()
    mark, flag = uuid.uuid4().hex, tmp_path / "running"
    environment = {k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}
    environment["AIEVAL_TEST_CLUSTER"] = mark
    driver = subprocess.Popen(
        [sys.executable, "-c", DRIVER, str(flag)],
        cwd=ROOT,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    seen: set[Any] = set()
    try:
        deadline = time.monotonic() + 120
        while not flag.exists() and time.monotonic() < deadline:
            assert driver.poll() is None, "the driver ended before its sample ran"
            time.sleep(0.1)
        assert flag.exists(), "the sample never started on the local Ray"
        # the processes that outlived a killed driver by a minute: the raylet starts them
        # on its own time, so wait until they run
        wanted = {"raylet", "gcs_server", "ray::DashboardAgent", "ray::RuntimeEnvAgent"}
        while True:
            seen = marked(psutil, mark, seen)
            names = {p.name() for p in seen}
            if wanted <= names:
                break
            assert time.monotonic() < deadline, f"the cluster never started them all: {names}"
            time.sleep(0.2)
        driver.send_signal(signal.SIGKILL)
        driver.wait()
        # Ray's agents alone take over a minute (they wait for the gone GCS); with the watchdog
        # they go within seconds: 45 s is generous for a busy machine, short of Ray's minute
        deadline = time.monotonic() + 45
        while (left := marked(psutil, mark, seen)) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not left, f"still alive: {[(p.pid, p.name()) for p in left]}"
    finally:
        if driver.poll() is None:
            driver.kill()
            driver.wait()
        for proc in marked(psutil, mark, seen):
            try:
                proc.kill()
            except psutil.Error:
                continue


@pytest.mark.slow
def test_unset_address_starts_a_private_ray_and_shuts_it_down_with_its_watchdog() -> None:
    # one private start for both points (each costs seconds of CPU): an executor given no
    # address starts a local Ray of its own, and at the end shuts it down and its watchdog ends
    out = subprocess.run(
        [sys.executable, "-c", _NORMAL],
        cwd=ROOT,
        env={k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"},
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["[2,", "4]", "ray-shut-down", "watchdog-gone"]


_NORMAL = textwrap.dedent(
    """
    import asyncio
    import ray
    from aieval.runner import RayExecutor

    executor = RayExecutor(num_cpus=1)
    watchdogs = []

    async def main():
        results = []
        async for done in executor.map(lambda x: 2 * x, [1, 2]):
            watchdogs.append(executor._reaper.process)
            results.append(done.value)
        return sorted(results)

    print(asyncio.run(main()))
    print("ray-running" if ray.is_initialized() else "ray-shut-down")
    assert executor._reaper is None and watchdogs
    print("watchdog-gone" if watchdogs[0].poll() is not None else "watchdog-alive")
    """
)


if sys.platform == "win32":  # pragma: no cover - the watchdog is POSIX only
    pytestmark = pytest.mark.skip("the local Ray's watchdog runs on POSIX only")
