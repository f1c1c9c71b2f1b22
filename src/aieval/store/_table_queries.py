"""A run's sample table answered in SQL on PostgreSQL: filter, sort, search and page a run of
millions of samples without reading it into memory.

Each page is one query that walks an index in the asked order and stops after the page's rows
(keyset paging: the page token carries the last row's sort key and id, so page 1,000 costs what
page 1 does). A sort by a value puts the samples with one first, ordered by the value, ties
in dataset order, then the samples without one in dataset order: two phases, and the token
says which. The count of matching samples is one more query, kept per run, filter and the
run's last insertion position, so paging through an answer counts it once (a cache, not an
estimate: the count is exact). A page may be asked without its exact count (``exact=False``, as
the viewer's first look asks): a count an index answers (the run, passed, failed) is still
exact, another is the matches among the run's first :data:`COUNT_PREFIX` samples, a lower
bound said to be one (:class:`TableCount`), so no page load reads a whole run; the exact count
is then a request of its own. Text search uses the ``pg_trgm`` index when the store has it
(see :data:`~aieval.store._schema.POSTGRES_TEXT_SEARCH`), else it reads the run's texts, and
says which (``search``).
"""

from __future__ import annotations

import base64
import json
import threading
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, Literal, TypeVar

from aieval.errors import ConfigError
from aieval.store._backend import Backend
from aieval.store._location import StoreLocation
from aieval.store._read_pool import ReadPool, pooled
from aieval.store._schema import PROBLEM_SCORES, SEARCH_TEXT, TRIGRAM_INDEX
from aieval.store._table_reads import TableReads

__all__ = ["COUNT_PREFIX", "TableAsk", "TableCount", "TablePage", "TableQueries"]

T = TypeVar("T")
Outcome = Literal["all", "failed", "passed", "invalid", "gate_failed", "error", "no_error"]
CountKind = Literal["exact", "at_least"]
#: the samples (in dataset order) a page asked without its exact count looks at to bound it:
#: about as many rows as a rare filter's first page reads anyway
COUNT_PREFIX = 10_000
# the outcomes an index counts without reading the samples (``samples_table_passed``)
_INDEXED_OUTCOMES = ("all", "passed", "failed", "invalid")
#: counts, scorer names and metadata keys kept (each for one run at one insertion position)
_KEPT = 512
# texts sort by code point (as the server's index does), an input that is a JSON string by
# its text; no index serves them: a page is a top-N sort of the run's matching samples
_TEXT_SORTS = {
    "error": 's.error COLLATE "C"',
    # a sample without input shows (and sorts as) its prompt's JSON, "null"; without a
    # prediction, as an empty text
    "input": "coalesce(CASE WHEN s.input LIKE '\"%\"' THEN substr(s.input, 2,"
    " length(s.input) - 2) ELSE s.input END, 'null') COLLATE \"C\"",
    "prediction": "coalesce(s.prediction, '') COLLATE \"C\"",
}
_COLUMN_SORTS = {"weighted_score": "s.weighted_score", "passed": "s.passed", **_TEXT_SORTS}
# a score that is NULL or NaN is no value (as the table shows it)
# PostgreSQL's jsonb refuses an escaped NUL: a JSON text holding one is not cast (its metadata
# is not matched by a metadata filter; the page of a sample shows it whole)
_NO_NUL = "s.metadata NOT LIKE '%\\\\u0000%'"
_VALUED = "k.value IS NOT NULL AND k.value <> 'NaN'"
_SCORED = (
    "EXISTS (SELECT 1 FROM scores k WHERE k.run_id = s.run_id AND k.sample_id = s.sample_id"
    f" AND k.scorer = ? AND {_VALUED}{{range}})"
)
# the run's samples with a failed score or one resting on a malformed judge verdict: one
# lookup of the run in the small partial index ``scores_table_problem`` (its predicate is the
# first condition, to the letter), then the exact test (an earlier store marked a malformed
# verdict in the score's metadata)
_PROBLEMS = (
    "s.sample_id IN (SELECT e.sample_id FROM scores e WHERE e.run_id = ? AND"
    f" {PROBLEM_SCORES} AND (e.error <> '' OR e.unreadable <> '' OR (e.unreadable IS NULL"
    " AND e.metadata LIKE '{%' AND e.metadata NOT LIKE '%\\\\u0000%'"
    " AND jsonb_typeof(e.metadata::jsonb -> 'unreadable') = 'string'"
    " AND e.metadata::jsonb ->> 'unreadable' <> '')))"
)
_ERRORED = f"(coalesce(s.error, '') <> '' OR {_PROBLEMS})"
# JSON the store wrote starts with "{"; a text stored escaped (a NUL in it) is not cast
_GATE_FAILED = (
    "(s.verdict LIKE '{%' AND s.verdict NOT LIKE '%\\\\u0000%'"
    ' AND s.verdict::jsonb @> \'{"gates": [{"passed": false}]}\')'
)
#: An invalid sample (a conversation whose simulated user failed fidelity): its verdict is
#: stored, its pass flag not (``_verdict_columns.verdict_columns``).
_INVALID = "(s.passed IS NULL AND s.verdict_passed IS NULL AND s.verdict_plain IS NOT NULL)"
_OUTCOMES = {
    "all": "",
    "passed": "s.passed = 1",
    # an invalid sample (a verdict stored without its pass flag) neither passed nor failed
    "failed": f"(s.passed IS DISTINCT FROM 1 AND NOT {_INVALID})",
    "invalid": _INVALID,
    "gate_failed": _GATE_FAILED,
    "error": _ERRORED,
    "no_error": f"NOT {_ERRORED}",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class TableAsk:
    """What the table asks for (the viewer's ``TableQuery``, checked before it gets here)."""

    q: str = ""
    outcome: Outcome = "all"
    scorer: str | None = None
    min: float | None = None
    max: float | None = None
    meta: str | None = None
    sort: str = "index"
    order: Literal["asc", "desc"] = "asc"


@dataclass(frozen=True, slots=True)
class TableCount:
    """How many samples match: exactly ``value`` (``kind="exact"``), or at least ``value``
    (``"at_least"``: counted among the run's first :data:`COUNT_PREFIX` samples, and the
    rows the page itself found). Never a guess shown as exact."""

    value: int
    kind: CountKind

    @property
    def exact(self) -> bool:
        return self.kind == "exact"


@dataclass(frozen=True, slots=True, kw_only=True)
class TablePage:
    """One page: the ids in order, how many samples match (``count``; ``total`` is its value
    when exact, else None) and the run holds, the token of the next page (None: this is the
    last), and how a text search ran (``trigram``: the index; ``scan``: the run's texts read,
    the store lacking ``pg_trgm``; None: no search)."""

    ids: list[str]
    count: TableCount
    total: int | None
    run_total: int
    next: str | None
    search: Literal["trigram", "scan"] | None


class TableQueries:
    """The sample-table queries of the PostgreSQL store at ``location``, on pooled
    connections; counts, scorer names and metadata keys kept per run and insertion position."""

    def __init__(self, location: StoreLocation, pool: ReadPool | None = None) -> None:
        self.location = location
        self.pool = pool
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[Any, ...], Any] = OrderedDict()
        self._trigram: bool | None = None

    def _read(self, action: Callable[[Backend], T]) -> T:
        return pooled(self.location, action, self.pool)

    def _cached(self, key: tuple[Any, ...], make: Callable[[], T]) -> T:
        with self._lock:
            if key in self._kept:
                self._kept.move_to_end(key)
                found: T = self._kept[key]
                return found
        value = make()
        with self._lock:
            self._kept[key] = value
            while len(self._kept) > _KEPT:
                self._kept.popitem(last=False)
        return value

    def _peek(self, key: tuple[Any, ...]) -> Any:
        """What is kept under ``key``, or None (nothing asked)."""
        with self._lock:
            return self._kept.get(key)

    def last_position(self, run_id: str) -> int:
        """The run's last insertion position (``samples_seq``): what the kept answers are
        keyed by, so a sample added makes them be asked again."""
        row = self._read(
            lambda db: db.one("SELECT MAX(rowid) FROM samples WHERE run_id = ?", (run_id,))
        )
        return 0 if row is None or row[0] is None else int(row[0])

    def answers(self, run_id: str) -> bool:
        """Whether SQL answers the run's table: every sample has a stored verdict (one stored
        without, before verdicts were, has its verdict derived from the full record: the
        server's in-memory index does that)."""
        position = self.last_position(run_id)

        def read() -> bool:
            row = self._read(
                lambda db: db.one(
                    "SELECT 1 FROM samples WHERE run_id = ? AND verdict IS NULL LIMIT 1",
                    (run_id,),
                )
            )
            return row is None

        return bool(self._cached(("answers", run_id, position), read))

    def pass_counts(self, run_id: str) -> tuple[int, int]:
        """``(samples, passed)`` of the run, kept per insertion position (the runs list asks
        it of every run it shows): an index-only count on ``samples_table_passed``."""
        position = self.last_position(run_id)

        def read() -> tuple[int, int]:
            row = self._read(
                lambda db: db.one(
                    "SELECT COUNT(*), COUNT(*) FILTER (WHERE passed = 1) FROM samples"
                    " WHERE run_id = ?",
                    (run_id,),
                )
            )
            return (0, 0) if row is None else (int(row[0]), int(row[1]))

        found: tuple[int, int] = self._cached(("passed", run_id, position), read)
        return found

    def trigram(self) -> bool:
        """Whether the store has the ``pg_trgm`` search index (asked once)."""
        if self._trigram is None:
            row = self._read(
                lambda db: db.one("SELECT to_regclass(?) IS NOT NULL", (TRIGRAM_INDEX,))
            )
            self._trigram = bool(row and row[0])
        return self._trigram

    def metadata_keys(self, run_id: str, first: int, most: int) -> list[str]:
        """The metadata keys of the run's first ``first`` samples in dataset order (sorted, at
        most ``most``), kept per insertion position."""
        position = self.last_position(run_id)
        return list(
            self._cached(
                ("keys", run_id, position, first, most),
                lambda: TableReads(self.location, self.pool).metadata_keys(run_id, first, most),
            )
        )

    def scorer_names(self, run_id: str) -> list[str]:
        """The scorers that scored any sample of the run: a skip scan of the scores index,
        kept per insertion position."""
        position = self.last_position(run_id)

        def read() -> list[str]:
            rows = self._read(
                lambda db: db.query(
                    "WITH RECURSIVE t(name) AS (SELECT MIN(scorer) FROM scores WHERE run_id = ?"
                    " UNION ALL SELECT (SELECT MIN(scorer) FROM scores WHERE run_id = ?"
                    " AND scorer > t.name) FROM t WHERE t.name IS NOT NULL)"
                    " SELECT name FROM t WHERE name IS NOT NULL",
                    (run_id, run_id),
                )
            )
            return [str(row[0]) for row in rows]

        return list(self._cached(("scorers", run_id, position), read))

    def count(self, run_id: str, position: int, ask: TableAsk) -> int:
        """How many samples of the run match ``ask`` (kept: counted once per position)."""
        where, args = _where(ask, run_id)
        key = _count_key(run_id, position, where, args)

        def read() -> int:
            row = self._read(
                lambda db: db.one(
                    f"SELECT COUNT(*) FROM samples s WHERE s.run_id = ?{where}", (run_id, *args)
                )
            )
            return 0 if row is None else int(row[0])

        return int(self._cached(key, read))

    def bounded_count(
        self, run_id: str, position: int, ask: TableAsk, run_total: int, *, seen: int = 0
    ) -> TableCount:
        """How many samples of the run match ``ask``, without reading the whole run: exact when
        kept, when an index counts it or the run is short; else at least the matches among the
        run's first :data:`COUNT_PREFIX` samples in dataset order (``seen``: matches the caller
        found itself, also a lower bound)."""
        where, args = _where(ask, run_id)
        kept = self._peek(_count_key(run_id, position, where, args))
        if kept is not None:
            return TableCount(int(kept), "exact")
        if run_total <= COUNT_PREFIX or (
            not ask.q and ask.meta is None and ask.scorer is None
            and ask.outcome in _INDEXED_OUTCOMES
        ):  # fmt: skip
            return TableCount(self.count(run_id, position, ask), "exact")
        # an index walk of the run's first samples, the filters on top (in a WHERE, where
        # the planner probes the scores by index: in a select list, it may hash them all)
        sql = (
            "SELECT COUNT(*) FROM (SELECT * FROM samples s WHERE s.run_id = ?"
            f" ORDER BY s.idx, s.sample_id LIMIT ?) s WHERE s.run_id = ?{where}"
        )

        def read() -> int:
            row = self._read(lambda db: db.one(sql, (run_id, COUNT_PREFIX, run_id, *args)))
            return 0 if row is None else int(row[0])

        found = int(self._cached(("prefix", run_id, position, where, tuple(args)), read))
        return TableCount(max(found, seen), "at_least")

    def page(
        self,
        run_id: str,
        ask: TableAsk,
        *,
        limit: int,
        offset: int = 0,
        after: str | None = None,
        exact: bool = True,
    ) -> TablePage:
        """One page of the samples matching ``ask``: after the token ``after`` (keyset), else
        from ``offset`` (which PostgreSQL walks to: for the first pages, or a jump). Its count
        is exact unless ``exact`` is False (see :meth:`bounded_count`): the last page asked by
        offset knows it from its own rows."""
        position = self.last_position(run_id)
        phase, key, last = _token(after, ask) if after else (0, None, None)
        # (phase, sort value, idx, id), one more than the page
        rows: list[tuple[int, Any, int, str]] = []
        skip = 0 if after else offset
        while len(rows) <= limit and phase < _phases(ask):
            want = limit + 1 - len(rows)
            found = self._read(
                partial(
                    _page_rows, run_id=run_id, ask=ask, phase=phase, key=key, last=last,
                    limit=want, offset=skip,
                )
            )  # fmt: skip
            rows += [(phase, *row) for row in found]
            if len(rows) <= limit and skip and phase == 0 and _phases(ask) == 2:
                # an offset past the valued samples goes on into the unvalued ones
                skip = max(0, skip - self._valued(run_id, position, ask))
            phase, key, last = phase + 1, None, None
        token = None
        if len(rows) > limit:  # the extra row says there is a next page
            token = _encode(ask, *rows[limit - 1])
        run_total = self.count(run_id, position, TableAsk())
        if exact:
            count = TableCount(self.count(run_id, position, ask), "exact")
        elif token is None and not after and (rows or not offset):
            # the last page, asked by offset: every match is before or on it
            count = TableCount(offset + len(rows), "exact")
        else:
            # the rows found are matches; an offset too when rows were found past it
            seen = len(rows) + (offset if rows and not after else 0)
            count = self.bounded_count(run_id, position, ask, run_total, seen=seen)
        return TablePage(
            ids=[row[3] for row in rows[:limit]],
            count=count,
            total=count.value if count.exact else None,
            run_total=run_total,
            next=token,
            search=None if not ask.q else ("trigram" if self.trigram() else "scan"),
        )

    def _valued(self, run_id: str, position: int, ask: TableAsk) -> int:
        """How many matching samples have a value of the sort key (the first phase)."""
        sql, args = _valued_where(ask)
        where, more = _where(ask, run_id)
        key = ("valued", run_id, position, sql, tuple(args), where, tuple(more))

        def read() -> int:
            row = self._read(
                lambda db: db.one(
                    f"SELECT COUNT(*) FROM samples s WHERE s.run_id = ?{where} AND {sql}",
                    (run_id, *more, *args),
                )
            )
            return 0 if row is None else int(row[0])

        return int(self._cached(key, read))


def _count_key(run_id: str, position: int, where: str, args: list[Any]) -> tuple[Any, ...]:
    return ("count", run_id, position, where, tuple(args))


_KEY_TYPES: dict[str, type | tuple[type, ...]] = {
    "none": type(None),
    "int": int,
    "number": (int, float),
    "text": str,
}


def _kind(ask: TableAsk, phase: int) -> str:
    """What a token's sort value is: the dataset index, a number, a text or none (by id)."""
    if ask.sort in ("id", "index") or phase == 1:
        return "none"
    if ask.sort == "passed":
        return "int"
    return "text" if ask.sort in _TEXT_SORTS else "number"


def _phases(ask: TableAsk) -> int:
    return 1 if ask.sort in ("index", "id") else 2


def _like(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return f"%{escaped}%"


def _spellings(needle: str) -> list[str]:
    """The needle as the store may hold it: as typed (a plain text, or inside a JSON input
    whose quotes were stripped), JSON-escaped (a quote or newline in a JSON input), and
    JSON-escaped in ASCII (a text with a NUL or a lone surrogate is stored as the marker and its
    ASCII JSON literal: ``é`` is ``\\u00e9`` there)."""
    forms = [needle]
    for ascii_only in (False, True):
        form = json.dumps(needle, ensure_ascii=ascii_only)[1:-1]
        if form not in forms:
            forms.append(form)
    return forms


def _where(ask: TableAsk, run_id: str) -> tuple[str, list[Any]]:
    """The filters as `` AND ...`` clauses on ``samples s``, and their arguments."""
    clauses: list[str] = []
    args: list[Any] = []
    if _OUTCOMES[ask.outcome]:
        clauses.append(_OUTCOMES[ask.outcome])
        args += [run_id] * _OUTCOMES[ask.outcome].count("e.run_id = ?")
    if ask.q:
        # the index's expression, to the letter: the planner matches it to use the index; once
        # per spelling the needle may be stored in (see _spellings)
        forms = _spellings(ask.q)
        clauses.append("(" + " OR ".join(f"{SEARCH_TEXT} ILIKE ?" for _ in forms) + ")")
        args += [_like(form) for form in forms]
    if ask.scorer is not None:
        bounds = ""
        if ask.min is not None:
            bounds += " AND k.value >= ?"
        if ask.max is not None:
            bounds += " AND k.value <= ?"
        clauses.append(_SCORED.replace("{range}", bounds))
        args.append(ask.scorer)
        args += [b for b in (ask.min, ask.max) if b is not None]
    if ask.meta is not None:
        key, eq, value = ask.meta.partition("=")
        if eq:
            clauses.append(f"(s.metadata LIKE '{{%' AND {_NO_NUL} AND s.metadata::jsonb ->> ? = ?)")
            args += [key, value]
        else:
            clauses.append(
                f"(s.metadata LIKE '{{%' AND {_NO_NUL} AND jsonb_exists(s.metadata::jsonb, ?))"
            )
            args.append(key)
    return "".join(f" AND {c}" for c in clauses), args


def _valued_where(ask: TableAsk) -> tuple[str, list[Any]]:
    """The clause keeping the samples that have a value of the sort key."""
    if ask.sort.startswith("score:"):
        return _SCORED.replace("{range}", ""), [ask.sort.removeprefix("score:")]
    column = _COLUMN_SORTS[ask.sort]
    if ask.sort == "weighted_score":
        return f"({column} IS NOT NULL AND {column} <> 'NaN')", []
    return f"{column} IS NOT NULL", []


def _page_rows(
    db: Backend,
    *,
    run_id: str,
    ask: TableAsk,
    phase: int,
    key: Any,
    last: tuple[int, str] | None,
    limit: int,
    offset: int,
) -> list[tuple[Any, int, str]]:
    """Up to ``limit`` ``(sort value, idx, id)`` of one phase, after ``(key, *last)`` when
    given. Ties go in dataset order (idx, then id) in either direction, as on SQLite."""
    where, args = _where(ask, run_id)
    down = ask.order == "desc"
    way = " DESC" if down else ""
    seek_args: list[Any] = []
    if ask.sort == "id":
        value, source = "NULL", "samples s"
        seek = f" AND s.sample_id {'<' if down else '>'} ?" if last else ""
        seek_args = [last[1]] if last else []
        order = f"s.sample_id{way}"
    elif ask.sort == "index" or phase == 1:
        # dataset order; the samples without a value of a sort key come last in it
        value, source = "NULL", "samples s"
        if phase == 1:
            valued, more = _valued_where(ask)
            where += f" AND NOT {valued}"
            args += more
        if phase == 0 and down:
            seek = " AND s.idx <= ? AND (s.idx < ? OR s.sample_id > ?)" if last else ""
            seek_args = [last[0], last[0], last[1]] if last else []
            order = "s.idx DESC, s.sample_id"
        else:
            seek = " AND (s.idx, s.sample_id) > (?, ?)" if last else ""
            seek_args = list(last) if last else []
            order = "s.idx, s.sample_id"
    else:
        if ask.sort.startswith("score:"):
            value = "k.value"
            source = "scores k JOIN samples s ON s.run_id = k.run_id AND s.sample_id = k.sample_id"
            where = f" AND k.scorer = ? AND {_VALUED}{where}"
            args = [ask.sort.removeprefix("score:"), *args]
        else:
            value, source = _COLUMN_SORTS[ask.sort], "samples s"
            valued, _ = _valued_where(ask)
            where += f" AND {valued}"
        cmp = "<" if down else ">"
        seek = (
            f" AND {value} {cmp}= ? AND ({value} {cmp} ? OR (s.idx, s.sample_id) > (?, ?))"
            if last
            else ""
        )
        seek_args = [key, key, *last] if last else []
        order = f"{value}{way}, s.idx, s.sample_id"
    sql = (
        f"SELECT {value}, s.idx, s.sample_id FROM {source} WHERE s.run_id = ?{where}{seek}"
        f" ORDER BY {order} LIMIT ?"
    )
    all_args = [run_id, *args, *seek_args, limit]
    if offset:
        sql += " OFFSET ?"
        all_args.append(offset)
    return [(row[0], int(row[1]), str(row[2])) for row in db.query(sql, all_args)]


def _encode(ask: TableAsk, phase: int, value: Any, idx: int, sample_id: str) -> str:
    data = json.dumps([ask.sort, ask.order, phase, value, idx, sample_id], ensure_ascii=False)
    return base64.urlsafe_b64encode(data.encode()).decode().rstrip("=")


def _token(token: str, ask: TableAsk) -> tuple[int, Any, tuple[int, str]]:
    """The phase, sort value and ``(idx, id)`` a page token carries; :class:`ConfigError`
    when it is not one this table gave for this sort (a token is the client's data: checked,
    never trusted)."""
    try:
        raw = base64.urlsafe_b64decode(token + "=" * (-len(token) % 4))
        sort, order, phase, value, idx, sample_id = json.loads(raw)
    except (ValueError, TypeError):
        raise ConfigError("after: not a page token of this table; ask for the first page") from None
    if (
        (sort, order) != (ask.sort, ask.order)
        or phase not in range(_phases(ask))
        or not isinstance(sample_id, str)
        or not isinstance(idx, int)
        or isinstance(idx, bool)
        or isinstance(value, bool)
        or not isinstance(value, _KEY_TYPES[_kind(ask, phase)])
        or not -(2**63) <= idx < 2**63
    ):
        raise ConfigError(
            "after: this page token is of another sort or not one this table gave; ask for the"
            " first page"
        )
    return phase, value, (idx, sample_id)
