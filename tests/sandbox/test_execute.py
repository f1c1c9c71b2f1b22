import os
import socket
import textwrap
import time

import pytest

from aieval.errors import ConfigError
from aieval.sandbox import (
    ALLOW_CODE_EXECUTION_ENV,
    SandboxLimits,
    execute,
    execute_async,
    require_code_execution,
    sandbox_env,
)

ADD_TEST = "assert add(1, 2) == 3\nassert add(-1, 1) == 0"


def src(code: str) -> str:
    return textwrap.dedent(code).strip() + "\n"


@pytest.mark.parametrize(
    ("program", "status", "detail"),
    [
        pytest.param("def add(a, b):\n    return a + b", "passed", "1 of 1", id="passed"),
        pytest.param("def add(a, b):\n    return a - b", "failed", "assert add(1, 2)", id="failed"),
        pytest.param("def add(a, b)\n    return a", "error", "SyntaxError", id="syntax-error"),
        pytest.param("raise ValueError('boom')", "error", "ValueError: boom", id="import-raises"),
        pytest.param(
            "def add(a, b):\n    raise KeyError('k')", "failed", "KeyError", id="call-raises"
        ),
        pytest.param(
            "def add(a, b):\n    blob = bytearray(3 * 1024 ** 3)\n    return 3",
            "memory_limit",
            "out of memory",
            id="memory-limit",
        ),
    ],
)
def test_outcomes(program: str, status: str, detail: str) -> None:
    # none of these runs long: a generous wall clock keeps a loaded machine from turning any of
    # them into a timeout
    result = execute(program, ADD_TEST, timeout=60.0, memory_mb=256)
    assert result.status == status, result
    assert detail in result.detail
    assert result.passed is (status == "passed")


def test_wall_clock_timeout_kills_the_group() -> None:
    program = src(
        """
        import subprocess, sys
        child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
        def add(a, b):
            while True:
                pass
        """
    )
    result = execute(program, ADD_TEST, timeout=1.0)
    assert result.status == "timeout"
    assert "wall-clock" in result.detail
    # killed at the 1 s deadline, not after the child's 60 s sleep (slack for a loaded machine)
    assert 0.9 < result.duration_s < 30.0


def test_cpu_limit_is_a_timeout() -> None:
    # One CPU second takes several wall seconds on a busy machine: the wall clock is set far
    # beyond reach so that only the CPU limit can stop the endless loop.
    program = "def add(a, b):\n    while True:\n        pass"
    result = execute(program, ADD_TEST, limits=SandboxLimits(timeout=120.0, cpu_seconds=1))
    assert result.status == "timeout"
    assert "CPU" in result.detail
    assert result.duration_s < 60.0


def test_humaneval_check_with_entry_point() -> None:
    tests = "def check(candidate):\n    assert candidate([3, 1, 2]) == [1, 2, 3]\n"
    good = execute("def sort_list(xs):\n    return sorted(xs)", tests, entry_point="sort_list")
    bad = execute("def sort_list(xs):\n    return xs", tests, entry_point="sort_list")
    missing = execute("def other(xs):\n    return xs", tests, entry_point="sort_list")
    assert (good.status, bad.status, missing.status) == ("passed", "failed", "failed")
    assert "sort_list" in missing.detail


def test_snippets_count_separately() -> None:
    result = execute(
        "def add(a, b):\n    return 3", ["assert add(1, 2) == 3", "assert add(2, 2) == 4"]
    )
    assert result.status == "failed"
    assert (result.tests_passed, result.tests_total) == (1, 2)
    assert "test 2" in result.detail


def test_plain_data_round_trips() -> None:
    program = src(
        """
        def echo(x):
            return x
        """
    )
    value = {"t": (1, 2.5, None), "s": {1, 2}, "b": b"\x00", "f": frozenset({"a"}), 3: [1j, -0.0]}
    tests = f"v = {value!r}\nassert echo(v) == v and type(echo(v)['t']) is tuple\n"
    tests += "assert echo(float('inf')) == float('inf')\nassert echo(x=7) == 7\n"
    result = execute(program, tests)
    assert result.status == "passed", result.detail


def test_stdout_is_captured_and_capped() -> None:
    program = "print('x' * 100000)\ndef add(a, b):\n    return a + b"
    result = execute(program, ADD_TEST, limits=SandboxLimits(max_output_bytes=1000))
    assert result.status == "passed"
    assert result.stdout == "x" * 1000
    assert result.output_truncated


def test_environment_has_no_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    program = "import os\ndef env():\n    return dict(os.environ)"
    tests = "e = env()\nassert 'OPENAI_API_KEY' not in e and 'PATH' in e\n"
    assert execute(program, tests).status == "passed"
    assert "OPENAI_API_KEY" not in sandbox_env()


def test_fresh_working_directory_is_private_and_gone() -> None:
    name = f"aieval-scratch-{os.getpid()}-{time.monotonic_ns()}"
    program = f"import os\ndef where():\n    open({name!r}, 'w').write('x')\n    return os.getcwd()"
    result = execute(program, f"cwd = where()\nprint(cwd)\nassert open({name!r}).read() == 'x'")
    assert result.status == "passed", result.detail
    cwd = result.stdout.strip()
    assert not os.path.exists(os.path.join(cwd, name))


def test_file_size_limit() -> None:
    program = "def write():\n    open('big', 'wb').write(b'x' * (3 * 1024 * 1024))\n    return 1"
    result = execute(program, "assert write() == 1", limits=SandboxLimits(max_file_mb=1))
    assert result.status == "failed"


def test_network_is_off_or_reported() -> None:
    """Neither the internet nor the host's loopback services are reachable from inside."""
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        program = src(
            """
            import socket
            def connect(host, port):
                try:
                    socket.create_connection((host, port), timeout=1)
                except OSError as exc:
                    return exc.errno
                return 0
            """
        )
        tests = (
            "import errno\n"
            f"assert connect('127.0.0.1', {port}) in (errno.ECONNREFUSED, errno.ENETUNREACH)\n"
            "assert connect('1.1.1.1', 80) == errno.ENETUNREACH\n"
        )
        result = execute(program, tests)
    if result.network_isolated:
        assert result.status == "passed", result.detail
    else:
        assert result.network_detail not in ("", "ok")


def test_bad_arguments() -> None:
    with pytest.raises(ConfigError, match="tests"):
        execute("x = 1", [])
    with pytest.raises(ConfigError, match="timeout"):
        SandboxLimits(timeout=0)


async def test_async_variant() -> None:
    result = await execute_async("def add(a, b):\n    return a + b", ADD_TEST)
    assert result.status == "passed"


def test_opt_in(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ALLOW_CODE_EXECUTION_ENV, raising=False)
    with pytest.raises(ConfigError, match="allow_code_execution"):
        require_code_execution(False, what="demo")
    require_code_execution(True, what="demo")
    monkeypatch.setenv(ALLOW_CODE_EXECUTION_ENV, "1")
    require_code_execution(False, what="demo")
