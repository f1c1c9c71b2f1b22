"""Everything a candidate can write, together, stays within ``max_disk_mb``."""

import textwrap

from aieval.sandbox import SandboxLimits, _bwrap, execute

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
