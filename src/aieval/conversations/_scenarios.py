"""Scenario datasets: rows from JSONL or YAML (or a list), validated and content-hashed."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Collection, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aieval._files import readable
from aieval._json import DuplicateKeyError, loads_strict
from aieval._yaml import load_yaml_file
from aieval.conversations._scenario import Scenario, scenario_from_row
from aieval.errors import DatasetError

__all__ = ["ScenarioSet", "load_scenarios"]

_MOD = 1 << 128
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True, slots=True)
class ScenarioSet:
    """Validated scenarios and the version of their rows.

    Attributes:
        scenarios: in file order.
        version: order-independent hash of the rows (32 hex digits), as a dataset's version:
            the same rows in any order give the same version; any change to a row changes it.
        source: the file, or ``"<rows>"``.
    """

    scenarios: tuple[Scenario, ...]
    version: str
    source: str

    def __iter__(self) -> Iterator[Scenario]:
        return iter(self.scenarios)

    def __len__(self) -> int:
        return len(self.scenarios)

    def by_id(self, scenario_id: str) -> Scenario:
        """The scenario with that id (a ``KeyError`` when there is none)."""
        for scenario in self.scenarios:
            if scenario.id == scenario_id:
                return scenario
        raise KeyError(scenario_id)


def load_scenarios(
    source: str | os.PathLike[str] | Sequence[Mapping[str, Any]],
    *,
    checks: Collection[str] | None = None,
    goal_checks: Collection[str] | None = None,
) -> ScenarioSet:
    """Read and validate scenario rows from a ``.jsonl``, ``.yaml``/``.yml`` file (a list of
    rows, or ``{scenarios: [...]}``) or a list of rows.

    ``checks`` and ``goal_checks`` are the names the eval's author registered; a row naming any
    other is refused. A bad row raises a :class:`~aieval.errors.DatasetError` naming the file,
    the line (JSONL) or row (YAML, lists) and the field.
    """
    if isinstance(source, str | os.PathLike):
        path = readable(source, "scenario file")
        label = str(source)
        rows = _file_rows(path, label)
    else:
        label = "<rows>"
        rows = [(index, row, "") for index, row in enumerate(source, 1)]
    scenarios: list[Scenario] = []
    seen: dict[str, int] = {}
    total = 0
    for number, row, where in rows:
        line = number if not where else None
        scenario = scenario_from_row(
            row, source=label, line=line, where=where, checks=checks, goal_checks=goal_checks
        )
        if scenario.id in seen:
            raise DatasetError(
                f"{where}duplicate scenario id {scenario.id!r} (first at {seen[scenario.id]}); "
                "ids must be unique",
                source=label,
                line=line,
            )
        seen[scenario.id] = number
        total = (total + _digest(row)) % _MOD
        scenarios.append(scenario)
    return ScenarioSet(tuple(scenarios), f"{total:032x}", label)


def _file_rows(path: Path, label: str) -> list[tuple[int, Any, str]]:
    """``(number, row, where)``: JSONL rows by line (``where`` empty), YAML rows by position."""
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".ndjson"):
        return [(line, row, "") for line, row in _jsonl(path, label)]
    if suffix in (".yaml", ".yml"):
        data = load_yaml_file(path, error=DatasetError)
        if isinstance(data, Mapping) and set(data) == {"scenarios"}:
            data = data["scenarios"]
        if not isinstance(data, list):
            raise DatasetError(
                "a YAML scenario file is a list of rows, or {scenarios: [...]}", source=label
            )
        return [(index, row, f"row {index}: ") for index, row in enumerate(data, 1)]
    raise DatasetError(
        f"unsupported scenario file type {suffix or '(none)'!r}; use .jsonl, .yaml or .yml",
        source=label,
    )


def _jsonl(path: Path, label: str) -> Iterator[tuple[int, Any]]:
    try:
        with path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    yield number, loads_strict(line)
                except json.JSONDecodeError as exc:
                    raise DatasetError(
                        f"invalid JSON: {exc.msg} (column {exc.colno})", source=label, line=number
                    ) from None
                except (DuplicateKeyError, RecursionError) as exc:
                    raise DatasetError(
                        str(exc) or "nested too deep", source=label, line=number
                    ) from None
    except UnicodeDecodeError as exc:
        raise DatasetError(f"not UTF-8 text: {exc.reason}", source=label) from None
    except OSError as exc:
        raise DatasetError(f"cannot read: {exc.strerror or exc}", source=label) from None


def _digest(row: Any) -> int:
    text = _CANONICAL.encode(row)
    return int.from_bytes(
        hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest(), "big"
    )
