"""Datasets: streamed, validated rows from lists, JSONL, JSON, CSV, inspect_ai logs or Hugging
Face datasets."""

from __future__ import annotations

import csv
import hashlib
import json
import os
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

try:  # the ``traces`` extra's fast encoder: a row's version text is made with it when installed
    import msgspec
except ImportError:  # pragma: no cover - the extra is missing
    msgspec = None  # type: ignore[assignment]

from aieval._files import readable
from aieval._json import DuplicateKeyError, deep_line, load_strict, loads_strict, loads_strict_line
from aieval._types import Example
from aieval.datasets._checks import CHECK_FIELDS
from aieval.datasets._depth import MAX_ROW_DEPTH, decode_error
from aieval.datasets._inspect_rows import inspect_example, inspect_log_rows, looks_like_inspect_log
from aieval.datasets._rows import RowSpec, row_facts, row_to_example
from aieval.errors import DatasetError

__all__ = ["Dataset", "DatasetInfo", "load_dataset"]

_MOD = 1 << 128
_IN_MEMORY = "<rows>"


@dataclass(slots=True, frozen=True)
class DatasetInfo:
    """What a validating pass over a dataset found.

    Attributes:
        count: number of examples.
        version: order-independent hash of the examples (32 hex digits): the same rows in any
            order give the same version; any change to any row changes it. For an inspect_ai
            log, and rows given an ``example_key``, it hashes what each example is (for a log:
            id, input, expected and the sample's own metadata), not what a run recorded for it,
            so two logs of the same samples, or one log as ``.eval`` and as ``.json``, agree.
        with_prediction: how many examples carry a recorded prediction (or a recorded error in
            its place, which is stored as the sample's error).
        fields: every top-level field name seen in any row.
        with_checks: how many examples carry their own checks (``checks``/``assert``).
    """

    count: int
    version: str
    with_prediction: int
    fields: frozenset[str] = field(default_factory=frozenset)
    with_checks: int = 0


class Dataset:
    """A re-iterable, validated stream of :class:`~aieval.Example`.

    Rows are read lazily, so a million-row JSONL never has to fit in memory. Call :meth:`scan`
    once to validate every row, reject duplicate ids and compute the version hash.
    ``example_key`` picks the part of a row that says what the example is, for the version
    (default: the whole row). An inspect_ai log path (``.eval``, or a ``.json`` log) is read as
    :func:`~aieval.datasets.load_inspect_log` reads it.
    """

    def __init__(
        self,
        source: Any,
        *,
        spec: RowSpec | None = None,
        name: str | None = None,
        limit: int | None = None,
        label: str | None = None,
        example_key: Callable[[Mapping[str, Any]], Any] | None = None,
    ) -> None:
        if limit is not None and limit < 0:
            raise DatasetError(f"limit must be >= 0, got {limit}")
        self.spec = spec or RowSpec()
        self.limit = limit
        self.example_key = example_key
        self._path: Path | None = None
        self._rows: Any = None
        self._logged: list[dict[str, Any]] | None = None  # an inspect_ai log's rows, once read
        if isinstance(source, (str, os.PathLike)):
            self._path = readable(source, "dataset")
            self.source = str(source)
            _check_readable(self._path)
        elif isinstance(source, Mapping):
            raise DatasetError("a dataset is a list of rows or a file path, not a single dict")
        elif _is_hf_dataset(source) or isinstance(source, (list, tuple)):
            self._rows = source
            self.source = label or _IN_MEMORY
        elif isinstance(source, Iterable):
            self._rows = list(source)  # one-shot iterators are read once, then replayed
            self.source = label or _IN_MEMORY
        else:
            raise DatasetError(
                f"cannot read a dataset from {type(source).__name__}; pass a list of dicts, "
                "a .jsonl/.json/.csv path, an inspect_ai .eval log or a datasets.Dataset"
            )
        named = self._path or (Path(label) if label else None)
        self.name = name or (named.stem if named else "rows")
        self._info: DatasetInfo | None = None

    def __iter__(self) -> Iterator[Example]:
        for index, (line, row) in enumerate(self._raw()):
            if self.limit is not None and index >= self.limit:
                return
            yield row_to_example(row, index, self.spec, self.source, line)

    def scan(self) -> DatasetInfo:
        """Validate every row, reject duplicate ids and compute the version hash (cached)."""
        if self._info is not None:
            return self._info
        seen: set[int] = set()
        total = 0
        count = with_prediction = with_checks = 0
        fields: set[str] = set()
        # rows parsed from JSON lines hold JSON's own types: their text may be msgspec's
        digest = _parsed_digest if self._jsonl() and self.example_key is None else _row_digest
        for index, (line, row) in enumerate(self._raw()):
            if self.limit is not None and index >= self.limit:
                break
            example_id, recorded, checked = row_facts(row, index, self.spec, self.source, line)
            key = hash(example_id)
            if key in seen:
                self._confirm_duplicate(example_id, line)
            seen.add(key)
            total = (total + digest(self._example(row))) % _MOD
            count += 1
            with_prediction += recorded
            with_checks += checked
            fields.update(row)
        self._info = DatasetInfo(
            count, f"{total:032x}", with_prediction, frozenset(fields), with_checks
        )
        return self._info

    def _jsonl(self) -> bool:
        """Whether the rows are read from a JSON lines file."""
        return self._path is not None and self._path.suffix.lower() in (".jsonl", ".ndjson")

    def _example(self, row: Any) -> Any:
        """What the version hashes of ``row``."""
        key = self.example_key or (inspect_example if self._logged is not None else None)
        return key(row) if key is not None and isinstance(row, Mapping) else row

    def _confirm_duplicate(self, example_id: str, line: int) -> None:
        for index, (first_line, row) in enumerate(self._raw()):
            if first_line >= line:
                return  # a hash collision between different ids: not a duplicate
            other = row_to_example(row, index, self.spec, self.source, first_line)
            if other.id == example_id:
                where = "row" if self._path is None or self._logged is not None else "line"
                raise DatasetError(
                    f"duplicate id {example_id!r} (first seen at {where} {first_line}); "
                    "ids must be unique",
                    source=self.source,
                    line=line,
                )

    def _raw(self) -> Iterator[tuple[int, Any]]:
        if self._path is None:
            yield from enumerate(self._rows, 1)
            return
        if self._logged is not None:
            yield from enumerate(self._logged, 1)
            return
        suffix = self._path.suffix.lower()
        if suffix in (".jsonl", ".ndjson"):
            yield from _read_jsonl(self._path)
        elif suffix == ".eval":
            self._logged = inspect_log_rows(self._path)
            yield from enumerate(self._logged, 1)
        elif suffix == ".json":
            data = _read_json(self._path)
            if looks_like_inspect_log(data):
                self._logged = inspect_log_rows(self._path)
                yield from enumerate(self._logged, 1)
            else:
                yield from enumerate(_json_rows(data, self._path), 1)
        elif suffix in (".csv", ".tsv"):
            yield from _read_csv(self._path, "\t" if suffix == ".tsv" else ",")
        else:
            raise DatasetError(
                f"unsupported dataset file type {suffix or '(none)'!r}; "
                "use .jsonl, .json, .csv, .tsv or an inspect_ai log (.eval, .json)",
                source=self.source,
            )


def load_dataset(
    source: Any,
    *,
    prediction_field: str | None = None,
    model: str | None = None,
    limit: int | None = None,
    require_input: bool = True,
    name: str | None = None,
    label: str | None = None,
) -> Dataset:
    """Open a dataset from rows, a file path or a ``datasets.Dataset``.

    ``label`` says where in-memory rows came from (a folder of run logs, say): messages and
    the stored run name it instead of ``<rows>``.

    Example:
        >>> ds = load_dataset([{"prompt": "2+2?", "expected": "4"}])
        >>> [e.prompt for e in ds], ds.scan().count
        (['2+2?'], 1)
    """
    if isinstance(source, Dataset):
        return source
    spec = RowSpec(prediction_field=prediction_field, model=model, require_input=require_input)
    return Dataset(source, spec=spec, name=name, limit=limit, label=label)


#: The version's canonical JSON of a row, built once (``json.dumps`` with these options
#: would build an encoder per row; the text is the same).
_CANONICAL = json.JSONEncoder(
    sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str
)


def _row_digest(row: Any) -> int:
    text = _CANONICAL.encode(row)
    return _digest(text.encode("utf-8", "surrogatepass"))


def _digest(data: bytes) -> int:
    return int.from_bytes(hashlib.blake2b(data, digest_size=16).digest(), "big")


#: msgspec's encoder (``None`` without the ``traces`` extra): for a row of only texts, whole
#: numbers, booleans and nulls its text is :data:`_CANONICAL`'s to the byte (keys sorted by
#: code point, the same escapes, any integer), in a fraction of the time; a float's text may
#: differ (``1e+16``), and a text holding a lone surrogate is refused, so those rows go the
#: standard way.
_FAST_ENCODE: Callable[[Any], bytes] | None = (
    msgspec.json.Encoder(order="sorted").encode if msgspec is not None else None
)
_PLAIN = frozenset({str, int, bool, type(None)})


def _parsed_digest(row: Any) -> int:
    """:func:`_row_digest` of a row parsed from JSON (its keys are texts)."""
    if (
        _FAST_ENCODE is not None
        and type(row) is dict
        and _PLAIN.issuperset(map(type, row.values()))
    ):
        try:
            return _digest(_FAST_ENCODE(row))
        except UnicodeEncodeError:
            pass
    return _row_digest(row)


def _check_readable(path: Path) -> None:
    if not path.exists():
        raise DatasetError("file not found", source=str(path))
    if path.is_dir():
        raise DatasetError("is a directory, not a dataset file", source=str(path))
    if not os.access(path, os.R_OK):
        raise DatasetError("file is not readable (permission denied)", source=str(path))


def _open(path: Path) -> Any:
    try:
        return path.open(encoding="utf-8", newline="")
    except OSError as exc:
        raise DatasetError(f"cannot open: {exc.strerror or exc}", source=str(path)) from exc


def _read_jsonl(path: Path) -> Iterator[tuple[int, Any]]:
    with _open(path) as handle:
        try:
            for line_no, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    yield line_no, loads_strict_line(line)
                except json.JSONDecodeError as exc:
                    raise DatasetError(
                        f"invalid JSON: {exc.msg} (column {exc.colno})",
                        source=str(path),
                        line=line_no,
                    ) from None
                except DuplicateKeyError as exc:
                    raise DatasetError(str(exc), source=str(path), line=line_no) from None
                except RecursionError:
                    raise decode_error(str(path), line_no) from None
        except UnicodeDecodeError as exc:
            raise DatasetError(f"not UTF-8 text: {exc.reason}", source=str(path)) from None


def _read_json(path: Path) -> Any:
    with _open(path) as handle:
        try:
            data = load_strict(handle)
        except json.JSONDecodeError as exc:
            raise DatasetError(
                f"invalid JSON: {exc.msg} (column {exc.colno})", source=str(path), line=exc.lineno
            ) from None
        except DuplicateKeyError as exc:
            raise DatasetError(str(exc), source=str(path)) from None
        except UnicodeDecodeError as exc:
            raise DatasetError(f"not UTF-8 text: {exc.reason}", source=str(path)) from None
        except RecursionError:
            handle.seek(0)
            # a row sits one or two levels below the top ([...] or {"rows": [...]})
            line = deep_line(handle.read(), MAX_ROW_DEPTH + 2)
            raise decode_error(str(path), line, "the file") from None
    return data


def _json_rows(data: Any, path: Path) -> list[Any]:
    if isinstance(data, Mapping) and isinstance(data.get("rows"), list):
        data = data["rows"]
    if not isinstance(data, list):
        raise DatasetError(
            "a .json dataset must be an array of rows (or {'rows': [...]}, or an inspect_ai log)",
            source=str(path),
        )
    return data


def _read_csv(path: Path, delimiter: str) -> Iterator[tuple[int, Any]]:
    with _open(path) as handle:
        reader = csv.DictReader(handle, delimiter=delimiter)
        try:
            for row in reader:
                yield reader.line_num, _csv_row(row, path, reader.line_num)
        except (csv.Error, UnicodeDecodeError) as exc:
            raise DatasetError(
                f"invalid CSV: {exc}", source=str(path), line=reader.line_num
            ) from None


def _csv_row(row: dict[str | None, Any], path: Path, line: int) -> dict[str, Any]:
    if None in row:
        raise DatasetError("row has more cells than the header", source=str(path), line=line)
    known = {"id", "prompt", "input", "expected", "prediction"}
    out: dict[str, Any] = {}
    metadata: dict[str, Any] = {}
    for key, value in row.items():
        assert key is not None
        if key in known:
            out[key] = value if value != "" else None
        elif key in CHECK_FIELDS:
            out[key] = _json_cell(key, value, path, line)
        elif key.startswith("metadata."):
            metadata[key.removeprefix("metadata.")] = value
        else:
            metadata[key] = value
    if metadata:
        out["metadata"] = metadata
    return out


def _json_cell(column: str, value: str | None, path: Path, line: int) -> Any:
    """A CSV cell holding JSON (a row's checks); an empty cell is ``None``."""
    if value is None or not value.strip():
        return None
    try:
        return loads_strict(value)
    except json.JSONDecodeError as exc:
        raise DatasetError(
            f"column {column!r}: invalid JSON: {exc.msg} (column {exc.colno} of the cell); "
            'write the checks as a JSON list, e.g. [{"contains": {"value": "refund"}}]',
            source=str(path),
            line=line,
        ) from None
    except DuplicateKeyError as exc:
        raise DatasetError(f"column {column!r}: {exc}", source=str(path), line=line) from None
    except RecursionError:
        raise decode_error(str(path), line, f"column {column!r}") from None


def _is_hf_dataset(source: Any) -> bool:
    module = type(source).__module__
    return module.startswith("datasets.") and hasattr(source, "column_names")
