"""The system-call filter of a sandboxed run: a denylist compiled to BPF by libseccomp.

The filter lets every call through except those no candidate needs and that widen what the
kernel exposes: kernel keyrings, mounting, namespace changes (``unshare``, ``setns``, ``clone``
with ``CLONE_NEWUSER``), ``ptrace``, cross-process memory access and every other way into
another process (``pidfd_open``, ``pidfd_getfd``, ``kcmp``), BPF, perf events,
``userfaultfd``, io_uring, kernel modules, reboot, clocks, swap and quota. They fail with
``EPERM``; ``clone3`` fails with ``ENOSYS`` (its flags cannot be inspected), so the C library
falls back to ``clone``, whose flags can. Calls that change another process's limits,
priority, scheduling, CPU affinity, I/O priority or memory placement (``SELF_ONLY_SYSCALLS``)
are refused with ``EPERM`` unless they name the caller itself (pid 0): the sandbox's own
processes (the harness, a warm sandbox's zygote) share the candidate's uid and PID namespace,
and nothing a program sets may outlive it. System calls of another ABI (32-bit ``int 0x80`` on
x86-64, x32) kill the process. bubblewrap loads the program (``--seccomp FD``) right before it
starts the harness.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import tempfile

from aieval.errors import ConfigError

__all__ = ["DENIED_SYSCALLS", "SELF_ONLY_SYSCALLS", "seccomp_program", "syscall_number"]

#: Refused with ``EPERM`` wherever the architecture has them.
DENIED_SYSCALLS = (
    "acct",
    "add_key",
    "adjtimex",
    "bpf",
    "clock_adjtime",
    "clock_settime",
    "delete_module",
    "fanotify_init",
    "finit_module",
    "fsconfig",
    "fsmount",
    "fsopen",
    "fspick",
    "init_module",
    "io_uring_enter",
    "io_uring_register",
    "io_uring_setup",
    "ioperm",
    "iopl",
    "kexec_file_load",
    "kcmp",
    "kexec_load",
    "keyctl",
    "lookup_dcookie",
    "mount",
    "mount_setattr",
    "move_mount",
    "mq_getsetattr",
    "mq_notify",
    "mq_open",
    "mq_timedreceive",
    "mq_timedsend",
    "mq_unlink",
    "name_to_handle_at",
    "nfsservctl",
    "open_by_handle_at",
    "open_tree",
    "perf_event_open",
    "pidfd_getfd",
    "pidfd_open",
    "pivot_root",
    "process_madvise",
    "process_vm_readv",
    "process_vm_writev",
    "ptrace",
    "quotactl",
    "quotactl_fd",
    "reboot",
    "request_key",
    "setns",
    "settimeofday",
    "swapoff",
    "swapon",
    "syslog",
    "umount2",
    "unshare",
    "userfaultfd",
    "vhangup",
)
#: Allowed only on the calling process itself: each with the arguments that must be 0 (or,
#: for ``setpriority`` and ``ioprio_set``, the "a process" selector), else ``EPERM``.
#: ``prlimit64`` may still read another process's limits (its new-limit pointer is NULL).
SELF_ONLY_SYSCALLS: dict[str, tuple[tuple[int, int], ...]] = {
    # (argument index, the only value allowed); a rule per pair, any mismatch refuses
    "setpriority": ((0, 0), (1, 0)),  # which == PRIO_PROCESS, who == 0 (not a group or user)
    "ioprio_set": ((0, 1), (1, 0)),  # which == IOPRIO_WHO_PROCESS, who == 0
    "sched_setscheduler": ((0, 0),),
    "sched_setparam": ((0, 0),),
    "sched_setattr": ((0, 0),),
    "sched_setaffinity": ((0, 0),),
    "migrate_pages": ((0, 0),),
    "move_pages": ((0, 0),),
}
_CLONE_NEWUSER = 0x10000000
_ACT_ALLOW = 0x7FFF0000
_ACT_ERRNO = 0x00050000
_CMP_NE = 1
_CMP_MASKED_EQ = 7
_INSTALL_HINT = (
    "install libseccomp (Debian/Ubuntu: apt-get install libseccomp2; Fedora: dnf install "
    "libseccomp)"
)


class _ArgCmp(ctypes.Structure):
    _fields_ = (
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    )


@functools.cache
def _library() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError as exc:
        raise ConfigError(f"the code sandbox needs libseccomp ({exc}): {_INSTALL_HINT}") from exc
    lib.seccomp_init.argtypes = (ctypes.c_uint32,)
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_release.argtypes = (ctypes.c_void_p,)
    lib.seccomp_release.restype = None
    lib.seccomp_syscall_resolve_name.argtypes = (ctypes.c_char_p,)
    lib.seccomp_syscall_resolve_name.restype = ctypes.c_int
    lib.seccomp_rule_add_array.argtypes = (
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    )
    lib.seccomp_rule_add_array.restype = ctypes.c_int
    lib.seccomp_export_bpf.argtypes = (ctypes.c_void_p, ctypes.c_int)
    lib.seccomp_export_bpf.restype = ctypes.c_int
    return lib


def _add(lib: ctypes.CDLL, ctx: int, action: int, name: str, *conditions: _ArgCmp) -> None:
    number = lib.seccomp_syscall_resolve_name(name.encode())
    if number < 0:
        return  # not a system call of this architecture
    array = (_ArgCmp * max(len(conditions), 1))(*conditions)
    status = lib.seccomp_rule_add_array(ctx, action, number, len(conditions), array)
    if status < 0:
        raise ConfigError(f"libseccomp refused the rule for {name}: {os.strerror(-status)}")


def syscall_number(name: str) -> int | None:
    """The number of system call ``name`` on this architecture (``None``: it has none).

    Example:
        >>> syscall_number("no_such_call") is None
        True
    """
    number = int(_library().seccomp_syscall_resolve_name(name.encode()))
    return number if number >= 0 else None


@functools.cache
def seccomp_program() -> bytes:
    """The compiled BPF filter, as ``bwrap --seccomp`` reads it.

    Raises:
        ConfigError: libseccomp is missing or cannot build the filter, with how to fix it.
    """
    lib = _library()
    ctx = lib.seccomp_init(_ACT_ALLOW)
    if not ctx:
        raise ConfigError("libseccomp could not create a filter for this architecture")
    try:
        for name in DENIED_SYSCALLS:
            _add(lib, ctx, _ACT_ERRNO | errno.EPERM, name)
        _add(lib, ctx, _ACT_ERRNO | errno.ENOSYS, "clone3")
        # clone's flags are its first argument (on x86-64 and arm64; bubblewrap's
        # --disable-userns refuses new user namespaces wherever it is not).
        newuser = _ArgCmp(0, _CMP_MASKED_EQ, _CLONE_NEWUSER, _CLONE_NEWUSER)
        _add(lib, ctx, _ACT_ERRNO | errno.EPERM, "clone", newuser)
        for name, allowed in SELF_ONLY_SYSCALLS.items():
            for index, value in allowed:
                _add(lib, ctx, _ACT_ERRNO | errno.EPERM, name, _ArgCmp(index, _CMP_NE, value, 0))
        # prlimit64(pid, resource, new, old): setting (new != NULL) another's (pid != 0)
        other, setting = _ArgCmp(0, _CMP_NE, 0, 0), _ArgCmp(2, _CMP_NE, 0, 0)
        _add(lib, ctx, _ACT_ERRNO | errno.EPERM, "prlimit64", other, setting)
        with tempfile.TemporaryFile() as out:
            status = lib.seccomp_export_bpf(ctx, out.fileno())
            if status < 0:
                raise ConfigError(f"libseccomp could not export the filter: {os.strerror(-status)}")
            out.seek(0)
            program = out.read()
    finally:
        lib.seccomp_release(ctx)
    if not program or len(program) % 8:
        raise ConfigError("libseccomp exported an empty or malformed filter")
    return program
