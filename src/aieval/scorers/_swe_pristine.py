"""What decides a SWE-style test run comes from the pristine repository, not from the patch.

After a patch is applied to a copy of the repository, :func:`restore_test_setup` puts back, as
they are in the pristine tree, every file pytest reads its configuration from (at any depth),
every ``conftest.py``, the test files and directories the run names, top-level modules that
would shadow pytest, and installed-package metadata (``*.dist-info``/``*.egg-info``, through
which a plugin could be auto-loaded). :func:`pytest_argv` starts pytest so that the JUnit
report's path is neither on the command line nor in the environment.
"""

from __future__ import annotations

import os
import posixpath
import secrets
import shutil
from collections.abc import Iterator, Sequence
from pathlib import Path

from aieval.errors import ConfigError

__all__ = ["named_test_paths", "pytest_argv", "restore_test_setup"]

# The files pytest discovers its configuration in (pytest 9's ``CONFIG_LOADERS_BY_NAME``, and
# the older releases' subset); the installed pytest's own list is added when it has one.
_CONFIG_NAMES = frozenset(
    {
        "pytest.toml",
        ".pytest.toml",
        "pytest.ini",
        ".pytest.ini",
        "pyproject.toml",
        "tox.ini",
        "setup.cfg",
    }
)
# Top-level names that would shadow the test runner when the checkout is on sys.path.
_SHADOWING = frozenset(
    {
        "pytest.py",
        "pytest",
        "_pytest",
        "pluggy",
        "py.py",
        "sitecustomize.py",
        "usercustomize.py",
    }
)
_METADATA_SUFFIXES = (".dist-info", ".egg-info")
# The report directory's owner when aieval runs as root: not the sandbox's uid, so the
# candidate can create files in it but neither list it nor change its mode.
_NOBODY = 65534


def _setup_names() -> frozenset[str]:
    try:
        from _pytest.config.findpaths import CONFIG_LOADERS_BY_NAME
    except ImportError:  # pytest absent or older than 9: the names above
        return _CONFIG_NAMES | {"conftest.py"}
    return _CONFIG_NAMES | set(CONFIG_LOADERS_BY_NAME) | {"conftest.py"}


def named_test_paths(tests: Sequence[str]) -> list[str]:
    """The files or directories the test ids name, as normalised repository-relative paths.

    Raises:
        ConfigError: a test names the repository root, an absolute path, or a path leaving it.
    """
    paths: list[str] = []
    for test in tests:
        raw = test.split("::", 1)[0].replace("\\", "/")
        path = posixpath.normpath(raw) if raw else raw
        if not raw or path == "." or path.startswith("/") or path.split("/")[0] == "..":
            raise ConfigError(
                f"run_tests_after_patch: test {test!r} must name a test file or directory inside "
                "the repository (relative, not the repository root: its files would all be put "
                "back as they were, patch included)"
            )
        paths.append(path)
    return paths


def _decides(relative: str, named: Sequence[str], names: frozenset[str]) -> bool:
    parts = relative.split("/")
    return (
        parts[-1] in names
        or parts[0] in _SHADOWING
        or any(part.endswith(_METADATA_SUFFIXES) for part in parts)
        or any(relative == path or relative.startswith(path + "/") for path in named)
    )


def _entries(root: Path) -> Iterator[str]:
    """Relative paths of every file, symlink and directory under ``root``, outside ``.git``."""
    for folder, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        base = Path(folder).relative_to(root)
        for name in [*dirs, *files]:
            yield (base / name).as_posix()


def _same(original: Path, copy: Path) -> bool:
    if original.is_symlink() or copy.is_symlink():
        return (
            original.is_symlink()
            and copy.is_symlink()
            and os.readlink(original) == os.readlink(copy)
        )
    if original.is_dir() or copy.is_dir():
        return original.is_dir() and copy.is_dir()
    if not (original.is_file() and copy.is_file()):
        return not os.path.lexists(original) and not os.path.lexists(copy)
    return original.read_bytes() == copy.read_bytes()


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path)
    elif os.path.lexists(path):
        path.unlink()


def _real_parents(checkout: Path, relative: str) -> None:
    """Make every folder above ``relative`` in ``checkout`` a real directory (no symlinks)."""
    current = checkout
    for part in relative.split("/")[:-1]:
        current = current / part
        if current.is_symlink() or (os.path.lexists(current) and not current.is_dir()):
            current.unlink()
        current.mkdir(exist_ok=True)


def restore_test_setup(pristine: Path, checkout: Path, tests: Sequence[str]) -> list[str]:
    """Put what decides the test run back as in ``pristine``; return the paths changed.

    Files the patch added there are removed, files it changed or deleted are restored, and a
    named test directory is restored whole.
    """
    named = named_test_paths(tests)
    names = _setup_names()
    candidates = {*_entries(pristine), *_entries(checkout)}
    touched: list[str] = []
    # Parents before children: a replaced directory is restored before what lies in it.
    for relative in sorted(candidates, key=lambda r: (r.count("/"), r)):
        if not _decides(relative, named, names):
            continue
        original, copy = pristine / relative, checkout / relative
        if _same(original, copy):
            continue
        if not os.path.lexists(copy.parent):
            continue  # inside a directory already removed
        _real_parents(checkout, relative)
        _remove(copy)
        if original.is_symlink():
            copy.symlink_to(os.readlink(original))
        elif original.is_dir():
            shutil.copytree(original, copy, symlinks=True)
        elif original.is_file():
            shutil.copy2(original, copy)
        touched.append(relative)
    return touched


# Reads the pytest arguments from a file it then deletes, before anything of the checkout can
# run (only modules Python has already loaded are used), so that the report path is in neither
# sys.argv, /proc/self/cmdline nor the environment.
_BOOTSTRAP = """\
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
data = b""
while chunk := os.read(fd, 65536):
    data += chunk
os.close(fd)
os.unlink(sys.argv[1])
del sys.argv[1:]
args = [part.decode("utf-8", "surrogateescape") for part in data.split(b"\\0")]
import pytest
raise SystemExit(pytest.main(args))
"""


def pytest_argv(python: str, checkout: Path, tests: Sequence[str]) -> tuple[list[str], Path]:
    """The command that runs ``tests`` with pytest in ``checkout``, and where its report lands.

    The report goes to an unguessable name in a fresh directory of the checkout; when aieval
    runs as root, that directory belongs to another user and may be written but not listed.
    """
    folder = checkout / f".aieval-{secrets.token_hex(16)}"
    folder.mkdir()
    if os.geteuid() == 0:
        os.chown(folder, _NOBODY, _NOBODY)
    folder.chmod(0o733)
    report = folder / f"report-{secrets.token_hex(16)}.xml"
    args = [
        "-p",
        "no:cacheprovider",
        # aieval's own pytest plugin has no business in the candidate's test run (and an
        # editable install's sources are not visible inside the sandbox)
        "-p",
        "no:aieval",
        "-q",
        f"--junitxml={report}",
        "-o",
        "junit_family=xunit1",
        *tests,
    ]
    arguments = checkout / f".aieval-args-{secrets.token_hex(16)}"
    arguments.write_bytes(b"\0".join(arg.encode("utf-8", "surrogateescape") for arg in args))
    return [python, "-c", _BOOTSTRAP, str(arguments)], report
