"""promptfoo's ``$ref`` to ``assertionTemplates``: resolved as promptfoo resolves it (the keys
beside ``$ref`` over the template's), in tests, ``defaultTest`` and tests files; anything but a
reference to a template of the same file refused, naming the file and the reference."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from aieval.errors import ConfigError
from aieval.migrate import _pfrefs, import_promptfoo
from aieval.migrate._pfrefs import MAX_REF_DEPTH

TEMPLATES = {
    "polite": {"type": "not-contains", "value": "stupid"},
    "short": {"type": "starts-with", "value": "Paris", "metric": "opening"},
}


def _import(tmp_path: Path, doc: dict[str, Any], text: str | None = None) -> Any:
    folder = tmp_path / "pf"
    folder.mkdir(exist_ok=True)
    path = folder / "promptfooconfig.yaml"
    path.write_text(text or yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return import_promptfoo(path, tmp_path / "out")


def _doc(**extra: Any) -> dict[str, Any]:
    return {
        "prompts": ["Capital of {{country}}?"],
        "providers": ["openai:gpt-4o-mini"],
        "assertionTemplates": TEMPLATES,
        "tests": [
            {
                "vars": {"country": "France"},
                "assert": [
                    {"$ref": "#/assertionTemplates/polite"},
                    {"$ref": "#/assertionTemplates/short", "value": "Lyon"},
                ],
            }
        ],
        **extra,
    }


def _checks(result: Any) -> list[Any]:
    (line,) = result.dataset.read_text(encoding="utf-8").splitlines()
    checks: list[Any] = json.loads(line)["checks"]
    return checks


def test_a_reference_becomes_its_template_with_the_keys_beside_it_on_top(tmp_path: Path) -> None:
    result = _import(tmp_path, _doc())
    assert _checks(result) == [
        {"contains": {"value": "stupid", "negate": True}},
        {"starts_with": {"value": "Lyon", "name": "opening"}},
    ]
    assert result.complete
    # the templates are read, not reported as an ignored key
    assert not any("assertionTemplates" in line.promptfoo for line in result.unmapped)


def test_references_in_default_test_and_a_tests_file_and_chains(tmp_path: Path) -> None:
    folder = tmp_path / "pf"
    folder.mkdir()
    (folder / "tests.yaml").write_text(
        yaml.safe_dump(
            [{"vars": {"country": "Peru"}, "assert": [{"type": "contains", "value": "Lima"}]}]
        ),
        encoding="utf-8",
    )
    doc = _doc(
        defaultTest={"assert": [{"$ref": "#/assertionTemplates/alias"}]},
        tests="file://tests.yaml",
    )
    doc["assertionTemplates"] = {**TEMPLATES, "alias": {"$ref": "#/assertionTemplates/polite"}}
    result = _import(tmp_path, doc)
    eval_doc = yaml.safe_load(result.eval_files[0].read_text(encoding="utf-8"))
    assert eval_doc["default_checks"] == [{"contains": {"value": "stupid", "negate": True}}]


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("#/assertionTemplates/missing", "no assertion template 'missing'"),
        ("other.yaml#/assertionTemplates/polite", "only a reference to this file's"),
        ("https://example.com/t.yaml#/x", "only a reference to this file's"),
        ("file:///etc/passwd", "only a reference to this file's"),
        ("#/tests/0/assert/0", "only a reference to this file's"),
    ],
)
def test_a_missing_or_outside_reference_is_refused_by_file_and_ref(
    tmp_path: Path, ref: str, message: str
) -> None:
    doc = _doc()
    doc["tests"][0]["assert"] = [{"$ref": ref}]
    with pytest.raises(ConfigError) as caught:
        _import(tmp_path, doc)
    text = str(caught.value)
    assert message in text and "promptfooconfig.yaml" in text and repr(ref) in text
    assert not (tmp_path / "out").exists()


def test_a_reference_in_a_tests_file_points_into_that_file(tmp_path: Path) -> None:
    folder = tmp_path / "pf"
    folder.mkdir()
    (folder / "tests.yaml").write_text(
        yaml.safe_dump(
            [{"vars": {"country": "Peru"}, "assert": [{"$ref": "#/assertionTemplates/polite"}]}]
        ),
        encoding="utf-8",
    )
    with pytest.raises(ConfigError, match=r"tests\.yaml: /0/assert/0: .*no assertion template"):
        _import(tmp_path, _doc(tests="file://tests.yaml"))


def test_a_reference_outside_an_assert_list_is_refused(tmp_path: Path) -> None:
    doc = _doc()
    doc["tests"][0]["vars"] = {"country": {"$ref": "#/assertionTemplates/polite"}}
    with pytest.raises(ConfigError, match=r"/tests/0/vars/country: \$ref .*only an assertion"):
        _import(tmp_path, doc)


def test_cycles_and_deep_chains_are_refused(tmp_path: Path) -> None:
    doc = _doc()
    doc["assertionTemplates"] = {
        "a": {"$ref": "#/assertionTemplates/b"},
        "b": {"$ref": "#/assertionTemplates/a"},
    }
    doc["tests"][0]["assert"] = [{"$ref": "#/assertionTemplates/a"}]
    with pytest.raises(ConfigError, match="circular"):
        _import(tmp_path, doc)
    # a template whose nested assert list refers to itself (an assert-set)
    doc["assertionTemplates"] = {
        "set": {"type": "assert-set", "assert": [{"$ref": "#/assertionTemplates/set"}]}
    }
    doc["tests"][0]["assert"] = [{"$ref": "#/assertionTemplates/set"}]
    with pytest.raises(ConfigError, match="circular"):
        _import(tmp_path, doc)
    chain = {f"t{i}": {"$ref": f"#/assertionTemplates/t{i + 1}"} for i in range(MAX_REF_DEPTH + 1)}
    chain[f"t{MAX_REF_DEPTH + 1}"] = {"type": "contains", "value": "x"}
    doc["assertionTemplates"] = chain
    doc["tests"][0]["assert"] = [{"$ref": "#/assertionTemplates/t0"}]
    with pytest.raises(ConfigError, match="in a chain"):
        _import(tmp_path, doc)


def test_templates_repeating_templates_stop_at_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_pfrefs, "MAX_RESOLVED_VALUES", 10_000)  # the same code, sooner
    levels = 12  # 4**11 copies of the innermost template without the bound
    templates: dict[str, Any] = {"l0": {"type": "contains", "value": "x"}}
    for i in range(1, levels):
        refs = [{"$ref": f"#/assertionTemplates/l{i - 1}"} for _ in range(4)]
        templates[f"l{i}"] = {"type": "assert-set", "assert": refs}
    doc = _doc(assertionTemplates=templates)
    doc["tests"][0]["assert"] = [{"$ref": f"#/assertionTemplates/l{levels - 1}"}]
    with pytest.raises(ConfigError, match="more than 10,000 values"):
        _import(tmp_path, doc)
