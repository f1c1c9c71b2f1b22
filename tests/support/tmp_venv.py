"""A virtualenv under ``/tmp``, as a clone or a CI runner there has, for the sandbox to run from."""

from __future__ import annotations

import contextlib
import importlib.metadata
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from packaging.requirements import Requirement

import aieval


def _closure(name: str) -> list[importlib.metadata.Distribution]:
    """``name``'s distribution and those it requires (no extras), installed here."""
    seen: dict[str, importlib.metadata.Distribution] = {}
    pending = [name]
    while pending:
        current = pending.pop()
        dist = importlib.metadata.distribution(current)
        key = dist.metadata["Name"].lower()
        if key in seen:
            continue
        seen[key] = dist
        for line in dist.requires or []:
            requirement = Requirement(line)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                pending.append(requirement.name)
    return list(seen.values())


def make_venv(folder: Path) -> Path:
    """A venv at ``folder/.venv`` of this interpreter, as a clone at ``folder`` has; return
    its ``python``.

    pytest (and what it requires) is copied into the venv's own site-packages, so that a test
    run in the sandbox, which sees only the venv, finds it. aieval's sources are copied to
    ``folder/src`` (so the sandbox's own scripts come from there too) and, with aieval's other
    dependencies from this environment, imported through a ``.pth`` file.
    """
    venv = folder / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    purelib = Path(
        subprocess.run(
            [str(python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    for dist in _closure("pytest"):
        for file in dist.files or []:
            if ".." in file.parts:
                continue  # scripts and data outside site-packages
            target = purelib / file
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(Path(str(dist.locate_file(file))), target)
    shutil.copytree(
        Path(aieval.__file__).resolve().parent,
        folder / "src" / "aieval",
        ignore=shutil.ignore_patterns("__pycache__"),
    )
    paths = [str(folder / "src"), sysconfig.get_path("purelib")]
    (purelib / "aieval-checkout.pth").write_text("\n".join(paths) + "\n")
    return python


@contextlib.contextmanager
def folder_in_tmp() -> Iterator[Path]:
    """A fresh folder in /tmp itself, whatever $TMPDIR says; removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="aieval-venv-", dir="/tmp"))
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def hidden_venv_argv(tmp_folder: Path, argv: list[str]) -> list[str]:
    """``argv`` run by a venv that is a whole home directory (``/home/venv``, in a private
    mount namespace): the sandbox never exposes a home directory, so its interpreter is not
    there inside and the sandbox cannot start."""
    if shutil.which("unshare") is None:
        pytest.skip("util-linux's unshare is needed to give a venv a home directory's path")
    make_venv(tmp_folder)
    script = (
        'mount -t tmpfs tmpfs /home && mkdir /home/venv && mount --bind "$0/.venv" /home/venv'
        ' && exec "$@"'
    )
    if os.geteuid() == 0:
        # Root mounts without a user namespace, and stays root for the sandbox to drop.
        namespace = ["unshare", "--mount", "--propagation", "private"]
    else:
        # No cgroup can be made inside this user namespace: run with per-process limits.
        namespace = ["env", "AIEVAL_SANDBOX_REQUIRE_CGROUP=0", "unshare", "--user",
                     "--map-root-user", "--mount"]  # fmt: skip
    return [*namespace, "sh", "-c", script,
            str(tmp_folder), "/home/venv/bin/python", *argv]  # fmt: skip
