"""promptfoo's nunjucks templates: the plain substitutions translate, the rest is refused."""

from __future__ import annotations

import pytest

from aieval.errors import ConfigError
from aieval.migrate._nunjucks import js_text, render, to_format, variables


@pytest.mark.parametrize(
    ("template", "expected"),
    [
        ("Translate to {{language}}: {{ input }}", "Translate to {vars[language]}: {vars[input]}"),
        ("{{item.color}} {{ x }}", "{vars[item][color]} {vars[x]}"),
        ('JSON like {"a": 1} stays {{a}}', 'JSON like {{"a": 1}} stays {vars[a]}'),
        ("no variables", "no variables"),
    ],
)
def test_plain_substitutions_become_a_format_template(template: str, expected: str) -> None:
    assert to_format(template, "prompt") == expected
    # the format template prints what promptfoo prints
    values = {"language": "French", "input": "Hi", "item": {"color": "red"}, "x": 3, "a": 1}
    assert expected.format(vars=values) == render(template, values, "prompt")


@pytest.mark.parametrize(
    ("template", "named"),
    [
        (
            "line one\n{% for x in xs %}{{x}}{% endfor %}",
            "line 2: nunjucks tag '{% for x in xs %}'",
        ),
        ("{{ name | upper }}", "line 1: '{{ name | upper }}' is not a plain variable"),
        ("a\nb\n{# note #}", "line 3: nunjucks comment '{# note #}'"),
        ("{{ a + b }}", "'{{ a + b }}' is not a plain variable"),
        ("{{ items[0] }}", "'{{ items[0] }}' is not a plain variable"),
        ("a {{- x }}", "'{{- x }}' is not a plain variable"),  # whitespace control
    ],
)
def test_other_constructs_are_refused_naming_construct_and_line(template: str, named: str) -> None:
    with pytest.raises(ConfigError, match="prompts\\[0\\]") as caught:
        to_format(template, "prompts[0]")
    assert named in str(caught.value)


def test_variables_lists_the_paths_in_order() -> None:
    assert variables("{{b}} {{a.c}} {{b}}", "p") == [("b",), ("a", "c"), ("b",)]


def test_rendering_refuses_a_missing_variable_and_a_structured_one() -> None:
    with pytest.raises(ConfigError, match="'city' is not set"):
        render("{{city}}", {}, "test 1")
    with pytest.raises(ConfigError, match="variable 'xs' is a list"):
        render("{{xs}}", {"xs": [1, 2]}, "test 1")


@pytest.mark.parametrize(
    ("value", "text"), [(True, "true"), (False, "false"), (None, ""), (2.0, "2"), (2.5, "2.5")]
)
def test_scalars_print_as_javascript_prints_them(value: object, text: str) -> None:
    assert js_text(value, "v") == text
