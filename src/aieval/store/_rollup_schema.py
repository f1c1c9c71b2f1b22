"""The tables of a run's rollups (:mod:`aieval.store._rollups`), schema version 11: the
columns of ``run_totals`` with the expressions that fill them, and the DDL of the tables."""

from __future__ import annotations

__all__ = ["CALL_TOTALS", "FLOATS", "JUDGED", "OWN_USAGE", "ROLLUP_SCHEMA", "TOTALS"]

#: 1 when a sample (``s``) counts the usage its target reported itself as one call: it has
#: tokens and no target call (the calls' own counts are the target's otherwise)
OWN_USAGE = (
    "CASE WHEN (s.input_tokens IS NOT NULL OR s.output_tokens IS NOT NULL) AND NOT EXISTS"
    " (SELECT 1 FROM model_calls c WHERE c.run_id = s.run_id AND c.sample_id = s.sample_id"
    " AND c.purpose = 'target') THEN 1 ELSE 0 END"
)

#: ``run_totals``' columns: (name, expression over the run's samples, how batches combine)
TOTALS: tuple[tuple[str, str, str], ...] = (
    ("samples", "COUNT(*)", "sum"),
    ("passed", "SUM(verdict_passed)", "sum"),
    ("target_errors", "SUM(CASE WHEN error IS NULL THEN 0 ELSE 1 END)", "sum"),
    ("graded", "SUM(CASE WHEN verdict_plain = 0 THEN 1 ELSE 0 END)", "sum"),
    ("epochs", "COUNT(epoch)", "sum"),
    ("weighted_n", "COUNT(weighted_score)", "sum"),
    ("weighted_total", "SUM(weighted_score)", "sum"),
    ("weighted_squares", "SUM(weighted_score * weighted_score)", "sum"),
    ("weighted_min", "MIN(weighted_score)", "min"),
    ("weighted_max", "MAX(weighted_score)", "max"),
    ("latency_n", "COUNT(latency_s)", "sum"),
    ("latency_total", "SUM(latency_s)", "sum"),
    ("latency_max", "MAX(latency_s)", "max"),
    ("grade_n", "COUNT(grade)", "sum"),
    (
        "untyped",
        "SUM(CASE WHEN verdict_values IS NULL OR verdict_passed IS NULL"
        " OR verdict_plain IS NULL THEN 1 ELSE 0 END)",
        "sum",
    ),
    ("first_idx", "MIN(idx)", "min"),
    (
        "not_plain",
        "SUM(CASE WHEN verdict_plain = 1 AND verdict_passed IS NOT NULL THEN 0 ELSE 1 END)",
        "sum",
    ),
    ("cost_n", "COUNT(cost)", "sum"),
    ("cost_total", "SUM(cost)", "sum"),
    ("weighted_zeros", "SUM(CASE WHEN weighted_score = 0 THEN 1 ELSE 0 END)", "sum"),
    ("weighted_hundreds", "SUM(CASE WHEN weighted_score = 100 THEN 1 ELSE 0 END)", "sum"),
    # the usage the samples' targets reported themselves, as ``ColumnReader.call_totals``
    # (``s.own`` is :data:`OWN_USAGE`, computed once a sample: see ``delta_statements``)
    ("own_input", "SUM(s.own * COALESCE(s.input_tokens, 0))", "sum"),
    ("own_output", "SUM(s.own * COALESCE(s.output_tokens, 0))", "sum"),
    ("own_calls", "SUM(s.own)", "sum"),
    (
        "own_unreported",
        "SUM(CASE WHEN s.own = 1 AND (s.input_tokens IS NULL OR s.output_tokens IS NULL)"
        " THEN 1 ELSE 0 END)",
        "sum",
    ),
    ("retries", "SUM(s.retries)", "sum"),
    ("cached_samples", "SUM(CASE WHEN s.cached <> 0 THEN 1 ELSE 0 END)", "sum"),
    (
        "unpriced",
        "SUM(CASE WHEN s.cost IS NULL AND (s.input_tokens IS NOT NULL OR s.output_tokens IS NOT"
        " NULL OR EXISTS (SELECT 1 FROM model_calls c WHERE c.run_id = s.run_id"
        " AND c.sample_id = s.sample_id AND c.error IS NULL)) THEN 1 ELSE 0 END)",
        "sum",
    ),
)

#: ``run_totals``' columns summed over the run's model calls (``_sql_sums``' calls side)
CALL_TOTALS: tuple[tuple[str, str], ...] = (
    *(
        (f"{who}_{what}", expr.format(side=side))
        for who, side in (("target", "purpose = 'target'"), ("judge", "purpose <> 'target'"))
        for what, expr in (
            ("input", "SUM(CASE WHEN {side} THEN COALESCE(input_tokens, 0) ELSE 0 END)"),
            ("output", "SUM(CASE WHEN {side} THEN COALESCE(output_tokens, 0) ELSE 0 END)"),
            ("calls", "SUM(CASE WHEN {side} AND error IS NULL THEN 1 ELSE 0 END)"),
            (
                "unreported",
                "SUM(CASE WHEN {side} AND error IS NULL AND"
                " (input_tokens IS NULL OR output_tokens IS NULL) THEN 1 ELSE 0 END)",
            ),
        )
    ),
    ("answered_calls", "SUM(CASE WHEN error IS NULL THEN 1 ELSE 0 END)"),
    ("cached_calls", "SUM(CASE WHEN error IS NULL AND cached <> 0 THEN 1 ELSE 0 END)"),
)
#: the scores whose metadata may hold a judge's counts (``ColumnReader.judged_scores``)
JUDGED = "metadata LIKE '%parse_failures%'"

#: the columns of ``run_totals`` that hold floats (the rest are integers)
FLOATS = frozenset(
    ("weighted_total", "weighted_squares", "weighted_min", "weighted_max", "latency_total",
     "latency_max", "cost_total")
)  # fmt: skip


def _column(name: str, how: str) -> str:
    kind = "REAL" if name in FLOATS else "INTEGER"
    return f"    {name} {kind}{' NOT NULL DEFAULT 0' if how == 'sum' else ''},\n"


#: the tables (part of :data:`aieval.store._schema.SCHEMA`)
ROLLUP_SCHEMA = (
    "-- a run's rollups (see aieval.store._rollups): its row here makes them valid\n"
    "CREATE TABLE IF NOT EXISTS run_totals (\n"
    "    run_id TEXT PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,\n"
    + "".join(_column(name, how) for name, _, how in TOTALS)
    + "".join(_column(name, "sum") for name, _ in CALL_TOTALS)
    + "    judged INTEGER NOT NULL DEFAULT 0,\n"
    + "    first_sample TEXT                           -- the first sample by (idx, sample_id)\n"
    + ");\n"
    "CREATE TABLE IF NOT EXISTS run_rollups (\n"
    "    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,\n"
    "    part  TEXT NOT NULL,                        -- scores | latency\n"
    "    g     TEXT NOT NULL,                        -- the scorer ('' for latency)\n"
    "    c     INTEGER NOT NULL,                     -- the code (0: a value that counts)\n"
    "    qb    INTEGER NOT NULL,                     -- the fine bucket (-9: no value)\n"
    "    hb    INTEGER NOT NULL,                     -- the histogram bin (-1: none)\n"
    "    n     INTEGER NOT NULL,\n"
    "    total REAL,\n"
    "    squares REAL,\n"
    "    low   REAL,\n"
    "    high  REAL,\n"
    "    other INTEGER NOT NULL,\n"
    "    PRIMARY KEY (run_id, part, g, c, qb, hb)\n"
    ");\n"
    "-- the order statistics a report's quantiles read (schema 11): valid for ``n`` values\n"
    "CREATE TABLE IF NOT EXISTS run_order_stats (\n"
    "    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,\n"
    "    part  TEXT NOT NULL,                        -- scores | latency\n"
    "    g     TEXT NOT NULL,                        -- the scorer ('' for latency)\n"
    "    n     INTEGER NOT NULL,                     -- the group's values they rank among\n"
    "    rank  INTEGER NOT NULL,                     -- 0-based, in value order\n"
    "    value REAL NOT NULL,\n"
    "    PRIMARY KEY (run_id, part, g, rank)\n"
    ");\n"
    "-- a slice by a metadata field, as its statement grouped it (schema 11): valid while the\n"
    "-- run has ``samples_at`` samples\n"
    "CREATE TABLE IF NOT EXISTS run_slices (\n"
    "    run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,\n"
    "    field TEXT NOT NULL,                        -- the dotted path sliced by\n"
    "    samples_at INTEGER NOT NULL,\n"
    "    k     TEXT,                                 -- the field's JSON text (NULL: absent)\n"
    "    grade TEXT,\n"
    "    samples INTEGER NOT NULL,\n"
    "    passed INTEGER,\n"
    "    weighted_n INTEGER NOT NULL,\n"
    "    weighted_total REAL\n"
    ");\n"
    "CREATE INDEX IF NOT EXISTS run_slices_field ON run_slices (run_id, field);\n"
    "-- each failed reasons list's first samples in dataset order (a few; see FIRSTS_KEPT)\n"
    "CREATE TABLE IF NOT EXISTS run_reason_firsts (\n"
    "    run_id    TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,\n"
    "    reasons   TEXT NOT NULL,\n"
    "    idx       INTEGER NOT NULL,\n"
    "    sample_id TEXT NOT NULL,\n"
    "    PRIMARY KEY (run_id, reasons, idx, sample_id)\n"
    ");\n"
)
