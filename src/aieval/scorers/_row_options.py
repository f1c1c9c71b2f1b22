"""What a dataset row may set on its own checks: an allow-list per check.

A row is data, written by whoever wrote the dataset (or the file it was imported from), not by
the eval's author. It may choose among the checks the eval can run and set what each compares
with; it never grants itself a capability: running code (and its isolation), an endpoint, a
provider or a key, more calls than the author configured. So every check a row may use lists
the options a row may set (:data:`ROW_OPTIONS`); anything else is refused when the dataset is
read, and again when the runner builds the row's scorers. A built-in check not on the list
(``code_passes``, ``passes_tests``: they run code) is refused in rows altogether. A scorer the
eval registered itself (an ``@scorer`` of its imports, a plug-in) takes only :data:`ROW_COMMON`
from a row: its own options are the eval file's to give.
"""

from __future__ import annotations

import inspect
from collections.abc import Hashable, Mapping
from typing import Any

from aieval._keys import unknown_key
from aieval.errors import ConfigError
from aieval.scorers._judge import llm_judge
from aieval.scorers._sacrebleu import check_word_order
from aieval.scorers._scorer import get_scorer
from aieval.scorers._trajectory import ROW_TRAJECTORY_OPTIONS, check_row_trajectory

__all__ = ["MAX_ROW_VALUES", "ROW_COMMON", "ROW_OPTIONS", "ROW_VALUES", "check_row_check"]

#: The most texts a row's ``values`` option (``contains_any`` and its kin) may list.
MAX_ROW_VALUES = 1_000

#: What a row may set on any check it may use: its stored name, pass threshold and weight.
ROW_COMMON = frozenset({"name", "threshold", "weight"})

_TEXT = frozenset({"value", "negate"})
_TEXTS = frozenset({"values", "negate"})

#: The built-in checks a row may use, each with the options a row may set (beside ROW_COMMON):
#: what the check compares with, never where a request goes, with which key, or what runs.
ROW_OPTIONS: Mapping[str, frozenset[str]] = {
    # text
    "contains": _TEXT,
    "icontains": _TEXT,
    "equals": _TEXT,
    "starts_with": _TEXT,
    "contains_any": _TEXTS,
    "contains_all": _TEXTS,
    "icontains_any": _TEXTS,
    "icontains_all": _TEXTS,
    "regex": frozenset({"pattern", "flags", "full", "negate"}),
    "levenshtein": frozenset({"value", "max_distance", "negate"}),
    "word_count": frozenset({"min_words", "max_words", "negate"}),
    "python": frozenset({"expression", "negate"}),
    # formats
    "json_schema": frozenset({"schema", "contains", "negate"}),
    "is_xml": frozenset({"negate"}),
    "is_html": frozenset({"negate"}),
    "is_sql": frozenset({"dialect", "negate"}),
    "json_valid": frozenset(),
    # how the output was made
    "latency": frozenset({"max_s", "negate"}),
    "cost": frozenset({"max_usd", "prices", "negate"}),
    "finish_reason": _TEXT,
    # reference metrics
    "exact_match": frozenset({"normalize"}),
    "token_f1": frozenset({"case_sensitive", "normalize"}),
    "rouge_l": frozenset({"tokenizer", "use_stemmer"}),
    "bleu": frozenset({"tokenize", "lowercase", "smooth_method"}),
    "chrf": frozenset({"word_order", "lowercase"}),
    # model calls: on the endpoint, with the key, the eval author configured
    "similar": frozenset({"value", "threshold", "embedding_model", "negate"}),
    "llm_judge": frozenset({"rubric"}),
    # tool use: built-in modes and normalizers only (checked by check_row_trajectory)
    "trajectory_match": ROW_TRAJECTORY_OPTIONS,
}

#: sqlglot's built-in dialects (``None``: its generic one). Any other name is looked up among
#: installed plug-ins and imported, so a row may name only these.
_SQL_DIALECTS = frozenset(
    {None, "", "athena", "bigquery", "clickhouse", "databricks", "dax", "doris", "dremio", "drill",
     "druid", "duckdb", "dune", "exasol", "fabric", "hive", "materialize", "mysql", "oracle",
     "postgres", "presto", "prql", "redshift", "risingwave", "snowflake", "solr", "spark",
     "spark2", "sqlite", "starrocks", "tableau", "teradata", "trino", "tsql"}
)  # fmt: skip

#: The options on ROW_OPTIONS whose *value* picks what the check loads: for each, the only
#: values a row may give (the eval file may give any). A value outside these could download a
#: model, read a file or import code, which only the eval author may grant.
ROW_VALUES: Mapping[str, Mapping[str, frozenset[Any]]] = {
    # sacrebleu's tokenizers that need no download: flores101, flores200, spm and spBLEU-1K
    # fetch a SentencePiece model over the network and write it under ~/.sacrebleu
    "bleu": {"tokenize": frozenset({"none", "zh", "13a", "intl", "char", "ja-mecab", "ko-mecab"})},
    "is_sql": {"dialect": _SQL_DIALECTS},
    "rouge_l": {"tokenizer": frozenset({"whitespace", "rouge_score"})},
    "exact_match": {"normalize": frozenset({None, "squad"})},
    "token_f1": {"normalize": frozenset({None, "squad"})},
}

#: Why a value outside ROW_VALUES is the eval author's to give.
_VALUE_REASONS = {
    ("bleu", "tokenize"): "another tokenizer downloads a model over the network",
    ("is_sql", "dialect"): "another dialect is looked up among installed plug-ins and imported",
}

#: Why an option is the eval author's to set (the rest: "not an option a row may set").
_REASONS = {
    "allow_code_execution": "running code is granted by the eval author only",
    "limits": "the sandbox's isolation and limits are the eval author's",
    "base_url": "the endpoint a request goes to is the eval author's",
    "api_key_env": "which key is sent is the eval author's",
    "api_key": "which key is sent is the eval author's",
    "provider": "the provider a request goes to is the eval author's",
    "headers": "the headers a request carries are the eval author's",
    "model": "the model called (and paid for) is the eval author's",
}


def check_row_check(check: str, options: Mapping[Any, Any], *, unknown: bool = True) -> None:
    """Refuse a row's check ``{check: options}`` that a row may not use, or an option a row
    may not set on it (the caller names the row and the entry).

    Args:
        unknown: also refuse a key ``check`` does not take at all (a typo, ``valeu``), with
            the nearest key a row may set; ``False`` leaves it to the scorer's own validation
            (the dataset loader: a typo is that sample's error, not a stopped run).

    Raises:
        ConfigError: naming the check and the option, and what to do instead; an unknown
            check as :func:`get_scorer` refuses it.
    """
    allowed = ROW_COMMON | _row_allowed(check)
    values = options.get("values")
    if isinstance(values, list) and len(values) > MAX_ROW_VALUES:
        # each value is one pass over the output: a row's list is bounded like its checks
        raise ConfigError(
            f"{check}.values: a dataset row may give at most {MAX_ROW_VALUES:,} values, got "
            f"{len(values):,}; give longer lists in the eval file's scorers"
        )
    if check == "chrf" and "word_order" in options:
        check_word_order(options["word_order"])  # its cost grows with it: refused at load
    if check == "trajectory_match":
        check_row_trajectory(options)  # its values are names, never a function
    taken = _parameters(check)
    for key in options:
        if key in allowed:
            _check_value(check, key, options[key])
            continue
        if taken is not None and key not in taken:
            if not unknown:
                continue
            raise ConfigError(f"{check}.{key}: {unknown_key(key, allowed)}")
        reason = _REASONS.get(str(key), "it is not an option a row may set")
        raise ConfigError(
            f"{check}.{key}: a dataset row may not set {key!r} ({reason}); a row may set only "
            f"{', '.join(sorted(allowed))}. Configure {check} with {key} in the eval file's "
            "scorers instead"
        )


def _check_value(check: str, key: Any, value: Any) -> None:
    """Refuse a value of ``check.key`` that a row may not give (see :data:`ROW_VALUES`)."""
    values = ROW_VALUES.get(check, {}).get(key)
    if values is None or (isinstance(value, Hashable) and value in values):
        return
    reason = _VALUE_REASONS.get((check, key), "it is not a value a row may give")
    shown = ", ".join(sorted(repr(v) for v in values if v not in (None, "")))
    text = repr(value)
    text = text if len(text) <= 60 else text[:57] + "..."
    raise ConfigError(
        f"{check}.{key}: a dataset row may not set {key!r} to {text} ({reason}); a row may "
        f"give it only {shown}. Set {check}'s {key} in the eval file's scorers instead"
    )


def _parameters(check: str) -> frozenset[str] | None:
    """The options ``check``'s function takes (``None``: any, it takes ``**kwargs``)."""
    fn: Any = llm_judge if check == "llm_judge" else get_scorer(check).fn
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):  # a callable without a signature: it may take anything
        return None
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters):
        return None
    usable = (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
    return frozenset(p.name for p in parameters if p.kind in usable)


def _row_allowed(check: str) -> frozenset[str]:
    """The options (beside ROW_COMMON) a row may set on ``check``, or a ConfigError."""
    if check == "llm_judge":
        return ROW_OPTIONS[check]
    registered = get_scorer(check)
    module = getattr(registered.fn, "__module__", None) or type(registered.fn).__module__
    if not (module == "aieval" or str(module).startswith("aieval.")):
        return frozenset()  # the eval's own scorer: its options are the eval file's to give
    if check in ROW_OPTIONS:
        return ROW_OPTIONS[check]
    raise ConfigError(
        f"{check}: this check may not be used in a dataset row (a row may not run code, or "
        "grant itself what only the eval author may); put it in the eval file's scorers, "
        "where the author grants what it needs, and keep the row's data (its tests, its "
        "expected answer) in the row's fields"
    )
