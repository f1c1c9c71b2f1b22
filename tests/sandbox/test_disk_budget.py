"""Everything a candidate can write, together, stays within ``max_disk_mb``."""

import errno
import json
import os
import shutil
import subprocess
import tempfile
import textwrap
from pathlib import Path

import pytest

from aieval.sandbox import SandboxLimits, _bwrap, _setup, _warm, execute

FILL = textwrap.dedent(
    """
    import errno, os

    def fill(folder, mb):
        # MiB written into folder before the first error, and that error's name.
        written = 0
        try:
            os.makedirs(folder, exist_ok=True)
            for i in range(mb):
                with open(f"{folder}/f{i}", "wb") as fh:
                    fh.write(b"a" * 1048576)
                written += 1
        except OSError as exc:
            return [written, errno.errorcode[exc.errno]]
        return [written, "none"]
    """
)


def test_writes_outside_the_scratch_fail_and_the_total_stays_in_the_budget() -> None:
    limits = SandboxLimits(max_disk_mb=16, max_file_mb=64, timeout=30)
    places = ["/tmp", "/dev/shm", "/dev", "/newdir", "/usr/local", "/proc/aieval"]
    tests = f"print([fill(p, 40) for p in {places!r}])"
    result = execute(FILL, tests, limits=limits)
    assert result.status == "passed", result.detail
    outcomes = dict(zip(places, eval(result.stdout), strict=True))  # plain literals printed above
    tmp_bytes, shm_bytes = _bwrap.scratch_split(16)
    assert outcomes["/tmp"] == [tmp_bytes // 1048576, "ENOSPC"], outcomes
    assert outcomes["/dev/shm"] == [shm_bytes // 1048576, "ENOSPC"], outcomes
    for place in ("/dev", "/newdir", "/usr/local"):
        assert outcomes[place][0] == 0 and outcomes[place][1] in ("EROFS", "EACCES"), outcomes
    assert outcomes["/proc/aieval"][0] == 0, outcomes
    assert sum(written for written, _ in outcomes.values()) <= 16
    assert "/dev/shm" in result.isolation and "read-only" in result.isolation


def test_the_budget_splits_into_scratch_and_shared_memory() -> None:
    for mb in (1, 8, 64, 1000):
        tmp_bytes, shm_bytes = _bwrap.scratch_split(mb)
        assert tmp_bytes + shm_bytes == mb * 1048576
        assert shm_bytes % 4096 == 0 and 0 < shm_bytes <= tmp_bytes


def test_multiprocessing_and_the_device_nodes_still_work() -> None:
    program = textwrap.dedent(
        """
        import multiprocessing

        def run():
            with open("/dev/null", "w") as sink:
                sink.write("discarded")
            lock = multiprocessing.Lock()
            with lock:
                queue = multiprocessing.Queue()
                queue.put(7)
                got = queue.get(timeout=10)
            with multiprocessing.Pool(2) as pool:
                absolute = pool.map(abs, [-1, -4, -9])  # the candidate's module does not pickle
            return [got, absolute]
        """
    )
    result = execute(program, "assert run() == [7, [1, 4, 9]]", limits=SandboxLimits(timeout=30))
    assert result.status == "passed", result.detail + result.stderr


FLOOD = textwrap.dedent(
    """
    import os

    def flood(folder):
        # empty files made in folder before the first error, and that error's number
        made = 0
        try:
            while made < 250_000:
                os.close(os.open(f"{folder}/e{made}", os.O_CREAT | os.O_WRONLY, 0o600))
                made += 1
        except OSError as exc:
            return [made, exc.errno]
        return [made, 0]

    def flood_or_fail():
        made, error = flood("/tmp")
        if error:
            raise OSError(error, os.strerror(error))
        return made
    """
)


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_empty_files_stop_at_the_scratchs_inode_bound(warm: bool) -> None:
    # held-out attack: 250,000 empty files pinned 249 MiB of kernel memory; one file, folder
    # or link per 4 KiB of scratch bounds them (224 in /tmp and 32 in /dev/shm for 1 MiB)
    limits = SandboxLimits(max_disk_mb=1, timeout=30.5, warm=warm)
    tmp_files, shm_files = (_bwrap.scratch_inodes(size) for size in _bwrap.scratch_split(1))
    assert (tmp_files, shm_files) == (224, 32)
    try:
        result = execute(FLOOD, "print([flood('/tmp'), flood('/dev/shm')])", limits=limits)
        assert result.status == "passed", result.detail
        (tmp_made, tmp_error), (shm_made, shm_error) = eval(result.stdout)  # plain literals
        assert tmp_error == shm_error == errno.ENOSPC
        assert 0 < tmp_made < tmp_files and 0 < shm_made < shm_files
        assert f"/tmp 0.875 MiB, {tmp_files} files" in result.isolation
        # a program that fails on it is told why, not only "No space left on device"
        failed = execute(FLOOD, "flood_or_fail()", limits=limits)
        assert failed.status == "failed", failed.detail
        assert "No space left on device" in failed.detail
        assert f"[the scratch ran out: /tmp holds its limit of {tmp_files} files" in failed.detail
        # the next program (of the same warm sandbox) finds an empty scratch again
        again = execute(FLOOD, "print(flood('/tmp'))", limits=limits)
        assert eval(again.stdout) == [tmp_made, errno.ENOSPC], again.stdout
    finally:
        with _warm._LOCK:
            pools = _warm._IDLE.pop(limits, [])
        for _since, pool in pools:
            pool.close()


def test_where_no_scratch_can_be_mounted_the_account_says_files_are_not_capped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # e.g. a host that refuses the launcher a user namespace of its own: bubblewrap's tmpfs,
    # bounded in bytes; the isolation text (and a code evaluation's summary) says so
    monkeypatch.setattr(_setup, "can_mount_scratch", lambda: False)
    limits = SandboxLimits(max_disk_mb=2, timeout=30.25, warm=False)
    many = 2 * _bwrap.scratch_inodes(_bwrap.scratch_split(2)[1])  # twice the bound
    program = (
        f"import os\ndef make():\n    for i in range({many}):\n        open(f'/dev/shm/{{i}}', 'w')"
    )
    result = execute(program, "make()", limits=limits)
    assert result.status == "passed", result.detail
    assert "files not capped, only the run's memory bounds them" in result.isolation


SYSTEM_PYTHON = "/usr/bin/python3"


@pytest.mark.skipif(os.geteuid() != 0, reason="starts the launcher as another user")
def test_an_unprivileged_launcher_mounts_the_scratch_in_a_user_namespace_of_its_own() -> None:
    # The launcher is stdlib-only: any interpreter that user can run will do.
    launch = Path(_setup.LAUNCH)
    readable = all(os.stat(p).st_mode & 0o005 for p in [*launch.parents, launch])
    if not (os.access(SYSTEM_PYTHON, os.X_OK) and readable):
        pytest.skip("no interpreter or launcher another user can run here")
    # as the launcher's own folders are: made by the user who runs it, in a temp folder
    folder = Path(tempfile.mkdtemp(prefix="aieval-launch-test-"))
    try:
        point = folder / "scratch"
        point.mkdir()
        for path in (folder, point):
            os.chown(path, 65534, 65534)
        settings = {"max_open_files": 64, "scratch": [[str(point), 1024 * 1024, 20]]}
        show = f"grep ' {point} ' /proc/self/mounts; touch {point}/made && echo made"
        argv = [SYSTEM_PYTHON, "-I", "-S", str(launch), json.dumps(settings), "--"]
        done = subprocess.run(
            [*argv, "/bin/sh", "-c", show],
            capture_output=True,
            text=True,
            timeout=60,
            user=65534,
            group=65534,
            extra_groups=[],
        )
        assert done.returncode == 0, done.stderr
        mount, made = done.stdout.splitlines()
        assert "tmpfs" in mount and "nr_inodes=20" in mount and "size=1024k" in mount, mount
        assert "uid=65534" in mount and made == "made"
        assert not (point / "made").exists()  # in the launcher's own mount namespace only
    finally:
        shutil.rmtree(folder, ignore_errors=True)
