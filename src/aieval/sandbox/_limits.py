"""Resource limits for sandboxed runs, and the environment a sandboxed process starts with."""

from __future__ import annotations

import math
import os
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from aieval.errors import ConfigError

__all__ = ["REQUIRE_CGROUP_ENV", "WARM_ENV", "SandboxLimits", "sandbox_env"]

#: Set to ``0`` to make ``SandboxLimits.require_cgroup`` default to false (e.g. for
#: ``aieval code`` on a machine that delegates no cgroup to your user).
REQUIRE_CGROUP_ENV = "AIEVAL_SANDBOX_REQUIRE_CGROUP"
#: Set to ``0`` to make ``SandboxLimits.warm`` default to false: every execution then starts
#: its own sandbox and interpreters (the cold path).
WARM_ENV = "AIEVAL_SANDBOX_WARM"

# Only what a Python process needs to start; API keys and tokens in the caller's environment
# must not leak into code we did not write.
_KEPT_VARIABLES = ("PATH", "LANG", "LC_ALL", "TZ", "SYSTEMROOT")


# Inclusive bounds of each numeric limit. The upper bounds are far beyond any useful run; they
# keep the values within what the kernel's limits and bubblewrap accept.
_RANGES: dict[str, tuple[float, float]] = {
    "timeout": (1e-3, 1e9),
    "memory_mb": (64, 2**40),
    "cpu_seconds": (1, 1e9),
    "max_processes": (1, 4_000_000),
    "max_file_mb": (1, 2**40),
    "max_output_bytes": (0, 2**40),
    "max_disk_mb": (1, 2**40),
    "max_open_files": (32, 1_048_576),
}
# What the sandbox's own processes (bubblewrap, the harness's interpreter) may hold besides
# the candidate's memory and the scratch, within the run's memory cgroup.
OWN_MEMORY_MB = 64


@dataclass(slots=True, frozen=True, kw_only=True)
class SandboxLimits:
    """Limits for one sandboxed execution.

    Attributes:
        timeout: wall-clock seconds before the whole process group is killed; for
            :func:`~aieval.sandbox.execute`, counted from when the sandbox is ready, before
            the candidate runs (starting it may take 30 s more, else ``sandbox_error``).
        memory_mb: address-space limit per process (``RLIMIT_AS``), in MiB; the whole run is
            held to :attr:`run_memory_mb` by a memory cgroup.
        cpu_seconds: CPU-time limit per process; defaults to ``ceil(timeout) + 1``.
        max_processes: extra processes the run may start (``RLIMIT_NPROC`` headroom).
        max_file_mb: largest file the run may write (``RLIMIT_FSIZE``), in MiB.
        max_output_bytes: stdout and stderr are each kept up to this many bytes.
        max_disk_mb: size of the private scratch filesystem (a tmpfs) the run writes to, in MiB;
            it holds at most one file, folder or link per 4 KiB of it.
        max_open_files: open file descriptors per process (``RLIMIT_NOFILE``, soft and hard).
        require_cgroup: with ``isolation="bwrap"``, refuse to run (``ConfigError``) when no
            cgroup with ``pids.max`` and a memory limit can be made for the run, rather than
            run with per-process limits only; ``False`` runs anyway and says so in the result's
            ``isolation`` text. Defaults to true unless ``AIEVAL_SANDBOX_REQUIRE_CGROUP=0``.
        warm: with ``isolation="bwrap"``, run :func:`~aieval.sandbox.execute` in a warm
            sandbox that serves many programs, each in a fresh process forked for it with the
            same limits and a clean scratch (see ``docs/sandbox.md``); ``False`` starts a
            sandbox and two interpreters per execution. Defaults to true unless
            ``AIEVAL_SANDBOX_WARM=0``.
        isolation: ``"bwrap"`` (the default) runs the code in bubblewrap namespaces as an
            unprivileged uid with a read-only system view; ``"none"`` runs it as a plain child
            process with only the limits above, for trusted code and for benchmarks.
    """

    timeout: float = 5.0
    memory_mb: int = 512
    cpu_seconds: int | None = None
    max_processes: int = 16
    max_file_mb: int = 16
    max_output_bytes: int = 64_000
    max_disk_mb: int = 64
    max_open_files: int = 256
    isolation: Literal["bwrap", "none"] = "bwrap"
    require_cgroup: bool = field(default_factory=lambda: _require_cgroup_default())
    warm: bool = field(default_factory=lambda: _flag_default(WARM_ENV))

    def __post_init__(self) -> None:
        for name, (low, high) in _RANGES.items():
            value = getattr(self, name)
            if value is None and name == "cpu_seconds":
                continue
            number = isinstance(value, int | float) and not isinstance(value, bool)
            if not (number and math.isfinite(value) and low <= value <= high):
                raise ConfigError(
                    f"sandbox limit {name}={value!r} is out of range: give a finite number "
                    f"from {low:.12g} to {high:.12g}"
                )
        for flag in ("require_cgroup", "warm"):
            if not isinstance(getattr(self, flag), bool):
                raise ConfigError(
                    f"sandbox limit {flag}={getattr(self, flag)!r} must be true or false"
                )
        if self.isolation not in ("bwrap", "none"):
            raise ConfigError(
                f"sandbox limit isolation={self.isolation!r} is out of range: 'bwrap' or 'none'"
            )

    @property
    def run_memory_mb(self) -> int:
        """The memory cgroup's limit for the whole run, in MiB: ``memory_mb`` for the
        candidate, ``max_disk_mb`` for its scratch (tmpfs pages are memory) and 64 for the
        sandbox's own processes. Every page of the run counts: all its processes, the scratch,
        memfd files, System V segments, pipe buffers, inodes and other kernel memory.

        Example:
            >>> SandboxLimits(memory_mb=128, max_disk_mb=64).run_memory_mb
            256
        """
        return self.memory_mb + self.max_disk_mb + OWN_MEMORY_MB

    def for_child(self) -> dict[str, Any]:
        """The limits as the sandboxed process reads them."""
        values = asdict(self)
        values["cpu_seconds"] = self.cpu_seconds or math.ceil(self.timeout) + 1
        return values


def _require_cgroup_default() -> bool:
    return _flag_default(REQUIRE_CGROUP_ENV)


def _flag_default(variable: str) -> bool:
    value = os.environ.get(variable, "1").strip().lower()
    if value in ("1", "true", "yes"):
        return True
    if value in ("0", "false", "no"):
        return False
    raise ConfigError(f"{variable}={value!r} is not understood: set it to 1 or 0")


def sandbox_env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """A minimal environment: locale and ``PATH`` only, plus ``extra``; no secrets.

    Example:
        >>> "OPENAI_API_KEY" in sandbox_env()
        False
    """
    env = {name: os.environ[name] for name in _KEPT_VARIABLES if name in os.environ}
    env.setdefault("PATH", os.defpath)
    env.setdefault("LANG", "C.UTF-8")
    # Thread pools of numeric libraries would count against the process limit.
    env.update(OMP_NUM_THREADS="1", OPENBLAS_NUM_THREADS="1", MKL_NUM_THREADS="1")
    env["PYTHONIOENCODING"] = "utf-8"
    env["HOME"] = "/nonexistent"
    env.update(extra or {})
    return env
