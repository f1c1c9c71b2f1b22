"""A run's columns kept as it is written, so a comparison reads arrays instead of rows.

Each batch the writer commits adds, in its own transaction, one row of ``run_columns``: its
samples' figures a comparison of plain runs needs (dataset position, a digest of the id, of the
stored input and of the expected answer, pass flag, weighted score, latency, cost, whether it is
unpriced, the target's error) and its score rows (sample, scorer, value), packed as
little-endian arrays. A batch with anything the packed form does not hold (a verdict that is not
plain, an epoch, an ``extra`` naming one) adds no row, so its run's kept rows fall short of its
samples and the run is read back as before.

Read back (:meth:`KeptColumnsReader.kept_columns`), the rows are used only when their samples
add up to the run's sample count, read in the same statement: a sample written around the
writer (by hand, by an import) makes them unused, never stale. A store opened untrusted never
reads them. Digests are 64-bit BLAKE2b: two different ids or texts at the same position agree
by chance with odds of 2**-63.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from hashlib import blake2b
from typing import Any

import numpy as np

from aieval._records import SampleRecord
from aieval.store._backend import Backend
from aieval.store._connection import Connection
from aieval.store._untrusted import UntrustedSqliteBackend

__all__ = [
    "KEPT_INSERT", "KeptColumns", "KeptColumnsReader", "KeptIds", "kept_plain_row", "kept_row"
]  # fmt: skip

log = logging.getLogger("aieval")

#: the packed form's version (in each row's head): rows of another version are not read
_FORMAT = 1
#: the per-sample arrays, in the body's order: (name, dtype)
_SAMPLE_ARRAYS = (
    ("idx", "<i8"),
    ("id_hash", "<u8"),
    ("input_hash", "<u8"),
    ("expected_hash", "<u8"),
    ("weighted", "<f8"),
    ("latency", "<f8"),
    ("cost", "<f8"),
    ("flags", "u1"),
    ("id_len", "<u4"),
)
#: the per-score-row arrays, after the samples' ids
_SCORE_ARRAYS = (("position", "<u4"), ("code", "<u4"), ("value", "<f8"))
_PASSED, _UNPRICED = 1, 2
#: the per-sample digests of the texts (input, expected), read back as one
_TEXT_DIGESTS = ("input_hash", "expected_hash")
#: the per-sample arrays the reader does not keep as they are (the ids' lengths are kept as
#: where each id starts)
_UNREAD = ("id_hash", "id_len", *_TEXT_DIGESTS)
#: odd, so that multiplying by it (modulo 2**64) maps two digests to two digests
_SPREAD = np.uint64(0x9E3779B97F4A7C15)

#: A batch's row; one there already under its key is of samples removed around the writer
#: (by hand, before a resume writes them again): it is replaced, and the sum of the rows' counts
#: then no longer equals the run's sample count unless they hold the run as it is now.
KEPT_INSERT = (
    "INSERT INTO run_columns (run_id, first_idx, first_id, n, head, body) VALUES (?, ?, ?, ?, ?, ?)"
    " ON CONFLICT (run_id, first_idx, first_id)"
    " DO UPDATE SET n = excluded.n, head = excluded.head, body = excluded.body"
)


def _digest(text: str | None) -> int:
    """A text's 64-bit digest, odd; 0 for NULL (so NULL never equals a text)."""
    if text is None:
        return 0
    return (
        int.from_bytes(
            blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little"
        )
        | 1
    )


def _texts_digest(inputs: np.ndarray, expected: np.ndarray) -> np.ndarray:
    """One 64-bit digest of each sample's input and expected texts from their two: two
    samples' differ where exactly one of their texts does, and where both do but by a chance
    of 2**-63 (a comparison then reads the texts of the pairs that differ, each on its own)."""
    out: np.ndarray = expected * _SPREAD  # wraps modulo 2**64
    out ^= inputs
    return out


def _nan_unless_finite(values: np.ndarray) -> None:
    """NaN in place of each value that is not finite, as the column reads keep them."""
    values[~np.isfinite(values)] = np.nan


def _unpriced(sample: SampleRecord) -> bool:
    """The column reads' rule: no cost, yet tokens or an answered model call."""
    return sample.cost is None and (
        sample.input_tokens is not None
        or sample.output_tokens is not None
        or any(call.error is None for call in sample.calls)
    )


def kept_row(
    run_id: str,
    samples: Sequence[SampleRecord],
    rows: Sequence[Sequence[Any]],
    columns: Sequence[str],
    metadata: Sequence[Any],
) -> tuple[str, int, str, int, str, bytes] | None:
    """The ``run_columns`` row of a batch, ``None`` when the packed form cannot hold it.

    ``rows``: each sample's row as the writer binds it, of ``columns`` (the stored texts and
    typed verdict columns are read from it); ``metadata``: each score row's stored metadata, in
    the order the samples list their scores. Never raises: a value the arrays cannot hold only
    leaves the run to its rows."""
    try:
        return _packed(run_id, samples, rows, columns, metadata)
    except (ValueError, TypeError, OverflowError, KeyError) as exc:
        log.debug("no kept columns for a batch of run %s: %s", run_id, exc)
        return None


def _packed(
    run_id: str,
    samples: Sequence[SampleRecord],
    rows: Sequence[Sequence[Any]],
    columns: Sequence[str],
    metadata: Sequence[Any],
) -> tuple[str, int, str, int, str, bytes] | None:
    at = {name: columns.index(name) for name in _ROW_COLUMNS}
    i_in, i_ex, i_extra = at["input"], at["expected"], at["extra"]
    i_w, i_p, i_plain, i_epoch = (
        at["weighted_score"], at["verdict_passed"], at["verdict_plain"], at["epoch"]
    )  # fmt: skip
    for row in rows:
        if row[i_plain] != 1 or row[i_p] is None or row[i_epoch] is not None:
            return None
        extra = row[i_extra]
        if extra is not None and "epoch" in extra.lower():
            return None
    batch = _Batch()
    ids = [s.id for s in samples]
    batch.first_id = ids[0] if ids else None
    batch.ids = [i.encode("utf-8", "surrogatepass") for i in ids]
    arrays = batch.arrays
    arrays["idx"] = [s.index for s in samples]
    arrays["id_hash"] = [_digest(i) for i in ids]
    arrays["input_hash"] = [_digest(row[i_in]) for row in rows]
    arrays["expected_hash"] = [_digest(row[i_ex]) for row in rows]
    arrays["weighted"] = [row[i_w] for row in rows]
    arrays["latency"] = [s.latency_s for s in samples]
    arrays["cost"] = [s.cost for s in samples]
    arrays["flags"] = [
        (_PASSED if row[i_p] else 0) | (_UNPRICED if _unpriced(s) else 0)
        for s, row in zip(samples, rows, strict=True)
    ]
    arrays["id_len"] = [len(i) for i in batch.ids]
    batch.errors = {str(p): s.error for p, s in enumerate(samples) if s.error is not None}
    names, positions, codes, values = batch.names, batch.positions, batch.codes, batch.values
    for p, s in enumerate(samples):
        for name, score in s.scores.items():
            positions.append(p)
            codes.append(names.setdefault(name, len(names)))
            values.append(score.value)
    if len(metadata) != len(values):
        raise ValueError("a metadata text per score row")
    if any(metadata):
        # a superset of the judges' scan (SQLite's LIKE ignores case): 0 skips the scan
        batch.judged = sum(1 for t in metadata if t and "parse_failures" in t.lower())
    return batch.row(run_id)


#: the sample row's columns :func:`kept_row` reads
_ROW_COLUMNS = (
    "input", "expected", "extra", "weighted_score", "verdict_passed", "verdict_plain", "epoch"
)  # fmt: skip


class _Batch:
    """One ``run_columns`` row, built a sample and a score at a time."""

    def __init__(self) -> None:
        self.arrays: dict[str, list[Any]] = {name: [] for name, _ in _SAMPLE_ARRAYS}
        self.ids: list[bytes] = []
        self.first_id: str | None = None
        self.names: dict[str, int] = {}
        self.errors: dict[str, str] = {}
        self.judged = 0
        self.positions: list[int] = []
        self.codes: list[int] = []
        self.values: list[float | None] = []

    def __len__(self) -> int:
        return len(self.ids)

    def sample(
        self,
        sample_id: str,
        idx: int,
        text_in: str | None,
        text_expected: str | None,
        weighted: float | None,
        passed: bool,
        latency: float | None,
        cost: float | None,
        unpriced: bool,
        error: str | None,
    ) -> None:
        """Add a sample (its scores follow, with :meth:`score`)."""
        if self.first_id is None:
            self.first_id = sample_id
        raw_id = sample_id.encode("utf-8", "surrogatepass")
        if error is not None:
            self.errors[str(len(self.ids))] = error
        self.ids.append(raw_id)
        arrays = self.arrays
        arrays["idx"].append(idx)
        arrays["id_hash"].append(_digest(sample_id))
        arrays["input_hash"].append(_digest(text_in))
        arrays["expected_hash"].append(_digest(text_expected))
        arrays["weighted"].append(weighted)
        arrays["latency"].append(latency)
        arrays["cost"].append(cost)
        arrays["flags"].append((_PASSED if passed else 0) | (_UNPRICED if unpriced else 0))
        arrays["id_len"].append(len(raw_id))

    def score(self, name: str, value: float | None, metadata: str | None) -> None:
        """Add a score of the last sample added."""
        self.positions.append(len(self.ids) - 1)
        self.codes.append(self.names.setdefault(name, len(self.names)))
        self.values.append(value)
        # a superset of the judges' scan (SQLite's LIKE ignores case): 0 skips the scan
        if metadata is not None and "parse_failures" in metadata.lower():
            self.judged += 1

    def row(self, run_id: str) -> tuple[str, int, str, int, str, bytes] | None:
        """The row (``None`` when no sample was added)."""
        if self.first_id is None:
            return None
        # None is NaN in a float array; weighted scores and values not finite are NaN too,
        # as the column reads keep them (latency and cost are kept as stored)
        packed = {name: np.array(self.arrays[name], dtype=dtype) for name, dtype in _SAMPLE_ARRAYS}
        _nan_unless_finite(packed["weighted"])
        parts = [packed[name].tobytes() for name, _ in _SAMPLE_ARRAYS]
        parts.append(b"".join(self.ids))
        values = np.array(self.values, dtype="<f8")
        _nan_unless_finite(values)
        parts.append(np.array(self.positions, dtype="<u4").tobytes())
        parts.append(np.array(self.codes, dtype="<u4").tobytes())
        parts.append(values.tobytes())
        head = {
            "v": _FORMAT,
            "names": list(self.names),
            "errors": self.errors,
            "judged": self.judged,
            "rows": len(self.codes),
        }
        first_idx = min(self.arrays["idx"])
        return run_id, first_idx, self.first_id, len(self.ids), json.dumps(head), b"".join(parts)


class KeptIds(Sequence[str]):
    """A run's sample ids in dataset order, decoded one at a time as they are asked for: one
    blob of their UTF-8 bytes in that order, and where each starts (one more: the end)."""

    def __init__(self, blob: bytes | bytearray, starts: np.ndarray) -> None:
        self._blob, self._starts = blob, starts

    def __len__(self) -> int:
        return len(self._starts) - 1

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        i = int(i)
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError("sample position out of range")
        start, end = int(self._starts[i]), int(self._starts[i + 1])
        return self._blob[start:end].decode("utf-8", "surrogatepass")

    def same(self, other: KeptIds) -> bool:
        """Whether ``other`` holds the same ids in the same order (compared as bytes)."""
        return np.array_equal(self._starts, other._starts) and self._blob == other._blob


@dataclass(frozen=True, slots=True)
class KeptColumns:
    """A run's kept columns in dataset order ``(idx)``: per sample its id (decoded on demand),
    one digest of its input and expected texts (:func:`_texts_digest`), its figures
    (``NaN``: none) and target error (by position); per scorer (``names``, in order of first
    appearance over the samples and each sample's scores as written) and sample: whether it
    has a score (``present``, scorer by sample), its value (``values``, ``NaN``: none) and its
    place among the sample's scores as written (``rank``, 0 first; read only where
    ``present``)."""

    ids: KeptIds
    idx: np.ndarray
    texts_hash: np.ndarray
    passed: np.ndarray
    weighted: np.ndarray
    latency: np.ndarray
    cost: np.ndarray
    unpriced: np.ndarray
    errors: dict[int, str]
    judged: int
    names: list[str]
    present: np.ndarray
    values: np.ndarray
    rank: np.ndarray


class KeptColumnsReader(Connection):
    """A run's kept columns, read back (see the module docstring)."""

    def kept_columns(self, run_id: str) -> KeptColumns | None:
        """The run's kept columns; ``None`` when they do not cover every stored sample (a run
        written before them, imported, killed between two batches' rows and samples written
        around the writer), when a batch held what they cannot, or the store is not trusted."""
        if isinstance(self._db, UntrustedSqliteBackend):
            return None
        found: list[_Unpacker | None] = []

        def add(page: list[tuple[Any, ...]]) -> None:
            for n, head, body, total in page:
                if not found:
                    found.append(_Unpacker(int(total)) if total else None)
                unpacker = found[0]
                if unpacker is None or n is None:
                    continue
                try:
                    unpacker.add(int(n), str(self._db.text(head)), bytes(body))
                except (ValueError, KeyError, TypeError) as exc:
                    log.debug("kept columns of run %s not used: %s", run_id, exc)
                    found[0] = None

        # in pages of 4 rows (a row kept by a scan holds 10,000 samples, about 1 MB): the
        # bodies as the driver returns them (bytes), not read as texts; the sample count in
        # the same statement, so both are of one state of the run
        self._read_pages(
            "SELECT k.n, k.head, k.body, (SELECT COUNT(*) FROM samples WHERE run_id = ?)"
            " FROM run_columns k WHERE k.run_id = ? ORDER BY k.first_idx, k.first_id",
            (run_id, run_id),
            add,
            4,
        )
        if not found or found[0] is None or found[0].offset != found[0].total:
            return None
        try:
            return found[0].done()
        except (ValueError, KeyError, TypeError) as exc:
            log.debug("kept columns of run %s not used: %s", run_id, exc)
            return None

    def keep_columns(self, run_id: str) -> bool:
        """Keep the columns of a run stored without them (before version 11, imported, or
        written in SQL) by a scan, in one transaction that holds the run's writers off; whether
        they were kept (not for a run the packed form cannot hold: a verdict that is not plain,
        epochs). A comparison never scans by itself: it reads such a run's rows."""
        if isinstance(self._db, UntrustedSqliteBackend):
            return False
        db = self._db
        with self._lock, db.transaction(exclusive=True):
            if self.location.backend == "postgres":
                db.query("SELECT 1 FROM runs WHERE id = ? FOR UPDATE", (run_id,))
            rows = _scan(db, run_id)
            db.execute("DELETE FROM run_columns WHERE run_id = ?", (run_id,))
            for row in rows or []:
                db.execute(KEPT_INSERT, row)
        return rows is not None

    def sample_text_pairs(
        self, run_id: str, sample_ids: Sequence[str]
    ) -> dict[str, tuple[str | None, str | None]]:
        """The stored input and expected texts of the run's samples ``sample_ids``."""
        out: dict[str, tuple[str | None, str | None]] = {}
        page = self._db.max_members
        for start in range(0, len(sample_ids), page):
            member, values = self._db.member_of("sample_id", list(sample_ids[start : start + page]))
            for sample_id, text_in, text_expected in self._read(
                f"SELECT sample_id, input, expected FROM samples WHERE run_id = ? AND {member}",
                (run_id, *values),
            ):
                out[sample_id] = (text_in, text_expected)
        return out


#: samples per row of a run's columns kept by a scan
_SCAN_BATCH = 10_000


def _scan(db: Backend, run_id: str) -> list[tuple[str, int, str, int, str, bytes]] | None:
    """The rows of a run's kept columns, from its stored samples and scores (``None``: the
    packed form cannot hold the run)."""
    scores: dict[str, list[tuple[str, float | None, str | None]]] = {}

    def add_scores(page: list[tuple[Any, ...]]) -> None:
        for sample_id, scorer, value, metadata in page:
            scores.setdefault(db.text(sample_id), []).append(
                (db.text(scorer), value, db.text(metadata))
            )

    db.pages(
        "SELECT sample_id, scorer, value, metadata FROM scores WHERE run_id = ? ORDER BY rowid",
        (run_id,),
        add_scores,
    )
    rows: list[tuple[str, int, str, int, str, bytes]] = []
    batch = _Batch()
    held = True

    def add_samples(page: list[tuple[Any, ...]]) -> None:
        nonlocal batch, held
        if not held:
            return
        for sample_id, idx, text_in, text_ex, weighted, passed, plain, epoch, extra, latency, \
                cost, unpriced, error in page:  # fmt: skip
            if plain != 1 or passed is None or epoch is not None or extra:
                held = False
                return
            sample_id = db.text(sample_id)
            batch.sample(
                sample_id, int(idx), db.text(text_in), db.text(text_ex), weighted, bool(passed),
                latency, cost, bool(unpriced), db.text(error),
            )  # fmt: skip
            for scorer, value, metadata in scores.pop(sample_id, ()):
                batch.score(scorer, value, metadata)
            if len(batch) == _SCAN_BATCH:
                rows.append(batch.row(run_id))  # type: ignore[arg-type]
                batch = _Batch()

    db.pages(
        "SELECT s.sample_id, s.idx, s.input, s.expected, s.weighted_score, s.verdict_passed,"
        " s.verdict_plain, s.epoch, CASE WHEN s.extra LIKE '%epoch%' THEN 1 ELSE 0 END,"
        " s.latency_s, s.cost,"
        " CASE WHEN s.cost IS NULL AND (s.input_tokens IS NOT NULL"
        " OR s.output_tokens IS NOT NULL OR EXISTS (SELECT 1 FROM model_calls c"
        " WHERE c.run_id = s.run_id AND c.sample_id = s.sample_id AND c.error IS NULL))"
        " THEN 1 ELSE 0 END, s.error"
        " FROM samples s WHERE s.run_id = ? ORDER BY s.idx, s.sample_id",
        (run_id,),
        add_samples,
    )
    if not held:
        return None
    last = batch.row(run_id)
    if last is not None:
        rows.append(last)
    return rows


class _Unpacker:
    """A run's kept rows unpacked as they are read, into arrays of the run's size: each body
    is released once copied, and its score rows are placed into their scorer's columns at
    once (the memory is about one copy of the run's columns, never a list of its rows)."""

    def __init__(self, total: int) -> None:
        self.total = total
        # the texts' two digests are read into one (half the memory); the ids' digests are
        # not read (the ids are compared as bytes); positions in 32 bits until one needs 64
        self.flat = {
            name: np.empty(total, dtype=np.int32 if name == "idx" else dtype)
            for name, dtype in _SAMPLE_ARRAYS
            if name not in _UNREAD
        }
        self.flat["texts_hash"] = np.empty(total, dtype="<u8")
        # the ids' bytes, added to as read (a join of parts would hold them twice), and where
        # each starts (one more: the end), 32-bit while they are under 2 GB
        self.id_blob = bytearray()
        self.starts: np.ndarray = np.zeros(total + 1, dtype=np.int32)
        self.names: dict[str, int] = {}
        self.errors: dict[int, str] = {}
        self.judged = 0
        # scorer by sample (in the order read), a row added for each new scorer
        self.present: np.ndarray = np.zeros((0, total), dtype=bool)
        self.values: np.ndarray = np.full((0, total), np.nan)
        self.rank: np.ndarray = np.zeros((0, total), dtype=np.uint8)
        self.offset = 0

    def add(self, n: int, head_text: str, body: bytes) -> None:
        head = json.loads(head_text)
        if head["v"] != _FORMAT:
            raise ValueError(f"format {head['v']!r}")
        offset = self.offset
        if n < 1 or offset + n > self.total:
            raise ValueError("more samples kept than stored")
        at = 0
        texts: dict[str, np.ndarray] = {}
        for name, dtype in _SAMPLE_ARRAYS:
            part = np.frombuffer(body, dtype=dtype, count=n, offset=at)
            if name in _TEXT_DIGESTS:
                texts[name] = part
            elif name == "id_len":
                self._add_starts(offset, part)
            elif name == "idx" and self.flat["idx"].dtype != part.dtype:
                if int(part.min()) < -(2**31) or int(part.max()) >= 2**31:
                    self.flat["idx"] = self.flat["idx"].astype(part.dtype)
                self.flat["idx"][offset : offset + n] = part
            elif name not in _UNREAD:
                self.flat[name][offset : offset + n] = part
            at += np.dtype(dtype).itemsize * n
        self.flat["texts_hash"][offset : offset + n] = _texts_digest(*texts.values())
        id_bytes = int(self.starts[offset + n]) - int(self.starts[offset])
        self.id_blob += memoryview(body)[at : at + id_bytes]
        at += id_bytes
        rows = int(head["rows"])
        score: list[np.ndarray] = []
        for _, dtype in _SCORE_ARRAYS:
            score.append(np.frombuffer(body, dtype=dtype, count=rows, offset=at))
            at += np.dtype(dtype).itemsize * rows
        if at != len(body):
            raise ValueError(f"a body of {len(body)} bytes, {at} expected")
        local = [str(name) for name in head["names"]]
        names = self.names
        remap = np.array(
            [names.setdefault(name, len(names)) for name in local] or [0], dtype=np.int64
        )
        position, code, value = score
        if rows and (int(position.max()) >= n or int(code.max()) >= len(local)):
            raise ValueError("a score row outside its batch")
        if len(names) > len(self.present):  # a scorer first seen in this batch
            self._grow(len(names) - len(self.present))
        if rows:
            where = position.astype(np.int64) + offset
            scorer = remap[code]
            rank = _ranks(position)
            self.present[scorer, where] = True
            self.values[scorer, where] = value
            self.rank[scorer, where] = rank
        for key, text in head["errors"].items():
            self.errors[int(key) + offset] = str(text)
        self.judged += int(head["judged"])
        self.offset += n

    def _add_starts(self, offset: int, lengths: np.ndarray) -> None:
        """Where the ids of a row's samples (their byte ``lengths``) start, after the rest."""
        ends = np.cumsum(lengths, dtype=np.int64) + int(self.starts[offset])
        if self.starts.dtype != np.int64 and int(ends[-1]) >= 2**31:
            self.starts = self.starts.astype(np.int64)
        self.starts[offset + 1 : offset + 1 + len(lengths)] = ends

    def _grow(self, more: int) -> None:
        """Rows for ``more`` scorers (the first ones made at their size, not stacked)."""
        shape = (more, self.total)
        if not len(self.present):
            self.present = np.zeros(shape, dtype=bool)
            self.values = np.full(shape, np.nan)
            self.rank = np.zeros(shape, dtype=np.uint8)
            return
        self.present = np.vstack((self.present, np.zeros(shape, dtype=bool)))
        self.values = np.vstack((self.values, np.full(shape, np.nan)))
        self.rank = np.vstack((self.rank, np.zeros(shape, dtype=np.uint8)))

    def done(self) -> KeptColumns:
        """The run's columns, sorted into dataset order."""
        if self.offset != self.total:
            raise ValueError("fewer samples kept than stored")
        flat, errors = self.flat, self.errors
        blob: bytes | bytearray = self.id_blob
        starts = self.starts
        idx = flat["idx"]
        present, values, rank = self.present, self.values, self.rank
        if len(idx) > 1 and not bool(np.all(idx[1:] > idx[:-1])):
            order = np.argsort(idx, kind="stable")
            if bool(np.any(idx[order][1:] == idx[order][:-1])):
                # two samples at one position: the stored order also goes by sample id, which
                # the database's collation decides
                raise ValueError("two samples share a dataset position")
            new_place = np.empty(self.total, dtype=np.int64)
            new_place[order] = np.arange(self.total, dtype=np.int64)
            for name in list(flat):  # one array copied at a time
                flat[name] = flat[name][order]
            # the ids' bytes in dataset order too, so two runs' compare as bytes
            blob = b"".join(
                blob[start:end]
                for start, end in zip(
                    starts[order].tolist(), starts[order + 1].tolist(), strict=True
                )
            )
            lengths = np.diff(starts)[order]
            np.cumsum(lengths, dtype=starts.dtype, out=starts[1:])
            errors = {int(new_place[p]): text for p, text in errors.items()}
            present, values, rank = present[:, order], values[:, order], rank[:, order]
        # scorer names in order of first appearance over the samples, each sample's scores
        # as written (a few scorers: one pass each)
        all_names = list(self.names)
        firsts = [(p, int(rank[c, p])) for c, p in enumerate(np.argmax(present, axis=1).tolist())]
        seen = sorted(range(len(all_names)), key=firsts.__getitem__)
        if seen != list(range(len(seen))):
            present, values, rank = present[seen], values[seen], rank[seen]
        flags = flat["flags"]
        return KeptColumns(
            ids=KeptIds(blob, starts),
            idx=flat["idx"],
            texts_hash=flat["texts_hash"],
            passed=(flags & _PASSED) != 0,
            weighted=flat["weighted"],
            latency=flat["latency"],
            cost=flat["cost"],
            unpriced=(flags & _UNPRICED) != 0,
            errors=errors,
            judged=self.judged,
            names=[all_names[c] for c in seen],
            present=present,
            values=values,
            rank=rank,
        )


def kept_plain_row(
    run_id: str,
    rows: Sequence[Sequence[Any]],
    columns: Sequence[str],
    scorers: Sequence[str],
    values: Sequence[Sequence[float]],
    fixed: Mapping[str, Any] | None = None,
) -> tuple[str, int, str, int, str, bytes] | None:
    """:func:`kept_row` of a batch of plain samples given as columns: ``rows`` each sample's
    row as the writer binds it (of ``columns``; a column in ``fixed`` holds that value in
    every row), ``values`` each scorer's values by sample (``scorers`` distinct), every score
    without metadata; the samples have no cost, usage, call or error. The same row as
    :func:`kept_row` of those samples as records, its arrays filled a column at a time. Never
    raises."""
    held = fixed or {}

    def column(name: str) -> list[Any]:
        if name in held:
            return [held[name]] * len(rows)
        at = columns.index(name)
        return [row[at] for row in rows]

    try:
        for name in ("sample_id", "idx", "latency_s", *_ROW_COLUMNS):
            if name not in held and name not in columns:
                raise ValueError(f"no column {name}")
        batch = _Batch()
        ids = column("sample_id")
        batch.first_id = ids[0] if ids else None
        batch.ids = [i.encode("utf-8", "surrogatepass") for i in ids]
        arrays = batch.arrays
        arrays["idx"] = column("idx")
        arrays["id_hash"] = [_digest(i) for i in ids]
        arrays["input_hash"] = [_digest(v) for v in column("input")]
        arrays["expected_hash"] = [_digest(v) for v in column("expected")]
        arrays["weighted"] = column("weighted_score")
        arrays["latency"] = column("latency_s")
        arrays["cost"] = [None] * len(rows)
        arrays["flags"] = [_PASSED if passed else 0 for passed in column("verdict_passed")]
        arrays["id_len"] = [len(i) for i in batch.ids]
        width = len(scorers)
        batch.names = {name: code for code, name in enumerate(scorers)}
        if len(batch.names) != width:
            raise ValueError("two scorers share a name")
        batch.positions = [p for p in range(len(rows)) for _ in range(width)]
        batch.codes = list(range(width)) * len(rows)
        batch.values = [v for row in zip(*values, strict=True) for v in row]
        if len(batch.values) != len(rows) * width:
            raise ValueError("a value per sample and scorer")
        return batch.row(run_id)
    except (ValueError, TypeError, OverflowError, KeyError) as exc:
        log.debug("no kept columns for a batch of run %s: %s", run_id, exc)
        return None


def _ranks(position: np.ndarray) -> np.ndarray:
    """Each score row's place among its sample's rows, as written (0 first); at most 255 (a
    sample with more scores than that is read from its rows)."""
    order = np.argsort(position, kind="stable")
    ordered = position[order]
    first = np.flatnonzero(np.concatenate(([True], ordered[1:] != ordered[:-1])))
    sizes = np.diff(np.concatenate((first, [len(ordered)])))
    if int(sizes.max()) > 256:
        raise ValueError("more than 256 scores of one sample")
    rank = np.empty(len(position), dtype=np.int64)
    rank[order] = np.arange(len(position)) - np.repeat(first, sizes)
    return rank
