"""Installed plug-ins are read once per import path: a package installed after a lookup is
found by the next one, and lookups on an unchanged path do not read every package again."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

from aieval.core._plugins import plugin_names


def _install(folder: Path, name: str) -> None:
    info = folder / f"{name}-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: 1.0\n")
    (info / "entry_points.txt").write_text(f"[aieval.graders]\n{name} = {name}:make\n")


def test_a_package_installed_after_a_lookup_is_found(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    assert "late_grader" not in plugin_names("aieval.graders")
    _install(tmp_path, "late_grader")
    assert "late_grader" in plugin_names("aieval.graders")


def test_an_unchanged_path_reads_the_installed_packages_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(tmp_path))
    _install(tmp_path, "counted_grader")
    reads = []
    real = metadata.entry_points

    def counted(**kwargs: Any) -> Any:
        reads.append(kwargs)
        return real(**kwargs)

    monkeypatch.setattr(metadata, "entry_points", counted)
    for _ in range(5):
        assert "counted_grader" in plugin_names("aieval.graders")
    assert len(reads) == 1
