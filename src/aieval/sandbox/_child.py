"""The sandboxed side of :func:`aieval.sandbox.execute`: a stdlib-only script, run with ``-I``.

Two processes share the work so that candidate code never runs where the verdict is decided:

* the **harness** reads its settings (including a per-run nonce) from stdin, hides itself from
  ``ptrace``, isolates the network, applies resource limits, then starts the worker and runs the
  test code. Candidate functions are visible to the tests only as proxies: each call travels to
  the worker and only plain data (numbers, strings, bytes, containers of them) comes back, so
  objects with a rigged ``__eq__`` or a patched test runner cannot reach the tests. The tests
  see only the entry point and the names they use without defining them, never a name of a
  builtin, so a candidate cannot redefine ``len`` or ``sorted`` for them. The harness signs its
  verdict with ``HMAC(nonce, verdict)`` on a pipe the worker never inherits.
* the **worker** runs the candidate program and answers calls. Whatever it does to its own
  frames, modules or exit status only changes what it answers.

``command`` mode applies the same limits and network isolation, then ``exec``s a command line.

Under bubblewrap the script starts as the sandbox's pid 1 and first forks: the parent stays the
sandbox's init (non-dumpable, holding no descriptor), the child runs the mode.
"""

from __future__ import annotations

import builtins
import contextlib
import ctypes
import ctypes.util
import fcntl
import hashlib
import hmac
import json
import numbers
import os
import resource
import select
import selectors
import shutil
import signal
import socket
import stat
import subprocess
import symtable
import sys
import traceback
from collections.abc import Callable
from typing import Any, NoReturn

_CLONE_NEWUSER = 0x10000000
_CLONE_NEWNET = 0x40000000
_PR_SET_DUMPABLE = 4
_PR_CAPBSET_DROP = 24
_PR_SET_NO_NEW_PRIVS = 38
_NOBODY = 65534
_MAX_DEPTH = 100
_MAX_LINE = 64 * 1024 * 1024
_MEMORY_REPLY = b'{"ok":false,"error":{"type":"MemoryError","message":"out of memory"}}\n'
# Taken when the harness starts (``-I``, before any test or candidate value exists): the
# names no candidate may define for the tests.
_BUILTIN_NAMES = frozenset(vars(builtins))


class _Untransferable(Exception):
    """A value that is not plain data and so cannot cross between the processes."""


# --- codec: plain data only, rebuilt from exact builtin types on the receiving side -------------


def encode(value: Any, depth: int = 0) -> Any:
    """Turn a value into JSON-ready plain data, or raise :class:`_Untransferable`."""
    if depth > _MAX_DEPTH:
        raise _Untransferable("value nested too deeply")
    if value is None or type(value) in (bool, int, str):
        return value
    if type(value).__name__ == "bool_" or isinstance(value, bool):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value.__index__())
    if isinstance(value, str):
        return str.__str__(value)
    if isinstance(value, (float, numbers.Real)):
        return ["float", repr(float(value))]
    if isinstance(value, complex):
        return ["complex", [repr(value.real), repr(value.imag)]]
    if isinstance(value, (bytes, bytearray)):
        return ["bytes", bytes(value).hex()]
    if isinstance(value, dict):
        return ["dict", [[encode(k, depth + 1), encode(v, depth + 1)] for k, v in value.items()]]
    for kind in (list, tuple, set, frozenset):
        if isinstance(value, kind):
            return [kind.__name__, [encode(item, depth + 1) for item in value]]
    tolist = getattr(value, "tolist", None)
    if callable(tolist) and type(value).__name__ == "ndarray":
        return encode(tolist(), depth + 1)
    raise _Untransferable(f"a {type(value).__name__} is not plain data")


def decode(data: Any) -> Any:
    """Rebuild a value produced by :func:`encode` from builtin types only."""
    if data is None or type(data) in (bool, int, str):
        return data
    if type(data) is not list or len(data) != 2 or type(data[0]) is not str:
        raise _Untransferable("malformed value on the wire")
    tag, body = data
    if tag == "float":
        return float(body)
    if tag == "complex":
        return complex(float(body[0]), float(body[1]))
    if tag == "bytes":
        return bytes.fromhex(body)
    if tag == "dict":
        return {decode(k): decode(v) for k, v in body}
    builders: dict[str, Any] = {"list": list, "tuple": tuple, "set": set, "frozenset": frozenset}
    if tag in builders:
        return builders[tag](decode(item) for item in body)
    raise _Untransferable(f"unknown wire tag {tag!r}")


# --- isolation helpers ---------------------------------------------------------------------------


def _libc() -> Any:
    return ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def _isolate_network() -> str:
    """Enter a fresh network namespace (no interfaces but a down loopback); say how it went."""
    if not sys.platform.startswith("linux"):
        return "unsupported platform"
    libc = _libc()
    if libc.unshare(_CLONE_NEWNET) == 0:
        return "ok"
    uid, gid = os.getuid(), os.getgid()
    if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNET) != 0:
        return f"unshare refused: {os.strerror(ctypes.get_errno())}"
    try:
        # Map our own ids so files in the work directory stay writable.
        with open("/proc/self/setgroups", "w") as fh:
            fh.write("deny")
        with open("/proc/self/uid_map", "w") as fh:
            fh.write(f"{uid} {uid} 1")
        with open("/proc/self/gid_map", "w") as fh:
            fh.write(f"{gid} {gid} 1")
    except OSError as exc:
        return f"user namespace mapping failed: {exc}"
    return "ok"


def _network(settings: dict[str, Any]) -> str:
    """Bubblewrap already gave us an empty network namespace; otherwise make one."""
    return "ok" if settings.get("isolated") else _isolate_network()


def _hide_from_ptrace() -> None:
    if sys.platform.startswith("linux"):
        _libc().prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)


def _drop_capabilities() -> None:
    """Empty the bounding set, so a root worker execs with no capabilities at all.

    Without ``CAP_SYS_PTRACE`` it cannot read the non-dumpable harness's memory or descriptors.
    """
    if not sys.platform.startswith("linux"):
        return
    libc = _libc()
    for capability in range(64):
        libc.prctl(_PR_CAPBSET_DROP, capability, 0, 0, 0)
    libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0)


def _count_processes(uid: int) -> int:
    count = 0
    try:
        entries = os.listdir("/proc")
    except OSError:
        return 0
    for entry in entries:
        if entry.isdigit():
            with contextlib.suppress(OSError):
                if os.stat(f"/proc/{entry}").st_uid == uid:
                    count += 1
    return count


def _set_limit(which: int, value: int, *, slack: int = 0) -> None:
    # Lowering a limit (never above the hard one) always succeeds; if it ever does not, the
    # code must not run without it: the error ends this execution as an error, loudly.
    _soft, hard = resource.getrlimit(which)
    wanted_hard = value + slack
    if hard != resource.RLIM_INFINITY:
        value, wanted_hard = min(value, hard), min(wanted_hard, hard)
    try:
        resource.setrlimit(which, (value, wanted_hard))
    except (ValueError, OSError) as exc:
        message = f"the sandbox could not apply resource limit {which} = {value}: {exc}"
        raise OSError(message) from exc


def _apply_limits(
    limits: dict[str, Any], *, processes_for_uid: int | None, cpu: bool = True
) -> None:
    _set_limit(resource.RLIMIT_CORE, 0)
    if cpu:
        # The soft limit sends SIGXCPU; the hard one, a second later, SIGKILL for those who
        # trap it. A warm sandbox's long-lived processes leave it to each forked child.
        _set_limit(resource.RLIMIT_CPU, int(limits["cpu_seconds"]), slack=1)
    _set_limit(resource.RLIMIT_AS, int(limits["memory_mb"]) * 1024 * 1024)
    _set_limit(resource.RLIMIT_FSIZE, int(limits["max_file_mb"]) * 1024 * 1024)
    if processes_for_uid is not None:
        # RLIMIT_NPROC counts every process of the user, so leave room for the existing ones.
        existing = _count_processes(processes_for_uid)
        _set_limit(resource.RLIMIT_NPROC, existing + int(limits["max_processes"]))


# --- harness -------------------------------------------------------------------------------------


class _CandidateGone(BaseException):
    """The worker died or stopped answering; the status says why."""

    def __init__(self, status: str, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


class _BadValue(BaseException):
    """The candidate returned something that is not plain data."""


class _Worker:
    """The harness's handle on the worker process."""

    def __init__(self, limits: dict[str, Any], drop_to_nobody: bool) -> None:
        req_r, self._req_w = os.pipe()
        self._resp_r, resp_w = os.pipe()
        self.dropped = drop_to_nobody
        self.cpu_limit = float(limits["cpu_seconds"])

        def prepare() -> None:
            if drop_to_nobody:
                os.setgroups([])
                os.setresgid(_NOBODY, _NOBODY, _NOBODY)
                os.setresuid(_NOBODY, _NOBODY, _NOBODY)
            elif os.geteuid() == 0:
                _drop_capabilities()
            _apply_limits(limits, processes_for_uid=os.getuid())

        self.proc = subprocess.Popen(
            [sys.executable, "-I", os.path.abspath(__file__), "worker", str(req_r), str(resp_w)],
            stdin=subprocess.DEVNULL,
            pass_fds=(req_r, resp_w),
            preexec_fn=prepare,
        )
        os.close(req_r)
        os.close(resp_w)
        self._reader = os.fdopen(self._resp_r, "rb")
        self._writer = os.fdopen(self._req_w, "wb")

    def request(self, message: dict[str, Any]) -> dict[str, Any]:
        try:
            self._writer.write(json.dumps(message).encode() + b"\n")
            self._writer.flush()
        except OSError:
            raise self._gone() from None
        line = self._reader.readline(_MAX_LINE)
        if not line:
            raise self._gone()
        if not line.endswith(b"\n"):
            raise _BadValue("the candidate's answer exceeds the transfer limit")
        try:
            reply: dict[str, Any] = json.loads(line)
        except ValueError:
            raise _BadValue("the candidate's answer is not valid on the wire") from None
        if type(reply) is not dict:
            raise _BadValue("the candidate's answer is not valid on the wire")
        return reply

    def _gone(self) -> _CandidateGone:
        _pid, status, usage = os.wait4(self.proc.pid, 0)
        code = self.proc.returncode = os.waitstatus_to_exitcode(status)
        return _ending(code, usage.ru_utime + usage.ru_stime, self.cpu_limit)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._writer.close()
        try:
            self.proc.wait(timeout=1.0)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


def _ending(code: int, cpu: float, cpu_limit: float) -> _CandidateGone:
    """Why the worker ended early, from its exit code and the CPU time it used."""
    if code == -signal.SIGXCPU or (code == -signal.SIGKILL and cpu >= cpu_limit):
        return _CandidateGone("timeout", "candidate exceeded its CPU-time limit")
    if code == -signal.SIGKILL:
        return _CandidateGone("memory_limit", "candidate was killed (likely out of memory)")
    if code < 0:
        name = signal.Signals(-code).name
        return _CandidateGone("failed", f"candidate process died from {name}")
    return _CandidateGone("failed", f"candidate process exited early with code {code}")


def _raise_candidate_error(error: Any, name: str) -> NoReturn:
    kind = str(error.get("type", "Exception")) if type(error) is dict else "Exception"
    message = str(error.get("message", "")) if type(error) is dict else ""
    if kind == "MemoryError":
        raise _CandidateGone("memory_limit", f"{name}() ran out of memory")
    if kind == "Untransferable":
        raise _BadValue(f"{name}() returned a value that is not plain data: {message}")
    builtin = getattr(builtins, kind, None)
    if isinstance(builtin, type) and issubclass(builtin, Exception):
        raise builtin(message)
    raise RuntimeError(f"{name}() raised {kind}: {message}")


def _proxy(worker: _Worker, name: str) -> Any:
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            payload = {"op": "call", "name": name, "args": encode(list(args))}
            payload["kwargs"] = encode(kwargs)
        except _Untransferable as exc:
            raise _BadValue(
                f"tests passed {name}() an argument that is not plain data: {exc}"
            ) from None
        reply = worker.request(payload)
        if reply.get("ok") is not True:
            _raise_candidate_error(reply.get("error"), name)
        try:
            return decode(reply.get("value"))
        except (_Untransferable, ValueError, TypeError, RecursionError) as exc:
            raise _BadValue(f"{name}() returned a value that is not plain data: {exc}") from None

    call.__name__ = call.__qualname__ = name
    return call


def _failure_detail(exc: BaseException, tests: str) -> str:
    lines = tests.splitlines()
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if f.filename == "<tests>"]
    where = ""
    if frames and frames[-1].lineno and frames[-1].lineno <= len(lines):
        where = f" at tests line {frames[-1].lineno}: {lines[frames[-1].lineno - 1].strip()}"
    message = str(exc)
    kind = "assertion failed" if isinstance(exc, AssertionError) else type(exc).__name__
    return f"{kind}{where}" + (f" ({message})" if message else "")


def _globals_used(source: str) -> set[str]:
    """Global names ``source`` reads (in any scope) without binding them itself."""
    try:
        table = symtable.symtable(source, "<tests>", "exec")
    except (SyntaxError, ValueError):
        return set()  # reported when the test is compiled
    used: set[str] = set()
    bound: set[str] = set()
    pending = [table]
    while pending:
        scope = pending.pop()
        module = scope.get_type() == "module"
        for symbol in scope.get_symbols():
            name = symbol.get_name()
            if (module and symbol.is_local()) or (
                symbol.is_declared_global() and symbol.is_assigned()
            ):
                bound.add(name)
            elif symbol.is_referenced() and (module or symbol.is_global()):
                used.add(name)
        pending.extend(scope.get_children())
    return used - bound


def _visible_names(used: set[str], entry_point: str | None) -> set[str]:
    """The candidate's names the tests may see: the entry point and what they use undefined.

    Never a builtin's name (a candidate's ``len`` or ``sorted`` would judge itself), never a
    name the tests bind (their own helpers), never a dunder. ``check`` still receives an entry
    point named like a builtin.
    """
    wanted = used | ({entry_point} if entry_point else set())
    return {name for name in wanted if name not in _BUILTIN_NAMES and not name.startswith("__")}


def _load(
    worker: _Worker, program: str, visible: set[str], listed_names: set[str]
) -> dict[str, Any] | tuple[str, str]:
    """Run the program in the worker; proxies (or values) for the ``visible`` names it defines.

    ``listed_names`` receives every name the worker listed, to explain failures.
    """
    reply = worker.request({"op": "load", "program": program})
    if reply.get("ok") is not True:
        raw_error = reply.get("error")
        error: dict[str, Any] = raw_error if type(raw_error) is dict else {}
        if error.get("type") == "MemoryError":
            return ("memory_limit", "candidate ran out of memory while loading")
        return (
            "error",
            f"candidate program failed to load: {error.get('type')}: {error.get('message')}",
        )
    names: dict[str, Any] = {}
    listed = reply.get("names")
    for name, info in listed.items() if type(listed) is dict else []:
        # The worker's listing is the candidate's to forge: only names chosen here count.
        if type(name) is str:
            listed_names.add(name)
        if type(name) is not str or name not in visible or type(info) is not dict:
            continue
        if info.get("kind") == "callable":
            names[name] = _proxy(worker, name)
        elif info.get("kind") == "value":
            with contextlib.suppress(_Untransferable, ValueError, TypeError, RecursionError):
                names[name] = decode(info.get("value"))
    return names


def _shadow_note(names: set[str]) -> str:
    """Say which builtins the tests called although the program defines them too."""
    shadowed = sorted(name for name in names if name in _BUILTIN_NAMES)
    if not shadowed:
        return ""
    listing = ", ".join(shadowed)
    return f" (the tests call the builtin {listing}, not the program's own definition)"


def _run_tests(worker: _Worker, settings: dict[str, Any]) -> dict[str, Any]:
    tests: list[str] = settings["tests"]
    entry_point = settings.get("entry_point")
    used = set().union(*(_globals_used(source) for source in tests))
    visible = _visible_names(used, entry_point)
    listed: set[str] = set()
    wanted = visible | ({entry_point} if entry_point else set())
    loaded = _load(worker, settings["program"], wanted, listed)
    if isinstance(loaded, tuple):
        return {"status": loaded[0], "detail": loaded[1], "passed": 0, "total": len(tests)}
    namespace: dict[str, Any] = {"__name__": "__tests__"}
    namespace.update((name, value) for name, value in loaded.items() if name in visible)
    failures: list[str] = []
    for index, source in enumerate(tests):
        label = f"test {index + 1}: " if len(tests) > 1 else ""
        try:
            code = compile(source, "<tests>", "exec")
        except SyntaxError as exc:
            return {
                "status": "error",
                "detail": f"{label}test code does not compile: {exc}",
                "passed": index - len(failures),
                "total": len(tests),
            }
        try:
            exec(code, namespace)
            if entry_point:
                check, candidate = namespace.get("check"), loaded.get(entry_point)
                if not callable(check):
                    return {
                        "status": "error",
                        "detail": "tests define no check(candidate)",
                        "passed": 0,
                        "total": len(tests),
                    }
                if candidate is None:
                    raise NameError(f"the program defines no {entry_point!r}")
                check(candidate)
        except _CandidateGone as exc:
            return {
                "status": exc.status,
                "detail": label + exc.detail,
                "passed": index - len(failures),
                "total": len(tests),
            }
        except _BadValue as exc:
            return {
                "status": "error",
                "detail": label + str(exc),
                "passed": index - len(failures),
                "total": len(tests),
            }
        except MemoryError:
            return {
                "status": "memory_limit",
                "detail": label + "tests ran out of memory",
                "passed": index - len(failures),
                "total": len(tests),
            }
        except Exception as exc:
            failures.append(label + _failure_detail(exc, source))
    passed = len(tests) - len(failures)
    if failures:
        return {
            "status": "failed",
            "detail": "; ".join(failures[:5]) + _shadow_note(used & listed),
            "passed": passed,
            "total": len(tests),
        }
    return {
        "status": "passed",
        "detail": f"{passed} of {len(tests)} tests passed",
        "passed": passed,
        "total": len(tests),
    }


def _start_worker(settings: dict[str, Any]) -> _Worker:
    """Start the worker, as ``nobody`` when we are root; fall back when nobody cannot run it."""
    limits = settings["limits"]
    if os.geteuid() == 0 and settings.get("drop_privileges", True):
        try:
            os.chown(os.getcwd(), _NOBODY, _NOBODY)
            worker = _Worker(limits, drop_to_nobody=True)
        except (OSError, subprocess.SubprocessError):
            pass
        else:
            try:
                if worker.request({"op": "hello"}).get("ok") is True:
                    return worker
            except (_CandidateGone, _BadValue):
                pass
            worker.close()
        with contextlib.suppress(OSError):
            os.chown(os.getcwd(), os.getuid(), os.getgid())
    return _Worker(limits, drop_to_nobody=False)


def harness_main(result_fd: int) -> None:
    settings = json.loads(sys.stdin.buffer.read())
    sys.stdin.close()
    key = bytes.fromhex(settings.pop("nonce"))
    _hide_from_ptrace()
    network = _network(settings)
    _apply_limits(settings["limits"], processes_for_uid=None)
    scratch = bool(settings.get("isolated"))
    _judge(lambda: _start_worker(settings), settings, key, result_fd, network, scratch=scratch)


def _judge(
    start: Any,
    settings: dict[str, Any],
    key: bytes,
    result_fd: int,
    network: str,
    *,
    scratch: bool,
) -> None:
    """Start the worker with ``start()``, sign that it is ready, run the tests, sign the verdict
    (saying so when a verdict other than passed came with a full ``scratch``)."""
    outcome: dict[str, Any]
    try:
        worker = start()
        try:
            _signal_ready(worker, key, result_fd)
            outcome = _run_tests(worker, settings)
        finally:
            worker.close()
        outcome["privileges_dropped"] = worker.dropped
    except _CandidateGone as exc:
        outcome = {"status": exc.status, "detail": exc.detail, "passed": 0, "total": 0}
    except _BadValue as exc:
        outcome = {"status": "error", "detail": str(exc), "passed": 0, "total": 0}
    except MemoryError:
        outcome = {
            "status": "memory_limit",
            "detail": "harness ran out of memory",
            "passed": 0,
            "total": 0,
        }
    outcome["network"] = network
    if scratch and outcome.get("status") != "passed":
        outcome["detail"] = str(outcome.get("detail", "")) + _scratch_note()
    _sign(result_fd, key, outcome)


_SCRATCH_ROOTS = ("/tmp", "/dev/shm")


def _scratch_note() -> str:
    """Which scratch file system ran out of files or of space, if one did: the candidate's
    error says only "No space left on device"."""
    notes = []
    for root in _SCRATCH_ROOTS:
        try:
            space = os.statvfs(root)
        except OSError:
            continue
        if space.f_files and space.f_ffree == 0:
            notes.append(
                f"{root} holds its limit of {space.f_files} files, folders and links "
                "(one per 4 KiB of max_disk_mb)"
            )
        elif space.f_blocks and space.f_bfree == 0:
            notes.append(f"{root} is full ({space.f_blocks * space.f_frsize // 1024} KiB)")
    return f" [the scratch ran out: {'; '.join(notes)}]" if notes else ""


def _signal_ready(worker: _Worker, key: bytes, result_fd: int) -> None:
    """Sign that the sandbox is up, before any candidate code runs: a run without this line
    failed in the sandbox itself (``sandbox_error``), never in the candidate."""
    try:
        answered = worker.request({"op": "hello"}).get("ok") is True
    except (_CandidateGone, _BadValue) as exc:
        raise RuntimeError(f"the sandbox worker did not start: {exc}") from None
    if not answered:
        raise RuntimeError("the sandbox worker did not start: it did not answer hello")
    _sign(result_fd, key, {"ready": True})


def _sign(result_fd: int, key: bytes, message: dict[str, Any]) -> None:
    """Write ``message`` with its HMAC under ``key`` as one line on the result channel."""
    body = json.dumps(message, sort_keys=True).encode()
    tag = hmac.new(key, body, hashlib.sha256).hexdigest().encode()
    _write_all(result_fd, tag + b" " + body + b"\n")


# --- worker --------------------------------------------------------------------------------------


def _describe(namespace: dict[str, Any]) -> dict[str, Any]:
    names: dict[str, Any] = {}
    for name, value in list(namespace.items()):
        if name.startswith("__") or type(value).__name__ == "module":
            continue
        if callable(value):
            names[name] = {"kind": "callable"}
            continue
        with contextlib.suppress(_Untransferable, RecursionError, ValueError):
            names[name] = {"kind": "value", "value": encode(value)}
    return names


def _error(exc: BaseException) -> dict[str, Any]:
    kind = "Untransferable" if isinstance(exc, _Untransferable) else type(exc).__name__
    return {"ok": False, "error": {"type": kind, "message": str(exc)[:2000]}}


def _answer(message: dict[str, Any], namespace: dict[str, Any]) -> dict[str, Any]:
    op = message.get("op")
    if op == "hello":
        return {"ok": True}
    if op == "load":
        exec(compile(message["program"], "<candidate>", "exec"), namespace)
        return {"ok": True, "names": _describe(namespace)}
    function = namespace[message["name"]]
    result = function(*decode(message["args"]), **decode(message["kwargs"]))
    return {"ok": True, "value": encode(result)}


def worker_main(req_fd: int, resp_fd: int) -> None:
    requests = os.fdopen(req_fd, "rb")
    namespace: dict[str, Any] = {"__name__": "__candidate__", "__builtins__": __builtins__}
    for line in requests:
        try:
            reply = _answer(json.loads(line), namespace)
            data = json.dumps(reply).encode() + b"\n"
        except MemoryError:
            data = _MEMORY_REPLY
        except BaseException as exc:
            try:
                data = json.dumps(_error(exc)).encode() + b"\n"
            except MemoryError:
                data = _MEMORY_REPLY
        _write_all(resp_fd, data)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def command_main(argv: list[str]) -> NoReturn:
    settings = json.loads(sys.stdin.buffer.read())
    sys.stdin.close()
    network = _network(settings)
    sys.stderr.write(f"aieval-sandbox-network: {network}\n")
    sys.stderr.flush()
    own_uid = None if settings.get("isolated") else os.getuid()
    _apply_limits(settings["limits"], processes_for_uid=own_uid)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    try:
        os.execvp(argv[0], argv)
    except OSError as exc:
        sys.stderr.write(f"aieval-sandbox-exec-failed: cannot run {argv[0]!r}: {exc}\n")
        sys.exit(127)


# --- warm sandbox: many programs in one sandbox, a fresh forked process for each ---------------
#
# ``warm`` mode is a long-lived harness: it reads its settings, then one job per line on stdin
# (each with its own key), and starts a *zygote* (a fresh interpreter that never holds a key or
# runs candidate code). Per job it forks a judge (the tests' side, which holds only that job's
# key) and the judge has the zygote fork a worker for the candidate, in a new session with the
# limits applied and ``/tmp`` as its working directory. After each job the harness signs a
# ``done`` line saying whether the sandbox must be recycled: the judge failed, a process of the
# program outlived it, the limits, priority or scheduling of the harness or the zygote or the
# state of their shared output pipes changed, the scratch or System V IPC is not as it was, the
# zygote does not answer, memory grew, or the sandbox served its quota of programs.

_WARM_SCRATCH = _SCRATCH_ROOTS
_WARM_RSS_GROWTH = 32 * 1024 * 1024
_WARM_REPLY_S = 10.0


def _message(sock: socket.socket, timeout: float | None = None) -> dict[str, Any] | None:
    """The next message on a zygote socket (``None``: none within ``timeout``)."""
    if timeout is not None and not select.select([sock], [], [], timeout)[0]:
        return None
    data = sock.recv(65536)
    if not data:
        raise EOFError("the zygote's socket closed")
    message: dict[str, Any] = json.loads(data)
    return message


class _ForkedWorker(_Worker):
    """A worker the zygote forked; the zygote reports how it ended."""

    def __init__(self, limits: dict[str, Any], zygote: socket.socket) -> None:
        req_r, req_w = os.pipe()
        resp_r, resp_w = os.pipe()
        self.dropped = False
        self.cpu_limit = float(limits["cpu_seconds"])
        self._zygote = zygote
        self._ended: tuple[int, float] | None = None
        try:
            socket.send_fds(zygote, [b'{"op": "spawn"}'], [req_r, resp_w])
            reply = _message(zygote, _WARM_REPLY_S) or {}
        finally:
            os.close(req_r)
            os.close(resp_w)
        if type(reply.get("pid")) is not int:
            os.close(req_w)
            os.close(resp_r)
            raise RuntimeError(f"the sandbox's zygote could not fork a worker: {reply}")
        self.pid: int = reply["pid"]
        self._reader = os.fdopen(resp_r, "rb")
        self._writer = os.fdopen(req_w, "wb")

    def _report(self, timeout: float | None) -> tuple[int, float] | None:
        """The worker's exit code and CPU seconds, once the zygote has reaped it."""
        while self._ended is None:
            message = _message(self._zygote, timeout)
            if message is None:
                return None
            if message.get("exit") == self.pid:
                code = os.waitstatus_to_exitcode(int(message["status"]))
                self._ended = code, float(message["cpu"])
        return self._ended

    def _gone(self) -> _CandidateGone:
        try:
            code, cpu = self._report(None) or (0, 0.0)
        except (OSError, ValueError, EOFError) as exc:
            return _CandidateGone("error", f"the sandbox lost the candidate process: {exc}")
        return _ending(code, cpu, self.cpu_limit)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self._writer.close()
        try:
            if self._report(1.0) is None:
                with contextlib.suppress(OSError):
                    os.killpg(self.pid, signal.SIGKILL)
                if self._report(_WARM_REPLY_S) is None:
                    raise RuntimeError("the sandbox's zygote did not reap the worker")
        finally:
            # the candidate's own children left in its process group go with it
            with contextlib.suppress(OSError):
                os.killpg(self.pid, signal.SIGKILL)
            with contextlib.suppress(OSError):
                self._reader.close()


def _exit_after(body: Callable[[], object]) -> NoReturn:
    """Run ``body`` in a forked process, then leave at once (no cleanup of the parent's state):
    exit code 0 when it returned, 1 with its traceback when it raised; the streams flushed."""
    code = 0
    try:
        body()
    except BaseException:
        code = 1
        with contextlib.suppress(BaseException):
            traceback.print_exc()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):
                stream.flush()
        os._exit(code)


def _forked_worker(req_fd: int, resp_fd: int, limits: dict[str, Any]) -> NoReturn:
    """The zygote's child: a fresh session with the limits applied, then the worker."""

    def body() -> None:
        keep = {0, 1, 2, req_fd, resp_fd}
        for entry in os.listdir("/proc/self/fd"):
            if int(entry) not in keep:
                with contextlib.suppress(OSError):
                    os.close(int(entry))
        os.setsid()
        os.chdir(_WARM_SCRATCH[0])
        if sys.platform.startswith("linux"):
            _libc().prctl(_PR_SET_DUMPABLE, 1, 0, 0, 0)  # as a freshly started worker is
        _apply_limits(limits, processes_for_uid=os.getuid())
        worker_main(req_fd, resp_fd)
        import atexit

        atexit._run_exitfuncs()

    _exit_after(body)


def zygote_main(ctl_fd: int) -> None:
    """Fork a worker per ``spawn`` request (with its two pipe ends) and report each exit."""
    _hide_from_ptrace()
    sock = socket.socket(fileno=ctl_fd)
    settings = _message(sock) or {}
    limits = settings["limits"]
    _apply_limits(limits, processes_for_uid=None, cpu=False)
    # A worker's exit wakes the loop through SIGCHLD (the system-call filter refuses
    # pidfd_open to every process of the sandbox).
    wake_r, wake_w = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    signal.set_wakeup_fd(wake_w)
    signal.signal(signal.SIGCHLD, lambda _signum, _frame: None)
    chooser = selectors.DefaultSelector()
    chooser.register(sock, selectors.EVENT_READ, None)
    chooser.register(wake_r, selectors.EVENT_READ, "exits")
    children: set[int] = set()
    while True:
        for key, _ in chooser.select():
            if key.data is not None:
                with contextlib.suppress(BlockingIOError):
                    while os.read(wake_r, 4096):
                        pass
                for child in sorted(children):
                    reaped, status, usage = os.wait4(child, os.WNOHANG)
                    if reaped:
                        children.discard(child)
                        cpu = usage.ru_utime + usage.ru_stime
                        report = {"exit": child, "status": status, "cpu": cpu}
                        sock.send(json.dumps(report).encode())
                continue
            data, fds, _flags, _address = socket.recv_fds(sock, 65536, 2)
            if not data:
                os._exit(0)
            if json.loads(data).get("op") != "spawn" or len(fds) != 2:
                for fd in fds:
                    os.close(fd)
                sock.send(b'{"pong": true}')
                continue
            try:
                pid = os.fork()
            except OSError as exc:
                sock.send(json.dumps({"error": str(exc)}).encode())
                continue
            if pid == 0:
                signal.set_wakeup_fd(-1)
                signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                _forked_worker(fds[0], fds[1], limits)
            for fd in fds:
                os.close(fd)
            children.add(pid)
            sock.send(json.dumps({"pid": pid}).encode())


def _ping(sock: socket.socket) -> bool:
    """Whether the zygote answers (stale exit reports are skipped)."""
    try:
        sock.send(b'{"op": "ping"}')
        while True:
            message = _message(sock, _WARM_REPLY_S)
            if message is None:
                return False
            if message.get("pong") is True:
                return True
    except (OSError, ValueError, EOFError):
        return False


def _pids() -> set[int]:
    return {int(entry) for entry in os.listdir("/proc") if entry.isdigit()}


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return -1


def _scratch() -> frozenset[tuple[Any, ...]] | None:
    """Every entry of the scratch file systems (not below other mounts), with its metadata."""
    entries: set[tuple[Any, ...]] = set()
    try:
        for root in _WARM_SCRATCH:
            if not os.path.isdir(root):
                continue
            space = os.statvfs(root)
            entries.add((root, "free", space.f_bfree, space.f_ffree))
            device = os.lstat(root).st_dev
            pending = [root]
            while pending:
                path = pending.pop()
                info = os.lstat(path)
                size = info.st_size if stat.S_ISREG(info.st_mode) else 0
                attrs = tuple(sorted(os.listxattr(path, follow_symlinks=False)))
                entries.add((path, info.st_mode, info.st_uid, info.st_gid, size, attrs))
                if stat.S_ISDIR(info.st_mode) and info.st_dev == device:
                    pending.extend(os.path.join(path, name) for name in os.listdir(path))
    except OSError:
        return None
    return frozenset(entries)


def _clean_scratch(baseline: frozenset[tuple[Any, ...]]) -> bool:
    """Remove what a program left at the top of the scratch; whether it is as it was."""
    known = {entry[0] for entry in baseline}
    for root in _WARM_SCRATCH:
        try:
            names = os.listdir(root)
        except OSError:
            continue
        for name in names:
            path = os.path.join(root, name)
            if path in known:
                continue
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    shutil.rmtree(path)
                else:
                    os.unlink(path)
            except OSError:
                return False
    return _scratch() == baseline


_RLIMITS = {name: getattr(resource, name) for name in dir(resource) if name.startswith("RLIMIT_")}
_IOPRIO_WHO_PROCESS = 1
# What an open file description carries for every process that holds it: the status flags
# (O_NONBLOCK, O_APPEND, O_ASYNC), the owner and signal of SIGIO, a pipe's size.
_F_GETSIG = 11
_F_GETPIPE_SZ = 1032
_DESCRIPTION = {"flags": fcntl.F_GETFL, "owner": fcntl.F_GETOWN, "signal": _F_GETSIG}


def _read(what: Any) -> Any:
    try:
        return what()
    except OSError:
        return None


def _process_state(pid: int, ioprio_get: int | None) -> dict[str, Any]:
    """What another process of the sandbox's uid could set on ``pid`` that outlives a program:
    its resource limits, nice value, scheduling policy and priority, CPU affinity and I/O
    priority (a value that cannot be read is ``None``)."""
    state = {
        name: _read(lambda which=which: resource.prlimit(pid, which))
        for name, which in _RLIMITS.items()
    }
    state["nice"] = _read(lambda: os.getpriority(os.PRIO_PROCESS, pid))
    state["scheduling policy"] = _read(lambda: os.sched_getscheduler(pid))
    state["scheduling priority"] = _read(lambda: os.sched_getparam(pid).sched_priority)
    state["CPU affinity"] = _read(lambda: frozenset(os.sched_getaffinity(pid)))
    if ioprio_get is not None:
        state["I/O priority"] = _libc().syscall(ioprio_get, _IOPRIO_WHO_PROCESS, pid)
    return state


def _output_state() -> dict[str, Any]:
    """The open file descriptions of stdout and stderr, which the harness, the zygote and
    every worker share."""
    state = {}
    for fd in (1, 2):
        for name, command in (*_DESCRIPTION.items(), ("pipe size", _F_GETPIPE_SZ)):
            state[f"fd {fd} {name}"] = _read(lambda fd=fd, cmd=command: fcntl.fcntl(fd, cmd))
    return state


def _sandbox_state(zygote: int, ioprio_get: int | None) -> dict[str, Any]:
    """Everything a program must leave as the harness set it, by name."""
    state: dict[str, Any] = {}
    processes = [("harness", os.getpid()), ("zygote", zygote)]
    if _INIT is not None:
        processes.append(("sandbox's init", _INIT))
    for who, pid in processes:
        own = _process_state(pid, ioprio_get)
        state.update((f"{who}'s {name}", value) for name, value in own.items())
    state.update((f"harness's {name}", value) for name, value in _output_state().items())
    return state


def _sysv_ipc_left() -> bool:
    for kind in ("shm", "msg", "sem"):
        with contextlib.suppress(OSError), open(f"/proc/sysvipc/{kind}") as fh:
            if len(fh.read().splitlines()) > 1:
                return True
    return False


class _Baseline:
    """What the warm sandbox looks like between programs."""

    def __init__(self, zygote: int, ioprio_get: int | None) -> None:
        self.zygote = zygote
        self.ioprio_get = ioprio_get
        self.state = _sandbox_state(zygote, ioprio_get)
        self.pids = _pids()
        self.scratch = _scratch()
        self.rss = {pid: _rss(pid) for pid in (os.getpid(), zygote)}

    def anomaly(self, status: int, sock: socket.socket) -> str | None:
        """Why the sandbox must not serve another program, or ``None``."""
        code = os.waitstatus_to_exitcode(status)
        if code != 0:
            return f"the program's judge ended with code {code}"
        extra = _pids() - self.pids
        for _ in range(40):  # killed processes are being reaped
            if not extra:
                break
            select.select([], [], [], 0.005)
            extra = _pids() - self.pids
        if extra:
            return f"{len(extra)} process(es) of the program outlived it"
        # No process of the program is left to change them again: check what it could set
        # on the sandbox's own processes (the system-call filter refuses it; this is the belt).
        state = _sandbox_state(self.zygote, self.ioprio_get)
        changed = sorted(name for name, value in state.items() if self.state.get(name) != value)
        if changed:
            return f"the program changed the {', '.join(changed)}"
        if not _ping(sock):
            return "the zygote did not answer"
        if self.scratch is None or not _clean_scratch(self.scratch):
            return "the scratch could not be restored"
        if _sysv_ipc_left():
            return "the program left System V IPC objects"
        for pid, before in self.rss.items():
            if before < 0 or _rss(pid) - before > _WARM_RSS_GROWTH:
                return "the sandbox's memory grew"
        return None


def warm_main(result_fd: int) -> None:
    """Serve jobs from stdin until it closes, the quota is reached or an anomaly recycles us."""
    stdin = sys.stdin.buffer
    settings = json.loads(stdin.readline())
    limits = settings["limits"]
    _hide_from_ptrace()
    network = _network(settings)
    _apply_limits(limits, processes_for_uid=None, cpu=False)
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    zygote = subprocess.Popen(
        [sys.executable, "-I", os.path.abspath(__file__), "zygote", str(theirs.fileno())],
        stdin=subprocess.DEVNULL,
        pass_fds=(theirs.fileno(),),
    )
    theirs.close()
    ours.send(json.dumps({"limits": limits}).encode())
    if not _ping(ours):
        raise RuntimeError("the sandbox's zygote did not start")
    ioprio_get = settings.get("ioprio_get")
    baseline = _Baseline(zygote.pid, ioprio_get if type(ioprio_get) is int else None)
    for served, line in enumerate(stdin, start=1):
        job = json.loads(line)
        key = bytes.fromhex(job.pop("nonce"))
        pid = os.fork()
        if pid == 0:
            _judge_job(job, key, result_fd, ours, network)
        _pid, status = os.waitpid(pid, 0)
        reason = baseline.anomaly(status, ours)
        if reason is None and served >= int(settings["programs"]):
            reason = f"it served {served} programs"
        done = {"done": True, "exit_code": os.waitstatus_to_exitcode(status), "recycle": reason}
        _sign(result_fd, key, done)
        if reason is not None:
            break
    zygote.kill()
    zygote.wait()


def _judge_job(
    job: dict[str, Any], key: bytes, result_fd: int, zygote: socket.socket, network: str
) -> NoReturn:
    """The forked judge of one job: the tests' side, with that job's key only."""

    def body() -> None:
        os.close(0)
        limits = job["limits"]
        _set_limit(resource.RLIMIT_CPU, int(limits["cpu_seconds"]), slack=1)
        _judge(lambda: _ForkedWorker(limits, zygote), job, key, result_fd, network, scratch=True)

    _exit_after(body)


# --- the sandbox's pid 1 ----------------------------------------------------------------------

#: The sandbox's init (pid 1), when this process runs under it (see :func:`_become_init`).
_INIT: int | None = None


def _become_init() -> None:
    """As pid 1 of the sandbox (bubblewrap ``--as-pid-1``), split in two: the child returns
    and does the work; the parent becomes the sandbox's init, which reaps every orphan and
    exits with the child's status.

    bubblewrap's own init is dumpable and keeps its stdin (a warm sandbox's job pipe): a
    program of the same uid could read its memory and take its descriptors. This one hides
    from ``ptrace`` before it forks and keeps no descriptor at all. Signals from inside the
    PID namespace cannot stop it (it is pid 1 and handles none).
    """
    global _INIT
    if os.getpid() != 1:
        return
    _hide_from_ptrace()
    pid = os.fork()
    if pid == 0:
        _INIT = 1
        return
    # Python's SIGINT handler would let a program's kill(1, SIGINT) end the sandbox; with the
    # default action, the kernel drops every signal sent to pid 1 from inside its namespace.
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    for entry in os.listdir("/proc/self/fd"):
        with contextlib.suppress(OSError):
            os.close(int(entry))
    while True:
        try:
            reaped, status = os.waitpid(-1, 0)
        except ChildProcessError:
            os._exit(1)
        if reaped == pid:
            code = os.waitstatus_to_exitcode(status)
            # the processes left are killed when pid 1 exits, as under bubblewrap's init
            os._exit(code if code >= 0 else 128 - code)


if __name__ == "__main__":
    _become_init()
    mode = sys.argv[1]
    if mode == "warm":
        warm_main(int(sys.argv[2]))
    elif mode == "zygote":
        zygote_main(int(sys.argv[2]))
    elif mode == "harness":
        harness_main(int(sys.argv[2]))
    elif mode == "worker":
        worker_main(int(sys.argv[2]), int(sys.argv[3]))
    elif mode == "command":
        command_main(sys.argv[2:])
