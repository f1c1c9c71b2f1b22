"""Each check's own edge cases (the shared invariants are in test_checks_common.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from aieval._types import Example
from aieval.errors import ConfigError, ScorerError
from aieval.scorers import (
    contains,
    contains_all,
    contains_any,
    equals,
    icontains,
    icontains_all,
    is_html,
    is_sql,
    is_xml,
    json_schema,
    levenshtein,
    python,
    regex,
    starts_with,
    word_count,
)


def test_contains_takes_the_expected_answer_when_no_value_is_given() -> None:
    assert contains("the answer is Paris", "Paris").value == 1.0
    assert contains("the answer is Lyon", "Paris").reason == "output does not contain 'Paris'"
    assert contains_any("a cat", ["dog", "cat"]).value == 1.0  # a list expected gives values
    assert contains_all("a cat", ["dog", "cat"]).reason == "output lacks 'dog'"
    assert contains(42, 42).value == 1.0  # numbers compare as their text


@pytest.mark.parametrize("expected", [None, {"a": 1}, ["a", ["b"]]])
def test_a_check_without_a_usable_reference_is_that_samples_error(expected: object) -> None:
    with pytest.raises(ScorerError, match="contains"):
        contains_any("text", expected)
    with pytest.raises(ScorerError, match="'equals'"):
        equals("text", expected)


def test_case_folding_covers_unicode() -> None:
    assert icontains("STRASSE", value="straße").value == 1.0  # casefold: ß folds to ss
    assert icontains("Grüße aus KÖLN", value="köln").value == 1.0
    assert icontains_all("ΣΊΣΥΦΟΣ", values=["σίσυφος"]).value == 1.0


def test_empty_values_are_refused_when_configured() -> None:
    with pytest.raises(ConfigError, match=r"^contains\.value: an empty text is in every output"):
        contains.with_options(value="")
    with pytest.raises(ConfigError, match=r"^contains_all\.values: give at least one text"):
        contains_all.with_options(values=[])


def test_starts_with_does_not_trim() -> None:
    assert starts_with(" Yes", value="Yes").value == 0.0
    assert starts_with("Yes!", value="Yes").value == 1.0


def test_regex_search_full_match_and_flags() -> None:
    assert (
        regex("Order 1234 ok", pattern=r"\d{4}").reason == r"output has a match for /\d{4}/: '1234'"
    )
    assert regex("Order 1234 ok", pattern=r"\d{4}", full=True).value == 0.0
    assert regex("a\nB", pattern="^b$", flags="im").value == 1.0
    assert regex("a\nb", pattern="a.b", flags="s", full=True).value == 1.0
    with pytest.raises(ConfigError, match=r"regex\.flags: unknown flag 'q'"):
        regex.with_options(pattern="x", flags="iq")


def test_equals_is_byte_exact_and_says_where_it_differs() -> None:
    assert equals("Paris", value="Paris").value == 1.0
    assert equals("Paris\n", value="Paris").reason == (
        "output differs from 'Paris' (first difference at character 5)"
    )
    assert equals("paris", value="Paris").reason.endswith("(first difference at character 0)")
    assert equals("\u00e9", value="e\u0301").value == 0.0  # composed vs decomposed é


def test_levenshtein_graded_and_bounded() -> None:
    graded = levenshtein("kitten", value="sitting")
    assert graded.raw == 3 and graded.value == pytest.approx(1 - 3 / 7)
    assert levenshtein("", value="").value == 1.0
    assert levenshtein("kitten", value="sitting", max_distance=2).reason == (
        "edit distance 3 > 2 to 'sitting'"
    )
    with pytest.raises(ConfigError, match=r"levenshtein\.negate: needs max_distance"):
        levenshtein.with_options(value="x", negate=True)


def test_word_count_bounds() -> None:
    assert word_count("a b c", min_words=3, max_words=3).value == 1.0
    assert word_count("a b", min_words=3).reason == "2 words, below min_words 3"
    assert word_count("", max_words=0).value == 1.0
    with pytest.raises(ConfigError, match=r"word_count\.min_words: 5 is above max_words 2"):
        word_count.with_options(min_words=5, max_words=2)


SCHEMA = {
    "type": "object",
    "properties": {"total": {"type": "number"}},
    "required": ["total"],
}


def test_json_schema_reports_the_failing_path() -> None:
    assert json_schema('{"total": 3}', schema=SCHEMA).value == 1.0
    assert json_schema('{"total": "x"}', schema=SCHEMA).reason == (
        "JSON at $.total fails the schema: 'x' is not of type 'number'"
    )
    assert json_schema("{total: 3}").reason == "output is not JSON"
    assert json_schema("[1, 2]").value == 1.0  # no schema: any JSON


def test_contains_json_takes_the_first_valid_embedded_value() -> None:
    text = 'First {"total": "x"} then ```json\n{"total": 4.5}\n``` done'
    assert json_schema(text, schema=SCHEMA, contains=True).value == 1.0
    assert json_schema(text, schema=SCHEMA).value == 0.0  # the whole text is not JSON
    only_bad = json_schema('see {"total": "x"}', schema=SCHEMA, contains=True)
    assert only_bad.value == 0.0 and "$.total" in (only_bad.reason or "")
    assert json_schema("no json here", contains=True).reason == (
        "output contains no JSON object or array"
    )


def test_json_schema_honours_the_schemas_draft() -> None:
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "type": "integer",
        "exclusiveMinimum": True,
        "minimum": 0,
    }
    assert json_schema("0", schema=draft4).value == 0.0
    assert json_schema("1", schema=draft4).value == 1.0


def test_is_xml_refuses_entity_expansion() -> None:
    bomb = '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaa">]><l>&a;&a;</l>'
    result = is_xml(bomb)
    assert result.value == 0.0 and "unsafe" in (result.reason or "")
    assert is_xml("<a>1</a><b/>").value == 0.0  # two roots
    assert is_xml("  <a x='1'>é</a>\n").reason == "output is XML with root <a>"


def test_is_html_documents_and_fragments() -> None:
    page = "<!DOCTYPE html><html><head><title>t</title></head><body><p>x</p></body></html>"
    assert is_html(page).value == 1.0
    assert is_html("<table><tr><td>1</td></tr></table>").value == 1.0
    unclosed = is_html("<b>bold")
    assert unclosed.value == 0.0 and "expected-closing-tag-but-got-eof" in (unclosed.reason or "")
    assert is_html("just text").reason == "output has no HTML element"


def test_is_sql_statements_and_dialects() -> None:
    assert is_sql("CREATE TABLE t (a INT); INSERT INTO t VALUES (1); SELECT a FROM t;").raw == 3
    assert is_sql("SELECT FROM WHERE").reason.startswith("output is not SQL: ")
    assert is_sql("42").value == 0.0
    assert is_sql("SELECT a FROM t LIMIT 1", dialect="postgres").value == 1.0
    assert is_sql("").reason == "output has no SQL statement"
    # sqlglot's own parser fails on some malformed text: a score with the reason, no error
    crashed = is_sql("{=", dialect="sqlite")
    assert (crashed.value, crashed.reason) == (
        0.0,
        "output is not SQL: sqlglot's parser failed on it (AttributeError)",
    )


def test_python_sees_output_expected_and_row() -> None:
    example = Example("1", "q", expected="4", fields={"total": 4})
    ok = python(
        "total: 4",
        "4",
        expression="output.endswith(expected) and row['total'] == 4",
        example=example,
    )
    assert (
        ok.value == 1.0 and ok.reason == "output.endswith(expected) and row['total'] == 4 is True"
    )
    assert python('{"a": [1, 2]}', expression="len(json_loads(output)['a']) == 2").value == 1.0
    assert python("abc", expression="1 / (len(output) + 1)").value == 0.25


@pytest.mark.parametrize(
    "expression",
    [
        "__import__('os').system('true')",
        "output.__class__",
        "open('/etc/passwd')",
        "eval('1')",
        "(lambda: 1)()",
    ],
)
def test_python_runs_no_code_beyond_its_whitelist(expression: str) -> None:
    with pytest.raises((ScorerError, ConfigError)):
        python("text", expression=expression)


def test_the_model_output_is_data_never_code() -> None:
    injected = "__import__('os').system('echo pwned')"
    assert python(injected, expression="output == output.strip()").value == 1.0
    assert python(injected, expression="'import' in output").value == 1.0


@pytest.mark.parametrize(
    ("expression", "message"),
    [
        ("output", "gave str 'abc'"),
        ("2.5", "gave float 2.5"),
        ("1 / 0", "raised ZeroDivisionError"),
    ],
)
def test_python_results_other_than_a_bool_or_a_score_are_errors(
    expression: str, message: str
) -> None:
    with pytest.raises(ScorerError, match=message):
        python("abc", expression=expression)


def test_json_schema_never_fetches_a_referenced_schema(tmp_path: Path) -> None:
    import http.server
    import threading

    hits: list[str] = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            self.send_response(200)
            self.end_headers()
            self.wfile.write(b'{"required": ["secret"]}')

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        outside = tmp_path / "outside.json"
        outside.write_text('{"required": ["secret"]}')
        url = f"http://127.0.0.1:{server.server_port}/x.json"
        for ref in (url, outside.as_uri()):
            with pytest.raises(ConfigError, match=r"names a file or URL; schemas are never"):
                json_schema.with_options(schema={"$ref": ref})
        # a relative reference under a web $id resolves nowhere: that sample's error, no request
        schema = {"$id": f"http://127.0.0.1:{server.server_port}/", "$ref": "x.json"}
        with pytest.raises(Exception, match=r"x\.json"):
            json_schema('{"a": 1}', schema=schema)
    finally:
        server.shutdown()
    assert hits == []
    local = {"$defs": {"o": {"required": ["a"]}}, "$ref": "#/$defs/o"}
    assert json_schema('{"a": 1}', schema=local).value == 1.0


def test_a_pattern_that_backtracks_without_end_is_that_samples_error_not_a_hung_run() -> None:
    crafted = "x" * 5000
    with pytest.raises(
        ScorerError,
        match=r"regex: /\(x\+x\+\)\+y/ on this output \(5000 characters\) took over 1 s",
    ):
        regex(crafted, pattern="(x+x+)+y")
    with pytest.raises(
        ScorerError, match=r"python: \"re_search\('\(x\+x\+\)\+y', output\).*took over"
    ):
        python(crafted, expression="re_search('(x+x+)+y', output) is None")
    # the same patterns on ordinary outputs still answer
    assert regex("xxy", pattern="(x+x+)+y").value == 1.0
    assert python("xxy", expression="re_search('(x+x+)+y', output) is not None").value == 1.0


def test_a_backtracking_pattern_in_a_run_errors_that_sample_only() -> None:
    from aieval import run

    rows = [
        {"id": "crafted", "prompt": "q", "expected": "", "prediction": "x" * 5000},
        {"id": "plain", "prompt": "q", "expected": "", "prediction": "xxy"},
    ]
    result = run(
        name="redos",
        dataset=rows,
        scorers=[regex.with_options(pattern="(x+x+)+y")],
        store=False,
    )
    by_id = {s.id: s.scores["regex"] for s in result.samples}
    assert by_id["plain"].value == 1.0
    assert by_id["crafted"].value is None and "took over 1 s" in (by_id["crafted"].error or "")


@pytest.mark.parametrize(
    "expression",
    [
        "output.zfill(10**9) == ''",
        "output.ljust(10**8) == ''",
        "output.center(2 * 10**7) == ''",
        "output.expandtabs(10**9) == ''",
        "output.replace('', output * 80) == ''",
        "(output * 80).join([output] * 2000) == ''",
        "'%0999999999d' % 1 == ''",
    ],
)
def test_python_refuses_to_build_huge_text_before_allocating_it(expression: str) -> None:
    import resource

    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    with pytest.raises(ScorerError, match=r"would build more than 10,000,000 characters"):
        python("a\tb" * 400, expression=expression)
    # nothing near the size asked for was allocated (ru_maxrss is in KiB)
    assert resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before < 200_000


def test_python_ordinary_padding_and_joins_still_work() -> None:
    assert python("abc", expression="output.zfill(5) == '00abc'").value == 1.0
    assert python("a b", expression="'-'.join(output.split()) == 'a-b'").value == 1.0
    assert python("x", expression="'%05d' % 3 == '00003'").value == 1.0
    assert python("7", expression="int(output) % 2 == 1").value == 1.0
