"""promptfoo's YAML is read as promptfoo's js-yaml reads it (YAML 1.2 core types, timestamps),
not as YAML 1.1: a value must reach the prompt as promptfoo prints it, or be refused."""

from __future__ import annotations

import datetime
import json
import math
from pathlib import Path
from typing import Any

import pytest

from aieval.errors import ConfigError
from aieval.migrate import import_promptfoo
from aieval.migrate._jsyaml import load_promptfoo_yaml


@pytest.mark.parametrize(
    ("scalar", "value"),
    [
        pytest.param("1:30", "1:30", id="sexagesimal-is-text"),
        pytest.param("0755", 755, id="leading-zero-is-decimal"),
        pytest.param("0o17", 15, id="octal"),
        pytest.param("0x1F", 31, id="hex"),
        pytest.param("0b101", 5, id="binary"),
        pytest.param("1_000", 1000, id="underscores"),
        pytest.param("1_", "1_", id="trailing-underscore-is-text"),
        pytest.param("+12", 12, id="plus-sign"),
        pytest.param("Yes", "Yes", id="yes-is-text"),
        pytest.param("on", "on", id="on-is-text"),
        pytest.param("n", "n", id="n-is-text"),
        pytest.param("True", True, id="true"),
        pytest.param("FALSE", False, id="false"),
        pytest.param("~", None, id="tilde"),
        pytest.param("Null", None, id="null"),
        pytest.param("=", "=", id="equals-sign-is-text"),
        pytest.param("1e3", 1000.0, id="exponent-without-dot"),
        pytest.param(".5", 0.5, id="leading-dot"),
        pytest.param("-.5", "-.5", id="signed-leading-dot-is-text"),
        pytest.param("-.inf", -math.inf, id="minus-infinity"),
        pytest.param("2024-01-31", datetime.date(2024, 1, 31), id="date"),
        pytest.param(
            "2024-01-31 10:00:00Z",
            datetime.datetime(2024, 1, 31, 10, tzinfo=datetime.UTC),
            id="timestamp",
        ),
    ],
)
def test_scalars_read_as_js_yaml_reads_them(scalar: str, value: Any) -> None:
    assert load_promptfoo_yaml(f"v: {scalar}\n", "x.yaml") == {"v": value}


def test_keys_read_as_js_yaml_reads_them() -> None:
    assert load_promptfoo_yaml("yes: 1\nno: 2\n", "x.yaml") == {"yes": 1, "no": 2}


def test_the_bounds_of_the_bounded_loader_hold() -> None:
    with pytest.raises(ConfigError, match=r"x\.yaml.*duplicate key 'a'"):
        load_promptfoo_yaml("a: 1\na: 2\n", "x.yaml")
    refs = ", ".join(["*a"] * 101)
    with pytest.raises(ConfigError, match=r"x\.yaml.*more than 100 aliases"):
        load_promptfoo_yaml(f"a: &a [1]\nb: [{refs}]\n", "x.yaml")


def _import(tmp_path: Path, config: str) -> Any:
    folder = tmp_path / "pf"
    folder.mkdir()
    (folder / "promptfooconfig.yaml").write_text(config, encoding="utf-8")
    return import_promptfoo(folder / "promptfooconfig.yaml", tmp_path / "out")


def test_variables_reach_the_prompt_as_promptfoo_prints_them(tmp_path: Path) -> None:
    result = _import(
        tmp_path,
        "prompts: ['At {{time}}, mode {{mode}}: {{answer}} {{sign}}']\n"
        "providers: [openai:gpt-4o-mini]\n"
        "tests:\n"
        "  - vars: {time: 1:30, mode: 0755, answer: Yes, sign: =, when: 2024-01-31}\n"
        "    metadata: {added: 2024-02-01 09:30:00}\n"
        "    assert: [{type: contains, value: '{{answer}}'}]\n",
    )
    (row,) = (json.loads(line) for line in result.dataset.read_text().splitlines())
    assert row["vars"] == {
        "time": "1:30",
        "mode": 755,
        "answer": "Yes",
        "sign": "=",
        "when": "2024-01-31",
    }
    assert row["metadata"]["added"] == "2024-02-01T09:30:00"
    assert row["checks"] == [{"contains": {"value": "Yes"}}]


def test_a_date_printed_into_a_prompt_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"vars\.when = datetime\.date.*prints differently"):
        _import(
            tmp_path,
            "prompts: ['On {{when}}']\nproviders: [openai:gpt-4o-mini]\n"
            "tests: [{vars: {when: 2024-01-31}, assert: [{type: is-json}]}]\n",
        )


def test_a_date_in_an_assertion_value_is_left_for_a_stub(tmp_path: Path) -> None:
    result = _import(
        tmp_path,
        "prompts: ['Hi {{q}}']\nproviders: [openai:gpt-4o-mini]\n"
        "tests: [{vars: {q: a, when: 2024-01-31}, "
        "assert: [{type: contains, value: 'on {{when}}'}]}]\n",
    )
    (line,) = result.unmapped
    assert "is a date, which JavaScript prints otherwise" in line.note
