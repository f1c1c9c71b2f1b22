"""trajectory_match: modes, partial credit (hand-worked), the optimal pairing, normalizers,
forbidden tools, the stored trajectory, and what a dataset row may set."""

from __future__ import annotations

import json
from typing import Any

import pytest

import aieval
from aieval.core import TRAJECTORY_KEY, Score, ToolUse, Trajectory
from aieval.errors import ConfigError, ScorerError
from aieval.scorers import check_row_check, match_trajectory, trajectory_match


def _calls(*specs: str | tuple[str, dict[str, Any]]) -> list[dict[str, Any]]:
    return [
        {"name": s, "arguments": {}} if isinstance(s, str) else {"name": s[0], "arguments": s[1]}
        for s in specs
    ]


def _score(mode: str, called: Any, expected: Any, **options: Any) -> Score:
    result = trajectory_match(mode, **options)(called, expected)
    assert isinstance(result, Score)
    return result


# --- partial credit, worked by hand ------------------------------------------------------


def test_three_of_four_expected_tools_is_three_quarters_not_zero() -> None:
    made = _calls("search", "weather", "hotel")
    expected = _calls("search", "weather", "hotel", "book")
    score = _score("superset", made, expected)
    assert score.value == 0.75  # recall: 3 of 4 expected calls made
    assert score.metadata["recall"] == 0.75
    assert score.metadata["precision"] == 1.0
    assert score.metadata["f1"] == pytest.approx(6 / 7)  # 2*3 / (3+4)
    assert score.reason == "superset: matched search, weather, hotel; missing book"
    # strict and unordered take F1, subset precision; none holds but strict/unordered get 6/7
    assert _score("strict", made, expected).value == pytest.approx(6 / 7)
    assert _score("unordered", made, expected).value == pytest.approx(6 / 7)
    assert _score("subset", made, expected).value == 1.0  # every call made was expected


def test_the_value_is_one_exactly_when_the_mode_holds() -> None:
    expected = _calls("a", "b", "c")
    cases = {
        # made calls: {mode: value}
        ("a", "b", "c"): {"strict": 1, "in_order": 1, "unordered": 1, "subset": 1, "superset": 1},
        ("c", "b", "a"): {"strict": 1 / 3, "in_order": 1 / 3, "unordered": 1, "superset": 1},
        ("a", "x", "b", "c"): {"strict": 6 / 7, "in_order": 1, "subset": 3 / 4, "superset": 1},
        ("a", "c"): {"strict": 4 / 5, "in_order": 2 / 3, "subset": 1, "superset": 2 / 3},
        (): {"strict": 0, "in_order": 0, "unordered": 0, "subset": 1, "superset": 0},
    }
    for made, values in cases.items():
        for mode, value in values.items():
            score = _score(mode, _calls(*made), expected)
            assert score.value == pytest.approx(value), (made, mode)
            trajectory = Trajectory.from_dict(score.metadata[TRAJECTORY_KEY])
            assert trajectory.mode == mode


def test_passes_when_the_mode_holds_and_a_lower_threshold_gives_credit() -> None:
    scorer = trajectory_match("superset")
    assert scorer.threshold == 1.0
    assert trajectory_match("superset", threshold=0.75).threshold == 0.75
    assert aieval.trajectory_match is trajectory_match


def test_nothing_expected_and_nothing_made_is_a_match_but_no_expectation_is_not_scored() -> None:
    assert _score("strict", [], []).value == 1.0
    assert _score("strict", [], None).value is None


# --- the pairing is optimal and shown ----------------------------------------------------


def test_reason_shows_the_pairing_with_forbidden_calls_scoring_zero() -> None:
    made = _calls("search", "delete_user", "weather")
    expected = _calls("search", "weather", "book")
    score = _score("in_order", made, expected, forbidden=["delete_user"])
    assert score.value == 0.0
    assert score.reason == (
        "in_order: matched search, weather; missing book; extra delete_user (forbidden)"
    )  # the forbidden call is named once
    assert Trajectory.from_dict(score.metadata[TRAJECTORY_KEY]).forbidden_hits == ("delete_user",)


def test_unordered_pairing_is_a_maximum_matching_not_first_fit() -> None:
    # superset arguments: an expected call matches any call that gave at least its arguments.
    # First fit pairs the first expected call with the richest made call and strands the
    # second; the best pairing matches both.
    expected = _calls(("weather", {"city": "SF"}), ("weather", {"city": "SF", "unit": "C"}))
    made = _calls(("weather", {"city": "SF", "unit": "C"}), ("weather", {"city": "SF"}))
    score = _score("unordered", made, expected, arguments="superset")
    assert score.value == 1.0
    trajectory = Trajectory.from_dict(score.metadata[TRAJECTORY_KEY])
    assert {(m.expected, m.called) for m in trajectory.matches} == {(0, 1), (1, 0)}


def test_ordered_pairing_is_the_longest_alignment_and_substitutions_are_paired() -> None:
    expected = _calls("a", "b", "c", "d")
    made = _calls("b", "c", "x", "d")
    trajectory = match_trajectory(
        [ToolUse(c["name"], {}) for c in made],
        [ToolUse(c["name"], {}) for c in expected],
        mode="strict",
    )
    assert trajectory.matched == 3  # b, c, d: first fit from the start would find fewer
    pairs = [(m.expected, m.called) for m in trajectory.matches]
    assert pairs == [(0, None), (1, 0), (2, 1), (None, 2), (3, 3)]
    score = _score("strict", made, expected)
    assert score.reason == "strict: matched b, c, d; missing a; extra x"
    swapped = _score("strict", _calls("a", "x", "c"), _calls("a", "b", "c"))
    assert swapped.reason == "strict: matched a, c; called x instead of b"
    trajectory = Trajectory.from_dict(swapped.metadata[TRAJECTORY_KEY])
    assert [(m.expected, m.called) for m in trajectory.matches] == [(0, 0), (1, 1), (2, 2)]


def test_reordered_calls_under_an_ordered_mode_are_out_of_order() -> None:
    made = _calls("book", "search", "pay")
    expected = _calls("search", "book", "pay")
    for mode in ("strict", "in_order"):
        assert _score(mode, made, expected).reason == (
            f"{mode}: matched book, pay; out of order search"
        )
    assert _score("unordered", made, expected).reason == "unordered: matched search, book, pay"
    # one "a" made before b though expected after, the other paired with c at its step
    twice = _score("strict", _calls("b", "a", "a"), _calls("a", "b", "c"))
    assert twice.reason == "strict: matched b; called a instead of c; out of order a"
    extra = _score("strict", _calls("b", "a", "a"), _calls("b", "a", "c"))
    assert extra.reason == "strict: matched b, a; called a instead of c"


def test_same_tool_with_other_arguments_is_paired_but_not_a_match() -> None:
    score = _score(
        "strict", _calls(("book", {"date": "2025-01-02"})), _calls(("book", {"date": "2025-01-03"}))
    )
    assert score.value == 0.0
    assert score.reason == "strict: wrong arguments for book"
    [match] = Trajectory.from_dict(score.metadata[TRAJECTORY_KEY]).matches
    assert (match.expected, match.called, match.arguments_match) == (0, 0, False)


def test_pairing_is_deterministic() -> None:
    made = _calls(*"abacabad")
    expected = _calls(*"aabbcd")
    first = _score("unordered", made, expected).metadata
    assert all(_score("unordered", made, expected).metadata == first for _ in range(5))


# --- arguments: modes, normalizers, per-tool rules ---------------------------------------


@pytest.mark.parametrize(
    ("arguments", "called", "expected", "agrees"),
    [
        ("exact", {"q": "x"}, {"q": "x"}, True),
        ("exact", {"q": "x", "n": 1}, {"q": "x"}, False),
        ("subset", {"q": "x"}, {"q": "x", "n": 1}, True),
        ("subset", {"q": "x", "m": 2}, {"q": "x"}, False),
        ("superset", {"q": "x", "m": 2}, {"q": "x"}, True),
        ("superset", {"q": "x"}, {"q": "x", "n": 1}, False),
        ("ignore", {"q": "y"}, {"q": "x"}, True),
        ("exact", {"flag": True}, {"flag": 1}, False),  # JSON true is not 1
    ],
)
def test_argument_modes(arguments: str, called: Any, expected: Any, agrees: bool) -> None:
    score = _score("strict", _calls(("t", called)), _calls(("t", expected)), arguments=arguments)
    assert score.value == (1.0 if agrees else 0.0)


@pytest.mark.parametrize(
    ("normalize", "called", "expected"),
    [
        (["case"], {"city": "san FRANCISCO"}, {"city": "San Francisco"}),
        (["whitespace"], {"q": "  new\tyork  "}, {"q": "new york"}),
        (["path"], {"file": "./src//app/../app/main.py"}, {"file": "src/app/main.py"}),
        (["path"], {"file": "src\\app\\main.py"}, {"file": "src/app/main.py"}),
        (
            ["timestamp"],
            {"at": "2025-03-01T14:00:00+02:00"},
            {"at": "2025-03-01T12:00:00Z"},
        ),
        ([{"number": 0.01}], {"price": 9.999}, {"price": 10}),
        (["number"], {"n": "3"}, {"n": 3.0}),
        (["case", "whitespace"], {"q": {"list": [" A ", "b"]}}, {"q": {"list": ["a", "B"]}}),
    ],
)
def test_normalizers_make_equal_forms_agree(normalize: Any, called: Any, expected: Any) -> None:
    assert _score("strict", _calls(("t", called)), _calls(("t", expected))).value == 0.0
    scored = _score("strict", _calls(("t", called)), _calls(("t", expected)), normalize=normalize)
    assert scored.value == 1.0


@pytest.mark.parametrize(
    ("normalize", "called", "expected"),
    [
        ([{"number": 0.01}], {"price": 9.9}, {"price": 10}),
        (["timestamp"], {"at": "2025-03-01T14:00:00+01:00"}, {"at": "2025-03-01T12:00:00Z"}),
        (["case"], {"n": "1"}, {"n": 1}),
    ],
)
def test_normalizers_keep_different_values_apart(
    normalize: Any, called: Any, expected: Any
) -> None:
    scored = _score("strict", _calls(("t", called)), _calls(("t", expected)), normalize=normalize)
    assert scored.value == 0.0


def test_per_tool_rules_and_a_python_callable() -> None:
    made = _calls(("search", {"q": "Oslo"}), ("book", {"id": 7, "note": "late"}))
    expected = _calls(("search", {"q": "oslo"}), ("book", {"id": 7}))
    assert _score("strict", made, expected).value == 0.0
    per_tool: dict[str, Any] = {"search": ["case"], "book": "superset"}
    assert _score("strict", made, expected, per_tool=per_tool).value == 1.0
    by_function = {"search": lambda got, want: got["q"].lower() == want["q"].lower()}
    assert _score("in_order", made, expected[:1], per_tool=by_function).value == 1.0
    shout = [lambda v: v.upper() if isinstance(v, str) else v]
    assert _score("superset", made, expected[:1], normalize=shout).value == 1.0


def test_a_raising_normalizer_is_that_samples_scorer_error() -> None:
    def broken(_value: Any) -> Any:
        raise ValueError("boom")

    scorer = trajectory_match("strict", normalize=[broken])
    with pytest.raises(ScorerError, match="arguments of 'a' raised ValueError: boom"):
        scorer(_calls(("a", {"x": 1})), _calls(("a", {"x": 1})))


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"mode": "fuzzy"}, "trajectory_match.mode: unknown mode 'fuzzy'"),
        ({"arguments": "loose"}, "trajectory_match.arguments: unknown argument mode 'loose'"),
        ({"normalize": ["os.system"]}, "trajectory_match.normalize: unknown normalizer"),
        ({"normalize": [{"number": -1}]}, "number tolerance must be a finite number >= 0"),
        ({"normalize": [{"number": float("inf")}]}, "a finite number >= 0, got inf"),
        ({"per_tool": {"a": 3}}, "trajectory_match.per_tool.a: expected an argument mode"),
        ({"forbidden": "delete"}, "trajectory_match.forbidden: expected a list"),
    ],
)
def test_bad_options_are_refused_when_bound(options: dict[str, Any], message: str) -> None:
    mode = options.pop("mode", "strict")
    with pytest.raises(ConfigError, match=message):
        trajectory_match(mode, **options)


# --- where calls and expectations come from ----------------------------------------------


def test_recorded_calls_in_openai_form_keep_errors_and_unreadable_arguments() -> None:
    message = {
        "role": "assistant",
        "tool_calls": [
            {"id": "1", "function": {"name": "search", "arguments": '{"q": "x"}'}},
            {"id": "2", "function": {"name": "book", "arguments": "{not json"}},
        ],
    }
    recorded = [{"name": "search", "arguments": {"q": "x"}, "error": "timeout"}]
    score = _score("strict", json.dumps(message), [{"name": "search", "arguments": {"q": "x"}}])
    trajectory = Trajectory.from_dict(score.metadata[TRAJECTORY_KEY])
    assert trajectory.called[1].arguments is None
    assert trajectory.called[1].argument_error is not None
    assert "not valid JSON" in trajectory.called[1].argument_error
    failed = Trajectory.from_dict(_score("strict", recorded, ["search"]).metadata[TRAJECTORY_KEY])
    assert failed.called[0].error == "timeout"
    assert _score("strict", recorded, ["search"]).value == 1.0  # a bare name: any arguments


def test_expectations_from_the_scorer_then_the_row_field_then_expected() -> None:
    example = aieval.Example(
        id="r", input="q", expected=["other"], fields={"expected_tool_calls": ["search"]}
    )
    made = _calls("search")
    scorer = trajectory_match("strict")
    assert scorer.fn(made, ["other"], mode="strict", example=example).value == 1.0
    fixed = trajectory_match("strict", expected_calls=["other"])
    assert fixed.fn(made, None, **fixed.options, example=example).value == 0.0


def test_a_bad_expectation_is_the_samples_error_naming_where() -> None:
    with pytest.raises(ScorerError, match=r"row expected\[0\]: a tool call needs a name"):
        trajectory_match("strict")(_calls("a"), [{"arguments": {}}])


# --- what a dataset row may set ----------------------------------------------------------


def test_a_row_may_name_modes_and_built_in_normalizers_only() -> None:
    check_row_check(
        "trajectory_match",
        {
            "mode": "unordered",
            "arguments": "subset",
            "normalize": ["case", {"number": 0.5}],
            "per_tool": {"search": ["timestamp"], "book": "ignore"},
            "forbidden": ["delete_user"],
            "expected_calls": [{"name": "search", "arguments": {"q": "x"}}],
            "threshold": 0.5,
        },
    )
    refused = [
        ({"normalize": [print]}, "never a function"),
        ({"per_tool": {"search": print}}, "never a function"),
        ({"normalize": ["aieval.evil:run"]}, "unknown normalizer"),
        ({"mode": "any"}, "unknown mode"),
        ({"base_url": "http://x"}, "unknown key"),
    ]
    for options, message in refused:
        with pytest.raises(ConfigError, match=message):
            check_row_check("trajectory_match", options)


def test_more_calls_than_one_sample_may_pair_is_that_samples_error() -> None:
    from aieval.scorers._trajectory import MAX_TRAJECTORY_CALLS

    many = ["a"] * (MAX_TRAJECTORY_CALLS + 1)
    with pytest.raises(ScorerError, match=r"251 expected calls, more than the 250"):
        trajectory_match("strict")(_calls("a"), many)
    with pytest.raises(ScorerError, match=r"251 calls made"):
        trajectory_match("strict")(_calls(*many), ["a"])
    distinct = [f"t{i}" for i in range(MAX_TRAJECTORY_CALLS)]
    assert trajectory_match("unordered")(_calls(*distinct), distinct).value == 1.0


def test_an_unreadable_expectation_or_output_is_an_error_that_says_what_to_give() -> None:
    with pytest.raises(ScorerError, match=r"row expected\[0\]\.arguments: arguments are not valid"):
        trajectory_match("strict")(_calls("a"), [{"name": "a", "arguments": "{bad"}])
    for malformed, why in [
        ('{"tool_calls": [', "the text is not JSON"),
        ("42", "expected a list of tool calls, got int"),
        ('[{"nme": "search"}]', r"output tool calls\[0\]: a tool call needs a name"),
    ]:
        with pytest.raises(ScorerError, match=why):
            trajectory_match("strict")(malformed, ["lookup_order"])
    with pytest.raises(ConfigError, match=r"expected_calls\[0\]: a tool call needs a name"):
        check_row_check("trajectory_match", {"expected_calls": [{"arguments": {}}]})


def test_an_answer_in_prose_made_no_calls_and_is_scored_not_an_error() -> None:
    prose = _score("strict", "Your order has shipped.", ["lookup_order"])
    assert prose.value == 0.0
    assert prose.reason == (
        "strict: missing lookup_order (the answer is plain text: it holds no tool calls)"
    )
    assert _score("strict", "not json at all", []).value == 1.0  # none expected, none made
    assert _score("subset", "I could not help.", ["search"]).value == 1.0


def test_a_logged_bare_tool_name_matches_by_name_only() -> None:
    # a run log may list a call by its name alone: its arguments are unknown, never {}
    logged = ["search", {"name": "book", "arguments": {"id": 1}}]
    assert (
        _score("strict", logged, _calls(("search", {"q": "x"}), ("book", {"id": 1}))).value == 0.5
    )
    assert _score("strict", logged, ["search", "book"]).value == 1.0
    assert _score("strict", logged, _calls("search", "book"), arguments="ignore").value == 1.0


# --- parallel calls: one batch has no order, batches do ----------------------------------


def _assistant(*calls: tuple[str, dict[str, Any]]) -> dict[str, Any]:
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [{"function": {"name": n, "arguments": json.dumps(a)}} for n, a in calls],
    }


SF, LONDON, PARIS = ({"city": c} for c in ("SF", "London", "Paris"))


@pytest.mark.parametrize("mode", ["strict", "in_order"])
def test_a_reordered_parallel_batch_matches_in_full(mode: str) -> None:
    made = [
        _assistant(("weather", LONDON), ("weather", SF), ("search", PARIS)),
        {"role": "tool", "content": "..."},
        _assistant(("book", PARIS)),
    ]
    wanted = [
        _assistant(("search", PARIS), ("weather", SF), ("weather", LONDON)),
        _assistant(("book", PARIS)),
    ]
    score = _score(mode, made, wanted)
    assert score.value == 1.0
    assert score.metadata["f1"] == 1.0
    assert score.reason == f"{mode}: matched search, weather, weather, book"
    trajectory = Trajectory.from_dict(score.metadata[TRAJECTORY_KEY])
    # stored in the order made; each pair names the call it matched
    assert [c.arguments for c in trajectory.called] == [LONDON, SF, PARIS, PARIS]
    assert [(m.expected, m.called) for m in trajectory.matches] == [(0, 2), (1, 1), (2, 0), (3, 3)]


def test_calls_reordered_across_batches_are_still_out_of_order() -> None:
    made = [_assistant(("book", PARIS)), _assistant(("search", PARIS))]
    wanted = [_assistant(("search", PARIS)), _assistant(("book", PARIS))]
    score = _score("strict", made, wanted)
    assert score.value == pytest.approx(0.5)  # one of two aligned: F1 = 2 * 1 / 4
    assert score.reason == "strict: matched book; out of order search"
    assert _score("in_order", made, wanted).value == pytest.approx(0.5)
    assert _score("unordered", made, wanted).value == 1.0


def test_a_flat_list_of_calls_keeps_its_order() -> None:
    score = _score("strict", _calls("b", "a"), ["a", "b"])  # no batches: a sequence
    assert score.value == pytest.approx(0.5)
    assert "out of order" in (score.reason or "")


def test_a_batch_follows_the_expected_order_as_far_as_it_can() -> None:
    # the batch holds a call expected nowhere and one with other arguments: the matches
    # still line up, the substitution and the extra are said as such
    made = [
        ToolUse("weather", SF, batch=0),
        ToolUse("delete", {}, batch=0),
        ToolUse("search", PARIS, batch=0),
        ToolUse("book", LONDON, batch=1),
    ]
    wanted = [ToolUse("search", PARIS), ToolUse("weather", SF), ToolUse("book", PARIS)]
    trajectory = match_trajectory(made, wanted, mode="strict")
    assert trajectory.matched == 2
    assert [(m.expected, m.called, m.arguments_match) for m in trajectory.matches] == [
        (0, 2, True), (1, 0, True), (None, 1, None), (2, 3, False)
    ]  # fmt: skip
    again = match_trajectory(list(reversed(made[:3])) + made[3:], wanted, mode="strict")
    assert again.matched == 2  # the same verdict whatever order the batch was recorded in
