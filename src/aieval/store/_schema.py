"""The SQLite schema of the run store."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from aieval.errors import StoreError
from aieval.store._encoding import loads
from aieval.store._rollup_schema import ROLLUP_SCHEMA

__all__ = [
    "CALL_COLUMNS",
    "COLUMNS_ADDED",
    "FILLS",
    "GRADED_COLUMNS",
    "POSTGRES_TABLE_INDEXES",
    "POSTGRES_TEXT_SEARCH",
    "PROBLEM_SCORES",
    "RUN_COLUMNS_ADDED",
    "SAMPLE_COLUMNS",
    "SCHEMA",
    "SCHEMA_VERSION",
    "SEARCH_TEXT",
    "TRIGRAM_INDEX",
    "VALUE_COLUMNS",
    "VERDICT_COLUMNS",
    "config_columns",
    "fill_config_columns",
    "table_ddl",
    "table_names",
    "up_to_date",
]

#: 2: a run's owner process (``pid``, ``host``, ``heartbeat_at``); 3: each sample's ``verdict``
#: and each score's ``unreadable`` (earlier rows keep NULL there and are read through
#: :func:`aieval.core._stored.adapt_record`); 4: each sample's verdict in typed columns
#: (``VERDICT_COLUMNS``, NULL in rows stored before, which are read from ``verdict``); 5: each
#: run's ``ordered_at`` (the time runs are ordered by, which this store vouches for) and
#: ``pushed_by`` (the upload token that created it on a server), NULL in runs stored before;
#: 6: the OTLP export requests a server received (``received_requests``, ``received_traces``),
#: kept in a file beside the store before (imported by :mod:`aieval.store._received`); 7: each
#: run's ``git_branch`` and ``dataset_limit`` beside its config (read from the config of runs
#: stored before, when migrated: see :func:`config_columns`), so runs are found by branch and a
#: baseline made with ``--limit`` is told apart in SQL; 8: each sample's ``grade``, ``epoch``,
#: ``verdict_values`` (1: its gates, criteria and missing criteria are rows of
#: ``sample_values``) and ``promotion_score`` (the weighted score a promotion decision uses), so
#: a run's sums are computed in SQL (``_run_sums``, ``_pair_sums``); rows stored before keep
#: NULL there, and their run is read one record at a time; 9: on PostgreSQL, the indexes the
#: viewer's sample table is answered by (:data:`POSTGRES_TABLE_INDEXES`, and
#: :data:`POSTGRES_TEXT_SEARCH` where ``pg_trgm`` may be created), built when an older store is
#: opened; 10: a run's rollups (``run_totals``, ``run_rollups``: :mod:`aieval.store._rollups`),
#: kept as its samples are written; a run stored before has none, and is summed by a scan the
#: first time it is reported (which stores them); 11: rollups built once when a run ends
#: (``finish_run``), not per batch, with the order statistics its quantiles read
#: (``run_order_stats``) and the slices a report asked for (``run_slices``), kept on first
#: use; and a run's columns kept as its batches are written (``run_columns``:
#: :mod:`aieval.store._kept_columns`), so two runs are compared from arrays (a run stored
#: before has none and is compared from its rows); 12: the review queue of a judge
#: (``review_queues``, ``review_items``, ``review_slots``), reviewers' labels
#: (``review_labels``: :mod:`aieval.store._reviews`) and judge certificates
#: (``judge_certificates``: :mod:`aieval.store._certificates`), new tables an older store gains
#: empty; 13: online scoring (``online_rules``, ``online_traces``, ``online_work``,
#: ``online_spend``, ``online_windows``, ``online_alerts``, ``online_backfills``: docs/online.md),
#: new tables an older store gains empty.
SCHEMA_VERSION = 13

#: Columns added to ``runs`` after version 1, added in place to older stores when opened.
RUN_COLUMNS_ADDED = {
    "pid": "INTEGER",
    "host": "TEXT",
    "heartbeat_at": "REAL",
    "ordered_at": "REAL",
    "pushed_by": "TEXT",
    "git_branch": "TEXT",
    "dataset_limit": "INTEGER",
}

#: Every column added after version 1, by table: added in place to older stores when opened.
COLUMNS_ADDED = {
    "runs": RUN_COLUMNS_ADDED,
    "samples": {
        "verdict": "TEXT",
        "weighted_score": "REAL",
        "verdict_passed": "INTEGER",
        "verdict_plain": "INTEGER",
        "grade": "TEXT",
        "epoch": "INTEGER",
        "verdict_values": "INTEGER",
        "promotion_score": "REAL",
    },
    "scores": {"unreadable": "TEXT"},
    "online_alerts": {"next_attempt_at": "REAL", "abandoned_at": "REAL"},
}

#: Run once the added columns are in place, when a store is migrated; each ``?`` is the time of
#: the migration. A run stored before version 5 is ordered by its ``created_at``, but never
#: later than now (it was stored by now): a time set far ahead does not keep it the newest.
FILLS = (
    "UPDATE runs SET ordered_at = CASE WHEN created_at < ? THEN created_at ELSE ? END"
    " WHERE ordered_at IS NULL",
)

#: The columns of ``samples`` and ``model_calls`` as the store writes and reads them.
SAMPLE_COLUMNS = (
    "run_id, sample_id, idx, input, expected, prediction, metadata, error, passed, latency_s, "
    "input_tokens, output_tokens, cost, retries, cached, extra, created_at, verdict"
)
#: The typed columns of a sample's verdict, beside its JSON (see ``_verdict_columns``).
VERDICT_COLUMNS = ("weighted_score", "verdict_passed", "verdict_plain")
#: The typed columns of a sample's grade and epoch, beside them (see ``_verdict_columns``).
GRADED_COLUMNS = ("grade", "epoch", "verdict_values", "promotion_score")
#: The columns of ``sample_values``: a sample's gates, criteria and missing criteria.
VALUE_COLUMNS = ("run_id", "sample_id", "ord", "kind", "name", "value", "floor", "flag")
CALL_COLUMNS = (
    "run_id, sample_id, purpose, provider, model, latency_s, input_tokens, output_tokens, cost, "
    "retries, cached, error"
)

#: What a sample and each of its model calls cost, the same columns in both tables.
_USAGE_COLUMNS = """\
    latency_s     REAL,
    input_tokens  INTEGER,
    output_tokens INTEGER,
    cost          REAL,
    retries       INTEGER NOT NULL DEFAULT 0,
    cached        INTEGER NOT NULL DEFAULT 0,
"""

SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    id            TEXT PRIMARY KEY,
    name          TEXT NOT NULL,
    status        TEXT NOT NULL,            -- running | completed | failed | interrupted
    model         TEXT,
    provider      TEXT,
    dataset       TEXT,
    dataset_hash  TEXT,
    n_examples    INTEGER,
    git_sha       TEXT,
    config        TEXT NOT NULL DEFAULT '{}',   -- JSON, secrets removed
    metrics       TEXT,                         -- JSON summary, written when the run ends
    error         TEXT,
    created_at    REAL NOT NULL,
    started_at    REAL,
    finished_at   REAL,
    pid           INTEGER,                      -- the process running it (while running)
    host          TEXT,                         -- ... and its host
    heartbeat_at  REAL,                         -- last sign of life of that process
    ordered_at    REAL,                         -- created_at, but never after this store first
                                                -- wrote the run: "newest" (the baseline) by it
                                                -- (NULL before v5: read as created_at)
    pushed_by     TEXT,                         -- the upload token that created it on a server
    git_branch    TEXT,                         -- config's git_branch (found by it in SQL)
    dataset_limit INTEGER                       -- config's dataset.limit: made with --limit N
);
CREATE INDEX IF NOT EXISTS runs_name_created ON runs (name, created_at);
CREATE TABLE IF NOT EXISTS samples (
    run_id        TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    sample_id     TEXT NOT NULL,
    idx           INTEGER NOT NULL,
    input         TEXT,                         -- JSON
    expected      TEXT,                         -- JSON
    prediction    TEXT,
    metadata      TEXT,                         -- JSON
    error         TEXT,                         -- target failure, if any
    passed        INTEGER,
{usage}    extra         TEXT,                         -- JSON: workflow run, ...
    created_at    REAL NOT NULL,
    verdict       TEXT,                         -- JSON: the grader's Verdict (NULL before v3)
    weighted_score REAL,                        -- the verdict's weighted score (NULL: none,
                                                -- or stored before v4)
    verdict_passed INTEGER,                     -- the verdict's pass flag (NULL before v4)
    verdict_plain INTEGER,                      -- 1: no grade, gates, criteria or workflow
    grade         TEXT,                         -- the verdict's letter grade, if any
    epoch         INTEGER,                      -- the repeat (1..N) in a run of epochs
    verdict_values INTEGER,                     -- 1: its gates and criteria are in
                                                -- sample_values (NULL before v8)
    promotion_score REAL,                       -- the weighted score with each criterion's
                                                -- adjusted value (what promotion compares)
    PRIMARY KEY (run_id, sample_id)
);
-- a run's samples in insertion order: its last one found at once (what changed since a look)
CREATE INDEX IF NOT EXISTS samples_run ON samples (run_id);
CREATE TABLE IF NOT EXISTS scores (
    run_id    TEXT NOT NULL,
    sample_id TEXT NOT NULL,
    scorer    TEXT NOT NULL,
    value     REAL,                             -- NULL: not scored (see error)
    raw       TEXT,                             -- JSON
    reason    TEXT,
    error     TEXT,
    metadata  TEXT,                             -- JSON (judge verdicts, parse failures, ...)
    unreadable TEXT,                            -- why a judge's verdict could not be read
    PRIMARY KEY (run_id, sample_id, scorer),
    FOREIGN KEY (run_id, sample_id) REFERENCES samples (run_id, sample_id) ON DELETE CASCADE
);
CREATE TABLE IF NOT EXISTS model_calls (
    id            INTEGER PRIMARY KEY,
    run_id        TEXT NOT NULL,
    sample_id     TEXT NOT NULL,
    purpose       TEXT NOT NULL,                -- target | judge:<scorer name>
    provider      TEXT,
    model         TEXT,
{usage}    error         TEXT,
    FOREIGN KEY (run_id, sample_id) REFERENCES samples (run_id, sample_id) ON DELETE CASCADE
);
CREATE INDEX IF NOT EXISTS model_calls_sample ON model_calls (run_id, sample_id);
-- a sample's hard gates (kind 'gate': flag = passed), graded criteria (kind 'criterion': value
-- = normalized, floor, flag = floor passed) and missing criteria (kind 'missing': value = how
-- many times the evaluation listed it), as the verdict has them: summed in SQL
CREATE TABLE IF NOT EXISTS sample_values (
    run_id    TEXT NOT NULL,
    sample_id TEXT NOT NULL,
    ord       INTEGER NOT NULL,                 -- its place among the sample's rows
    kind      TEXT NOT NULL,                    -- gate | criterion | missing
    name      TEXT NOT NULL,
    value     REAL,
    floor     REAL,
    flag      INTEGER,
    PRIMARY KEY (run_id, kind, name, sample_id),
    FOREIGN KEY (run_id, sample_id) REFERENCES samples (run_id, sample_id) ON DELETE CASCADE
);
{rollups}CREATE TABLE IF NOT EXISTS judge_calibrations (
    id             INTEGER PRIMARY KEY,
    judge          TEXT NOT NULL,               -- the judge's scorer name
    model          TEXT,                        -- judge model (as configured)
    model_version  TEXT,                        -- as the provider reported it
    prompt_version TEXT,
    run_id         TEXT,
    labels         TEXT,                        -- the human label file
    n              INTEGER NOT NULL,
    metrics        TEXT NOT NULL,               -- JSON: metric -> {estimate, low, high}
    created_at     REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS judge_calibrations_judge ON judge_calibrations (judge, created_at);
-- a judge certified against its reviewers' labels (see aieval.judges.certify)
CREATE TABLE IF NOT EXISTS judge_certificates (
    id           INTEGER PRIMARY KEY,
    judge        TEXT NOT NULL,                 -- the judge's digest (JudgeKey.digest)
    label        TEXT NOT NULL,                 -- its display name, scorer@model
    n            INTEGER NOT NULL,              -- labelled items it was certified on
    kappa        REAL NOT NULL,                 -- judge-human kappa
    bound        REAL NOT NULL,                 -- its 95% lower bound
    floor        REAL NOT NULL,                 -- the judge_kappa_floor it met
    certified_at REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS judge_certificates_judge ON judge_certificates (judge, certified_at);
-- the OTLP export requests a server received, each body as it arrived (protobuf or JSON)
CREATE TABLE IF NOT EXISTS received_requests (
    id        INTEGER PRIMARY KEY,
    received  REAL NOT NULL,
    format    TEXT NOT NULL,                    -- protobuf | json
    body      BLOB NOT NULL
);
-- ... and the traces each one holds: a trace's requests found by its id
CREATE TABLE IF NOT EXISTS received_traces (
    trace_id   TEXT NOT NULL,
    request_id INTEGER NOT NULL REFERENCES received_requests (id) ON DELETE CASCADE,
    spans      INTEGER NOT NULL,
    PRIMARY KEY (trace_id, request_id)
);
-- a run's columns kept as its batches are written (see aieval.store._kept_columns)
CREATE TABLE IF NOT EXISTS run_columns (
    run_id    TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    first_idx INTEGER NOT NULL,                 -- the batch's least dataset position
    first_id  TEXT NOT NULL,                    -- its first sample
    n         INTEGER NOT NULL,                 -- its samples
    head      TEXT NOT NULL,                    -- JSON: format, scorer names, errors, rows
    body      BLOB NOT NULL,                    -- little-endian arrays
    PRIMARY KEY (run_id, first_idx, first_id)   -- read in dataset order of batches
);
-- the caches beside the runs: created with the store, so a role with only data rights uses them
CREATE TABLE IF NOT EXISTS response_cache (
    key TEXT PRIMARY KEY,
    provider TEXT NOT NULL,
    model TEXT NOT NULL,
    response TEXT NOT NULL,
    created_at REAL NOT NULL
);
-- a review queue: the items of some runs chosen for human labels of one judge
CREATE TABLE IF NOT EXISTS review_queues (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    judge      TEXT NOT NULL,                   -- the JudgeKey's digest
    scorer     TEXT NOT NULL,                   -- ... its scorer name
    identity   TEXT NOT NULL,                   -- JSON: ... and its identity, [[key, value]]
    runs       TEXT NOT NULL,                   -- JSON: the run ids it was built from
    selection  TEXT NOT NULL,                   -- JSON: how its items were chosen
    reviewers  INTEGER NOT NULL,                -- labels wanted per item
    created_by TEXT,
    created_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS review_items (
    queue_id   TEXT NOT NULL REFERENCES review_queues (id) ON DELETE CASCADE,
    ord        INTEGER NOT NULL,                -- its place in the queue (served in this order)
    run_id     TEXT NOT NULL,
    sample_id  TEXT NOT NULL,
    stratum    TEXT NOT NULL,                   -- its stratum: the judge-score bin it came from
    weight     REAL,                            -- design weight: stratum size / picks (NULL: equal)
    PRIMARY KEY (queue_id, ord),
    UNIQUE (queue_id, run_id, sample_id)
);
-- an item's places for reviewers (1..reviewers): held by a reservation until expires_at, or
-- for good once its reviewer saved a label (done = 1); the keys make taking one atomic
CREATE TABLE IF NOT EXISTS review_slots (
    queue_id   TEXT NOT NULL,
    ord        INTEGER NOT NULL,
    slot       INTEGER NOT NULL,
    reviewer   TEXT NOT NULL,
    expires_at REAL NOT NULL,
    done       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (queue_id, ord, slot),
    UNIQUE (queue_id, ord, reviewer),
    FOREIGN KEY (queue_id, ord) REFERENCES review_items (queue_id, ord) ON DELETE CASCADE
);
-- reviewers' labels of a judge's samples: one per reviewer per sample and judge
CREATE TABLE IF NOT EXISTS review_labels (
    judge       TEXT NOT NULL,                  -- the JudgeKey's digest
    run_id      TEXT NOT NULL,
    sample_id   TEXT NOT NULL,
    reviewer    TEXT NOT NULL,
    passed      INTEGER,                        -- 1 | 0 | NULL (a score instead)
    score       REAL,                           -- 0..1 | NULL
    note        TEXT NOT NULL,
    labelled_at REAL NOT NULL,
    queue_id    TEXT,                           -- the queue it was saved in (NULL: imported)
    PRIMARY KEY (judge, run_id, sample_id, reviewer)
);
CREATE INDEX IF NOT EXISTS review_labels_time ON review_labels (judge, labelled_at);
-- online scoring (docs/online.md). A rule: set by the server's command line (source 'file')
-- or through its API with the server's own token (source 'api'); never by a trace or an upload
CREATE TABLE IF NOT EXISTS online_rules (
    name       TEXT PRIMARY KEY,
    spec       TEXT NOT NULL,                   -- JSON: the rule (aieval.online.OnlineRule)
    source     TEXT NOT NULL,                   -- 'file' | 'api'
    paused     INTEGER NOT NULL DEFAULT 0,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
-- a received trace as online scoring took it in (from the received requests, in id order):
-- it is examined for each rule once settled for that rule, and again when spans arrive later
-- (recheck_at: when next; NULL: examined for every rule since its last request)
CREATE TABLE IF NOT EXISTS online_traces (
    trace_id       TEXT PRIMARY KEY,
    examined_at    REAL NOT NULL,               -- when last examined (0: not yet)
    first_received REAL NOT NULL DEFAULT 0,     -- its first and last export requests' arrival
    last_received  REAL NOT NULL DEFAULT 0,
    last_request   INTEGER NOT NULL DEFAULT 0,  -- its newest received request taken in
    requests       INTEGER NOT NULL DEFAULT 0,  -- its received requests taken in
    recheck_at     REAL
);
CREATE INDEX IF NOT EXISTS online_traces_recheck ON online_traces (recheck_at);
CREATE INDEX IF NOT EXISTS online_traces_request ON online_traces (last_request);
CREATE INDEX IF NOT EXISTS received_traces_request ON received_traces (request_id);
-- one matched trace of a rule: pending, claimed (until claimed_until, by claimed_by), then
-- scored (its sample in run_id) or skipped with one typed reason
CREATE TABLE IF NOT EXISTS online_work (
    rule          TEXT NOT NULL,
    trace_id      TEXT NOT NULL,
    window_start  REAL NOT NULL,                -- the rule's window its last span arrived in
    state         TEXT NOT NULL,                -- pending | claimed | scored | skipped
    reason        TEXT,                         -- skipped: sampled_out | budget_exhausted |
                                                -- incomplete | error
    message       TEXT,                         -- error: the message; other skips: the detail
    claimed_by    TEXT,
    claimed_until REAL,
    not_before    REAL NOT NULL DEFAULT 0,      -- pending: not claimed before (a trace waiting
                                                -- for its spans)
    attempts      INTEGER NOT NULL DEFAULT 0,
    matched_at    REAL NOT NULL,
    finished_at   REAL,
    run_id        TEXT,                         -- scored: the window run holding its sample
    PRIMARY KEY (rule, trace_id)
);
CREATE INDEX IF NOT EXISTS online_work_queue ON online_work (state, not_before);
CREATE INDEX IF NOT EXISTS online_work_window ON online_work (rule, window_start, state);
-- a rule's spend per period ('hour' | 'day' starting at period_start, UTC): a call is
-- reserved (calls, in_flight) before it starts, its tokens and cost added when it ends
CREATE TABLE IF NOT EXISTS online_spend (
    rule         TEXT NOT NULL,
    period       TEXT NOT NULL,
    period_start REAL NOT NULL,
    calls        INTEGER NOT NULL DEFAULT 0,
    tokens       INTEGER NOT NULL DEFAULT 0,
    cost         REAL NOT NULL DEFAULT 0,
    in_flight    INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (rule, period, period_start)
);
-- a rule's window and the stored run holding its samples (created once, by whichever server
-- scores its first trace); closed once the window ended and its work is done
CREATE TABLE IF NOT EXISTS online_windows (
    rule         TEXT NOT NULL,
    window_start REAL NOT NULL,
    window_end   REAL NOT NULL,
    run_id       TEXT NOT NULL,
    closed       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (rule, window_start)
);
-- an alert incident of a rule (one row per incident key), delivered to its webhook once
CREATE TABLE IF NOT EXISTS online_alerts (
    rule         TEXT NOT NULL,
    incident     TEXT NOT NULL,
    kind         TEXT NOT NULL,                 -- 'floor' | 'baseline'
    opened_at    REAL NOT NULL,
    payload      TEXT NOT NULL,                 -- JSON: what the webhook is sent
    delivered_at REAL,
    attempts     INTEGER NOT NULL DEFAULT 0,
    last_error   TEXT,
    lease_until  REAL,                          -- a sender delivering it holds it until then
    next_attempt_at REAL,                       -- after a failed POST: not tried again before
    abandoned_at REAL,                          -- retried for the whole schedule: given up then
    PRIMARY KEY (rule, incident)
);
-- a backfill of a rule over stored traces received in [since, until): resumable by its cursor
CREATE TABLE IF NOT EXISTS online_backfills (
    rule         TEXT NOT NULL,
    since        REAL NOT NULL,
    until        REAL NOT NULL,
    cursor       TEXT NOT NULL DEFAULT '',      -- the last trace id enqueued
    requested_at REAL NOT NULL,
    done_at      REAL,
    PRIMARY KEY (rule, since, until)
);
CREATE TABLE IF NOT EXISTS embedding_cache (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    vector TEXT NOT NULL,
    created_at REAL NOT NULL
);
""".replace("{usage}", _USAGE_COLUMNS).replace("{rollups}", ROLLUP_SCHEMA)


#: What the sample table's search reads of a sample (``samples s``): its input, prediction and
#: expected, one per line (an input or expected that is a JSON string without its quotes; its
#: escapes stay as stored: an expression that decoded JSON could fail on a stored text, and a
#: failing index expression would refuse the sample's write). The trigram index is on this
#: expression, and a search names it to the letter, so PostgreSQL matches the two.
SEARCH_TEXT = (
    "(coalesce(CASE WHEN s.input LIKE '\"%\"' THEN substr(s.input, 2, length(s.input) - 2)"
    " ELSE s.input END, '') || chr(10) || coalesce(s.prediction, '') || chr(10) ||"
    " coalesce(CASE WHEN s.expected LIKE '\"%\"' THEN substr(s.expected, 2,"
    " length(s.expected) - 2) ELSE s.expected END, ''))"
)
TRIGRAM_INDEX = "samples_text_trgm"
#: The scores that failed or may rest on a malformed judge verdict (a superset: the table's
#: error filter then tests each exactly), the predicate of a small partial index.
PROBLEM_SCORES = (
    "(e.error <> '' OR e.unreadable <> '' OR e.metadata LIKE '%\"unreadable\"%')"
).replace("e.", "")

#: PostgreSQL's indexes for the viewer's sample table of a run (one page is one walk of one of
#: them in the asked order): dataset order; a sort by a scorer's value (and the scorers of a
#: run, by a skip scan); by the weighted score; by the pass flag (ties in dataset order); and
#: the samples stored without a verdict (a run holding any is indexed in the server's memory,
#: which derives their verdicts).
POSTGRES_TABLE_INDEXES = """
CREATE INDEX IF NOT EXISTS samples_table_idx ON samples (run_id, idx, sample_id);
CREATE INDEX IF NOT EXISTS scores_table_value ON scores (run_id, scorer, value, sample_id);
CREATE INDEX IF NOT EXISTS samples_table_weighted
    ON samples (run_id, weighted_score, idx, sample_id);
CREATE INDEX IF NOT EXISTS samples_table_passed ON samples (run_id, passed, idx, sample_id);
CREATE INDEX IF NOT EXISTS samples_table_no_verdict ON samples (run_id) WHERE verdict IS NULL;
CREATE INDEX IF NOT EXISTS scores_table_problem ON scores (run_id, sample_id)
    WHERE {problem};
""".replace("{problem}", PROBLEM_SCORES)

#: Text search in a run's samples by trigrams: needs the ``pg_trgm`` extension, which a role
#: without the right to create it may not add (the search then reads the run's texts, and the
#: table's answer says so).
POSTGRES_TEXT_SEARCH = (
    "CREATE EXTENSION IF NOT EXISTS pg_trgm;\n"
    f"CREATE INDEX IF NOT EXISTS {TRIGRAM_INDEX} ON samples USING gin"
    f" (({SEARCH_TEXT.replace('s.', '')}) gin_trgm_ops);\n"
)


def config_columns(config: Any) -> tuple[str | None, int | None]:
    """``(git_branch, dataset_limit)`` of a run's config (a dict or its JSON text): the columns
    kept beside it. Anything else than a text branch or an integer limit is ``None``."""
    if isinstance(config, str):
        try:
            config = loads(config)
        except (ValueError, RecursionError):
            return None, None
    if not isinstance(config, dict):
        return None, None
    branch = config.get("git_branch")
    dataset = config.get("dataset")
    limit = dataset.get("limit") if isinstance(dataset, dict) else None
    return (
        branch if isinstance(branch, str) else None,
        # an integer column holds 64 bits: an uploaded config's absurd limit is not one
        limit
        if isinstance(limit, int) and not isinstance(limit, bool) and 0 <= limit < 2**63
        else None,
    )


def fill_config_columns(
    query: Callable[[str], Sequence[tuple[Any, ...]]],
    update: Callable[[str, list[tuple[Any, ...]]], None],
) -> None:
    """Fill ``git_branch`` and ``dataset_limit`` of the runs stored before version 7 from their
    configs, when a store is migrated (only configs naming either key are decoded)."""
    rows = query(
        "SELECT id, config FROM runs WHERE git_branch IS NULL AND dataset_limit IS NULL"
        " AND (config LIKE '%git_branch%' OR config LIKE '%limit%')"
    )
    filled = [(*config_columns(config), run_id) for run_id, config in rows]
    filled = [row for row in filled if row[0] is not None or row[1] is not None]
    if filled:
        update("UPDATE runs SET git_branch = ?, dataset_limit = ? WHERE id = ?", filled)


def table_names(schema: str) -> tuple[str, ...]:
    """The tables ``schema`` creates: a store at :data:`SCHEMA_VERSION` that has them all is
    opened without DDL (so a role with only data rights can use it)."""
    return tuple(re.findall(r"CREATE TABLE IF NOT EXISTS (\w+)", schema))


def table_ddl(table: str) -> str:
    """The ``CREATE TABLE IF NOT EXISTS`` statement of ``table`` in :data:`SCHEMA`."""
    found = re.search(rf"CREATE TABLE IF NOT EXISTS {table} \(.*?\n\);", SCHEMA, re.S)
    if found is None:
        raise ValueError(f"no table {table!r} in the store's schema")
    return found.group(0)


def up_to_date(found: str | None, version: int) -> bool:
    """Whether a store whose ``meta`` records ``found`` (``None``: no store yet) is at
    ``version``; ``False`` when it is older (and so migrated in place).

    Raises:
        StoreError: the store is newer than this aieval (or its version is unreadable): it is
            left untouched.
    """
    if found is None:
        return False
    try:
        number = int(found)
    except ValueError:
        raise StoreError(f"store schema version {found!r} is not a number") from None
    if number > version:
        raise StoreError(
            f"store schema {number} is newer than this aieval supports ({version}): upgrade aieval"
        )
    return number == version
