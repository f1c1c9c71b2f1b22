"""Every check a dataset row may use is bounded: the ones whose cost is not linear in the row run
in the expression workers (each under the per-sample limit, all of a sample's under its budget),
off the event loop; the rest are linear in the row, and the options that set their cost are
capped."""

from __future__ import annotations

import asyncio

import pytest

from aieval.errors import ConfigError, ScorerError
from aieval.scorers import (
    _expressions,
    chrf,
    contains_all,
    get_scorer,
    icontains_any,
    is_html,
    is_sql,
    json_schema,
    levenshtein,
    python,
    regex,
    rouge_l,
)
from aieval.scorers._row_options import ROW_OPTIONS, check_row_check

# a run without a limit would take seconds to minutes on each of these
SLOW_CLASS = "[\u0100-\U0010ffff]" * 400


@pytest.fixture
def short(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_expressions, "EXPRESSION_TIME_LIMIT_S", 0.3)
    monkeypatch.setattr(_expressions, "EXPRESSION_MEMORY_LIMIT_MB", 128)


def test_the_json_search_goes_on_after_a_value_and_keeps_none() -> None:
    # each nested array was once decoded again from every "[" and kept: quadratic time and memory
    text = ("[" * 300 + "]" * 300) * 10
    found = json_schema(text, schema={"type": "object"}, contains=True)
    assert (found.value, found.raw) == (0.0, 10)  # the ten outer arrays, none of their insides
    assert json_schema("x [1] y {} z", schema={"type": "object"}, contains=True).value == 1.0
    assert json_schema("x [[1] y", contains=True).reason == "output is JSON"


def test_a_json_search_that_would_run_long_is_stopped(short: None) -> None:
    with pytest.raises(ScorerError, match=r"^json_schema: validating the output took over 0\.3 s"):
        json_schema("[" * 200_000, contains=True)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        pytest.param(lambda: is_html("<div>" * 10_000), "is_html", id="is_html"),
        pytest.param(lambda: is_sql("SELECT a FROM b; " * 30_000), "is_sql", id="is_sql"),
        pytest.param(
            lambda: levenshtein("ab" * 100_000, value="ba" * 100_000), "levenshtein", id="lev"
        ),
    ],
)
def test_a_parse_or_distance_that_would_run_long_is_stopped(
    short: None, call: object, name: str
) -> None:
    assert callable(call)
    with pytest.raises(ScorerError, match=rf"^{name}: .* took over 0\.3 s \(the per-sample"):
        call()


def test_the_moved_checks_give_the_same_results() -> None:
    assert is_html("<p>Hi <b>you</b></p>").value == 1.0
    assert is_html("<p>Hi</i>").reason.startswith("output is not clean HTML: ")
    assert is_html("Hello").reason == "output has no HTML element"
    assert is_sql("SELECT 1; SELECT 2").raw == 2
    assert is_sql("hello world").value == 0.0
    assert is_sql("SELECT name FROM t", dialect="duckdb").value == 1.0
    assert levenshtein("kitten", value="sitting", max_distance=3).raw == 3
    assert round(levenshtein("kitten", value="sitting").value, 4) == 0.5714


def test_a_pattern_that_compiles_for_long_is_refused_naming_the_option(short: None) -> None:
    with pytest.raises(ConfigError, match=r"^regex\.pattern: regex: compiling .* took over 0\.3"):
        regex.with_options(pattern=SLOW_CLASS * 3, flags="i")
    with pytest.raises(ConfigError, match=r"^regex\.pattern: '\(' is not a regular expression"):
        regex.with_options(pattern="(")


def test_a_schema_pattern_that_compiles_for_long_is_refused_naming_the_option(short: None) -> None:
    schema = {"type": "string", "pattern": "(?i)" + SLOW_CLASS * 3}
    with pytest.raises(ConfigError, match=r"^json_schema\.schema: .* took over 0\.3 s"):
        json_schema.with_options(schema=schema)
    with pytest.raises(ConfigError, match="not a valid JSON Schema"):
        json_schema.with_options(schema={"type": 12})


def test_chrf_word_order_past_chrf_plus_plus_is_refused() -> None:
    with pytest.raises(ConfigError, match=r"^chrf\.word_order: 3000000 is outside 0\.\.2"):
        check_row_check("chrf", {"word_order": 3_000_000})
    with pytest.raises(ConfigError, match=r"^chrf\.word_order: 7 is outside"):
        chrf("the cat", "the cat", word_order=7)
    assert chrf("the cat sat", "the cat sat", word_order=2) == 1.0


def test_a_long_or_deep_expression_is_the_checks_config_error() -> None:
    with pytest.raises(ConfigError, match=r"^python\.expression: 10,001 characters, over"):
        python.with_options(expression="1" * 10_001)
    for deep in ("-" * 9_000 + "1", "1+" * 4_000 + "1", "(" * 300 + "1" + ")" * 300):
        with pytest.raises(ConfigError, match=r"^python\.expression: "):
            python.with_options(expression=deep)


def test_a_long_expression_is_shortened_in_its_error() -> None:
    expression = "1 / 0 if output else '" + "x" * 9_000 + "'"
    with pytest.raises(ScorerError, match=r"raised ZeroDivisionError") as raised:
        python("abc", expression=expression)
    assert len(str(raised.value)) < 600
    assert "(9,025 characters)" in str(raised.value)


def test_every_row_check_is_bounded_or_linear() -> None:
    def marked(mark: str) -> set[str]:
        return {n for n in ROW_OPTIONS if n != "llm_judge" and getattr(_fn(n), mark, False)}

    assert marked("__aieval_bounded__") == {
        "regex",
        "python",
        "json_schema",
        "is_html",
        "is_sql",
        "levenshtein",
    }
    # the reference metrics: linear in the texts or LCS (bit-parallel), off the event loop
    assert marked("__aieval_off_loop__") == {
        "rouge_l",
        "token_f1",
        "bleu",
        "chrf",
        "contains_any",
        "contains_all",
        "icontains_any",
        "icontains_all",
        "trajectory_match",  # quadratic in the calls, at most MAX_TRAJECTORY_CALLS each side
    }
    # the rest are linear in the row (docs/checks.md lists them): a new one must be placed
    linear = {
        "contains",
        "icontains",
        "equals",
        "starts_with",
        "word_count",
        "is_xml",
        "json_valid",
        "latency",
        "cost",
        "finish_reason",
        "exact_match",
        "similar",
        "llm_judge",
    }
    assert set(ROW_OPTIONS) == marked("__aieval_bounded__") | marked("__aieval_off_loop__") | linear


def _fn(name: str) -> object:
    return get_scorer(name).fn


def test_a_bounded_check_waits_off_the_event_loop(monkeypatch: pytest.MonkeyPatch) -> None:
    # long enough for the quick one on a busy machine: the order is what is tested
    monkeypatch.setattr(_expressions, "EXPRESSION_TIME_LIMIT_S", 2.0)
    for _ in range(2):  # two workers ready: what is measured is the wait, not a start
        _expressions._give_back(_expressions._Worker(_expressions.EXPRESSION_MEMORY_LIMIT_MB))
    slow = regex.with_options(pattern="^(a+)+$")
    quick = regex.with_options(pattern="b")

    async def main() -> list[str]:
        order: list[str] = []

        async def one(name: str, check: object, text: str) -> None:
            assert isinstance(check, type(slow))
            with pytest.raises(ScorerError) if name == "slow" else _nothing():
                await check.score(text, None)
            order.append(name)

        # the slow one starts first; a check run on the loop would hold the quick one behind it
        await asyncio.gather(one("slow", slow, "a" * 64 + "!"), one("quick", quick, "abc"))
        return order

    assert asyncio.run(main()) == ["quick", "slow"]
    assert _expressions.WORKERS >= 2


def test_a_samples_checks_share_one_budget(monkeypatch: pytest.MonkeyPatch, short: None) -> None:
    monkeypatch.setattr(_expressions, "SAMPLE_TIME_BUDGET_S", 0.5)
    backtracks = regex.with_options(pattern="^(a+)+$")
    crafted = "a" * 64 + "!"
    with _expressions.sample_budget():
        with pytest.raises(ScorerError, match=r"took over 0\.3 s \(the per-sample expression"):
            backtracks.fn(crafted, pattern="^(a+)+$")
        # stopped at what is left of the budget (or, on a busy machine, nothing was left)
        left = r"\(what was left of the sample's 0\.5 s check|not run: this sample's checks used"
        with pytest.raises(ScorerError, match=left):
            backtracks.fn(crafted, pattern="^(a+)+$")
        with pytest.raises(ScorerError, match=r"^regex: not run: this sample's checks used up"):
            regex("abc", pattern="b")
    assert regex("abc", pattern="b").value == 1.0  # the next sample has its own budget


class _nothing:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


def test_a_reference_metric_leaves_the_event_loop_only_for_long_texts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    threaded: list[int] = []
    handoff = asyncio.to_thread

    async def counted(fn, *args, **kwargs):  # type: ignore[no-untyped-def]
        threaded.append(sum(len(a) for a in args if isinstance(a, str)))
        return await handoff(fn, *args, **kwargs)

    monkeypatch.setattr(asyncio, "to_thread", counted)
    short_text, long_text = "the cat sat", "word " * 2_000
    short_score = asyncio.run(rouge_l.score(short_text, short_text))
    long_score = asyncio.run(rouge_l.score(long_text, long_text))
    assert short_score.value == long_score.value == 1.0
    assert threaded == [len(long_text) * 2]  # the short pair scored on the loop


def test_a_rows_values_are_bounded_and_a_reason_lists_ten() -> None:
    many = [f"v{i}" for i in range(1_001)]
    with pytest.raises(ConfigError, match=r"contains_any\.values: .* at most 1,000 values"):
        check_row_check("contains_any", {"values": many})
    check_row_check("contains_any", {"values": many[:1_000]})
    missing = contains_all("v3 v5", values=many[:30])
    assert missing.value == 0.0 and missing.raw == 2
    assert missing.reason is not None and missing.reason.endswith("and 18 more")
    none = icontains_any("nothing here", values=many[:12])
    assert none.reason is not None and none.reason.endswith("and 2 more (ignoring case)")


def test_a_long_reference_metric_is_charged_to_the_samples_budget(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_expressions, "SAMPLE_TIME_BUDGET_S", 0.0)
    long_text = "word " * 5_000

    async def main() -> None:
        with _expressions.sample_budget():
            with pytest.raises(ScorerError, match=r"rouge_l: not run: .* check time budget"):
                await rouge_l.score(long_text, long_text)
            short = await rouge_l.score("a b", "a b")  # on the loop: not charged
            assert short.value == 1.0

    asyncio.run(main())
