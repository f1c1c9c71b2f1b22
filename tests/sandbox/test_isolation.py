"""Hostile candidates, run as whoever runs the tests (root in CI), stay inside the sandbox."""

import io
import os
import shutil
import tarfile
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from aieval.errors import ConfigError, DatasetError
from aieval.sandbox import SandboxLimits, _bwrap, _cgroup, execute, extract_archive


def src(text: str) -> str:
    return textwrap.dedent(text)


def _host_processes_with(marker: str) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if marker.encode() in cmdline:
                found.append(int(entry))
    return found


def test_runs_as_an_unprivileged_uid_in_its_own_namespaces() -> None:
    program = src(
        """
        import os
        def ls(path):
            return sorted(os.listdir(path)) if os.path.isdir(path) else []
        def facts():
            pids = [p for p in os.listdir('/proc') if p.isdigit()]
            return [os.getuid(), os.getgid(), len(pids), ls('/'), ls('/home'), ls('/root')]
        """
    )
    result = execute(program, "print(facts())\nassert facts()[0] == 65534")
    assert result.status == "passed", result.detail
    uid, gid, processes, top, home, root = eval(result.stdout)  # plain literals printed above
    assert (uid, gid) == (65534, 65534)
    assert processes < 10  # a fresh /proc: only the sandbox's own processes
    assert "etc" in top and "passwd" not in top

    # /root and /home show only the first step towards a bound Python installation, if any.
    def towards(folder: str) -> set[str]:
        return {Path(r).parts[2] for r in _bwrap._python_roots() if r.startswith(folder + "/")}

    assert (set(home), set(root)) == (towards("/home"), towards("/root"))
    assert "bwrap" in result.isolation and "uid 65534" in result.isolation


def test_fork_storm_is_capped() -> None:
    program = src(
        """
        import os, time
        def storm(n):
            started = 0
            for _ in range(n):
                try:
                    pid = os.fork()
                except OSError:
                    break
                if pid == 0:
                    time.sleep(30)
                    os._exit(0)
                started += 1
            return started
        """
    )
    limits = SandboxLimits(max_processes=16, timeout=60)  # ends when forking fails
    result = execute(
        program, "started = storm(300)\nprint(started)\nassert started < 300", limits=limits
    )
    # the sandbox's own 6 processes (warm: bwrap's two, harness, zygote, judge, worker) + 16
    assert "pids.max 22" in result.isolation, result.isolation
    assert result.status == "passed", result.detail
    assert int(result.stdout) <= 16


SPAWNERS = {
    "posix_spawn": "os.posix_spawn('/bin/sleep', ['sleep', '30'], {})",
    "subprocess": "subprocess.Popen(['sleep', '30'])",
    "multiprocessing": "multiprocessing.Process(target=time.sleep, args=(30,)).start()",
}


@pytest.mark.parametrize("spawn", SPAWNERS.values(), ids=SPAWNERS.keys())
def test_spawn_storms_are_capped(spawn: str) -> None:
    program = src(
        f"""
        import multiprocessing, os, subprocess, time
        def storm(n):
            started = 0
            for _ in range(n):
                try:
                    {spawn}
                except OSError:
                    break
                started += 1
            return started
        """
    )
    limits = SandboxLimits(max_processes=16, timeout=60)  # ends when forking fails
    result = execute(program, "n = storm(300)\nprint(n)\nassert n < 300", limits=limits)
    assert result.status == "passed", result.detail
    assert int(result.stdout) <= 16


def test_disk_filling_stops_at_the_scratch_size() -> None:
    program = src(
        """
        def fill():
            written = 0
            with open('fill.bin', 'wb') as fh:
                try:
                    while True:
                        fh.write(b'x' * 1048576)
                        fh.flush()
                        written += 1
                except OSError as exc:
                    return [written, exc.errno]
            return [written, 0]
        """
    )
    limits = SandboxLimits(max_disk_mb=8, max_file_mb=1024)
    result = execute(
        program, "import errno\nw, e = fill()\nprint(w)\nassert e == errno.ENOSPC", limits=limits
    )
    assert result.status == "passed", result.detail
    assert int(result.stdout) <= 8


def test_secrets_outside_the_scratch_are_invisible(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret")
    secret.chmod(0o600)
    program = src(
        """
        def read(path):
            try:
                return open(path).read()
            except OSError as exc:
                return type(exc).__name__
        """
    )
    tests = (
        f"assert read({str(secret)!r}) in ('FileNotFoundError', 'PermissionError')\n"
        "assert read('/etc/passwd') == 'FileNotFoundError'\n"
        "assert read('/etc/shadow') == 'FileNotFoundError'\n"
        "assert read('/proc/1/environ') != 's3cret'\n"
    )
    result = execute(program, tests)
    assert result.status == "passed", result.detail
    assert "s3cret" not in result.stdout + result.stderr


@pytest.mark.parametrize("hang", [False, True], ids=["returns", "times-out"])
def test_setsid_daemon_does_not_survive(hang: bool) -> None:
    # a sleep of over 1000 s: a daemon that escaped cannot end on its own before the check
    marker = f"{1000 + os.getpid() % 1000}.{time.monotonic_ns() % 1000000}"
    program = src(
        f"""
        import os, time
        def daemonize():
            if os.fork() == 0:
                os.setsid()
                if os.fork() == 0:
                    os.execvp("sleep", ["sleep", "{marker}"])
                os._exit(0)
            time.sleep(0.3)
            while {hang}:
                time.sleep(1)
            return 1
        """
    )
    # the hanging one loops for good, so a short wall clock still fires; the returning one gets
    # room for a loaded machine, where 3 s turned a 0.3 s run into a timeout
    limits = SandboxLimits(timeout=3 if hang else 60)
    result = execute(program, "assert daemonize() == 1", limits=limits)
    assert result.status == ("timeout" if hang else "passed"), result.detail
    deadline = time.monotonic() + 30  # the kernel reaps the killed namespace in its own time
    while _host_processes_with(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _host_processes_with(marker) == []


def test_shell_and_ctypes_system_writes_stay_inside(tmp_path: Path) -> None:
    outside = tmp_path / "pwned"
    host_tmp = Path("/tmp") / f"aieval-pwned-{os.getpid()}"
    program = src(
        f"""
        import ctypes, os
        def attack():
            codes = [os.system("echo x > {outside}; echo x > {host_tmp}"),
                     ctypes.CDLL(None).system(b"echo y > {outside}.c; echo y > {host_tmp}.c")]
            return [codes, os.path.exists("{host_tmp}")]
        """
    )
    result = execute(program, "print(attack())")
    assert result.status == "passed", result.detail
    assert not outside.exists() and not Path(f"{outside}.c").exists()
    assert not host_tmp.exists() and not Path(f"{host_tmp}.c").exists()


def _evil_tar(target_dir: Path) -> bytes:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for name, data in (("../../escaped.txt", b"up"), ("ok.txt", b"fine")):
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
        link = tarfile.TarInfo("link")
        link.type, link.linkname = tarfile.SYMTYPE, str(target_dir)
        tar.addfile(link)
        through = tarfile.TarInfo("link/through.txt")
        through.size = 4
        tar.addfile(through, io.BytesIO(b"link"))
    return buffer.getvalue()


def test_a_tar_escape_in_the_candidate_is_contained(tmp_path: Path) -> None:
    archive = _evil_tar(tmp_path)
    program = src(
        f"""
        import io, os, tarfile
        def unpack():
            os.makedirs('a/b', exist_ok=True)
            with tarfile.open(fileobj=io.BytesIO({archive!r})) as tar:
                tar.extractall('a/b', filter='fully_trusted')
            return sorted(os.listdir('.'))
        """
    )
    result = execute(program, "print(unpack())")
    assert result.status in ("passed", "failed"), result.detail
    assert list(tmp_path.iterdir()) == []
    assert not Path("/tmp/escaped.txt").exists() or Path("/tmp/escaped.txt").read_bytes() != b"up"


@pytest.mark.parametrize("bad", ["../../escaped.txt", "link/through.txt"])
def test_extract_archive_refuses_escaping_members(tmp_path: Path, bad: str) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    path = tmp_path / "evil.tar"
    path.write_bytes(_evil_tar(outside))
    dest = tmp_path / "dest" / "inner"
    with pytest.raises(DatasetError, match="refusing archive member") as info:
        extract_archive(path, dest)
    assert "../../escaped.txt" in str(info.value)  # the first bad member is named
    assert list(outside.iterdir()) == [] and list(dest.iterdir()) == []
    assert not (tmp_path / "escaped.txt").exists()
    # Without the parent-escaping member, the symlink member is refused in its turn.
    clean = tmp_path / "links.tar"
    with tarfile.open(path) as tar, tarfile.open(clean, "w") as out:
        for member in tar.getmembers():
            if member.name != "../../escaped.txt":
                out.addfile(member, tar.extractfile(member) if member.isfile() else None)
    with pytest.raises(DatasetError, match="links outside"):
        extract_archive(clean, dest)
    assert bad and list(outside.iterdir()) == []


def test_extract_archive_unpacks_a_clean_tar(tmp_path: Path) -> None:
    path = tmp_path / "ok.tar.gz"
    with tarfile.open(path, "w:gz") as tar:
        info = tarfile.TarInfo("pkg/mod.py")
        info.size = 5
        tar.addfile(info, io.BytesIO(b"x = 1"))
    assert extract_archive(path, tmp_path / "out") == ["pkg/mod.py"]
    assert (tmp_path / "out" / "pkg" / "mod.py").read_text() == "x = 1"


def test_missing_bubblewrap_is_a_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    _refused(monkeypatch, "apt-get install bubblewrap")


def test_isolation_can_be_turned_off_for_trusted_code() -> None:
    result = execute(
        "def f():\n    return 1", "assert f() == 1", limits=SandboxLimits(isolation="none")
    )
    assert result.status == "passed" and result.isolation.startswith("none")


def test_without_size_support_the_scratch_is_reported_unbounded(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    path, version, _ = _bwrap.bwrap_version()
    monkeypatch.setattr(_bwrap, "bwrap_version", lambda: (path, version, False))
    argv, account = _bwrap.bwrap_argv(["true"], scratch_mb=8, child_dir="/nonexistent")
    assert "--size" not in argv and "unbounded" in account
    home = [a for a in argv if a.startswith("/home/") and a.count("/") == 2]
    assert home == [] and "/root" not in argv


def test_stale_cgroups_of_dead_callers_are_removed() -> None:
    with _cgroup.open_cgroup(4, 64 << 20) as group:
        if not group.paths:
            pytest.skip("no cgroup may be created here")
        stale = [path.parent / "aieval-sandbox-999999999-dead" for path in group.paths]
        for path in stale:
            path.mkdir()
    with _cgroup.open_cgroup(4, 64 << 20):
        assert not any(path.exists() for path in stale)


def test_bubblewrap_without_namespaces_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # bubblewrap runs as the sandbox's unprivileged uid: its folder must be open to it.
    folder = Path(tempfile.mkdtemp(prefix="aieval-fake-bwrap-"))
    folder.chmod(0o755)
    fake = folder / "bwrap"
    fake.write_text(
        "#!/bin/sh\n"
        'case "$1" in --version) echo "bubblewrap 0.8.0";; --help) echo "--size BYTES";;\n'
        '*) echo "bwrap: No permissions to create new namespace" >&2; exit 1;; esac\n'
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}:{os.environ['PATH']}")
    try:
        _refused(monkeypatch, r"cannot create its namespaces .*No permissions")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _refused(monkeypatch: pytest.MonkeyPatch, match: str) -> None:
    """With the PATH as set, execute() raises ConfigError; the bwrap probe is redone after."""
    _bwrap.bwrap_version.cache_clear()
    try:
        with pytest.raises(ConfigError, match=match):
            execute("def f():\n    return 1", "assert f() == 1")
    finally:
        monkeypatch.undo()
        _bwrap.bwrap_version.cache_clear()
