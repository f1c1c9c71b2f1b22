"""An imported promptfoo configuration is data: it reads only inside its folder, writes only
into the output folder, cannot inject keys or code into what is generated, stays within its
bounds, and shows its names on a terminal with control characters escaped."""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from tests.support.cli import run_main

from aieval.datasets import load_dataset
from aieval.errors import ConfigError
from aieval.migrate import import_promptfoo
from aieval.runner import parse_eval

AIEVAL = [sys.executable, "-m", "aieval"]
SECRET = "TOPSECRET-0123456789"
HOSTILE = "a\nimports: [evil.py]\n# \"quoted\" 'single': x\x1b[2J\u202eevil"


def _config(folder: Path, doc: dict[str, Any], name: str = "promptfooconfig.yaml") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(yaml.safe_dump(doc, sort_keys=False), encoding="utf-8")
    return path


def _doc(**change: Any) -> dict[str, Any]:
    return {
        "prompts": ["Answer {{q}}"],
        "providers": ["openai:gpt-4o-mini"],
        "tests": [{"vars": {"q": "hi"}, "assert": [{"type": "contains", "value": "x"}]}],
        **change,
    }


def _all_text(folder: Path) -> str:
    return "".join(p.read_text(encoding="utf-8") for p in folder.iterdir() if p.is_file())


@pytest.fixture
def secret(tmp_path: Path) -> Path:
    path = tmp_path / "secret.txt"
    path.write_text(SECRET, encoding="utf-8")
    return path


# (a) file:// references stay inside the configuration's folder


@pytest.mark.parametrize(
    ("field", "ref"),
    [
        ("vars", "../secret.txt"),
        ("vars", "ABSOLUTE"),
        ("vars", "link.txt"),  # a link inside the folder leading out
        ("prompt", "../secret.txt"),
        ("tests", "../tests.yaml"),
        ("varsfile", "../vars.yaml"),
    ],
)
def test_a_reference_outside_the_folder_is_refused_naming_file_field_and_path(
    tmp_path: Path, secret: Path, field: str, ref: str
) -> None:
    folder = tmp_path / "pf"
    folder.mkdir()
    (folder / "link.txt").symlink_to(secret)
    (tmp_path / "tests.yaml").write_text(
        yaml.safe_dump([{"vars": {"q": SECRET}, "assert": [{"type": "contains", "value": "x"}]}])
    )
    (tmp_path / "vars.yaml").write_text(yaml.safe_dump({"q": SECRET}))
    ref = str(secret) if ref == "ABSOLUTE" else ref
    doc = {
        "vars": _doc(tests=[{"vars": {"q": f"file://{ref}"}, "assert": [{"type": "is-json"}]}]),
        "prompt": _doc(prompts=[f"file://{ref}"]),
        "tests": _doc(tests=f"file://{ref}"),
        "varsfile": _doc(tests=[{"vars": f"file://{ref}", "assert": [{"type": "is-json"}]}]),
    }[field]
    config = _config(folder, doc)
    with pytest.raises(ConfigError) as caught:
        import_promptfoo(config, tmp_path / "out")
    message = str(caught.value)
    assert str(config) in message and f"file://{ref}" in message
    assert "outside the configuration's folder" in message and "--allow-outside" in message
    assert SECRET not in message
    assert not (tmp_path / "out").exists()


def test_the_author_may_allow_a_folder_outside(tmp_path: Path, secret: Path) -> None:
    doc = _doc(tests=[{"vars": {"q": f"file://{secret}"}, "assert": [{"type": "is-json"}]}])
    config = _config(tmp_path / "pf", doc)
    result = import_promptfoo(config, tmp_path / "out", allow_outside=[tmp_path])
    (row,) = (json.loads(line) for line in result.dataset.read_text().splitlines())
    assert row["vars"] == {"q": SECRET}


def test_the_command_takes_allow_outside(
    tmp_path: Path,
    secret: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    doc = _doc(tests=[{"vars": {"q": "file://../secret.txt"}, "assert": [{"type": "is-json"}]}])
    config = _config(tmp_path / "pf", doc)
    command = ["import", "promptfoo", str(config), "-o", str(tmp_path / "out")]
    refused = run_main(capsys, monkeypatch, *command)
    assert refused.returncode == 2 and "outside the configuration's folder" in refused.stderr
    assert "Traceback" not in refused.stderr and not (tmp_path / "out").exists()
    allowed = run_main(capsys, monkeypatch, *command, "--allow-outside", str(secret))
    assert allowed.returncode == 0, allowed.stderr
    assert SECRET in (tmp_path / "out" / "dataset.jsonl").read_text(encoding="utf-8")


# (b) files are written only inside the output folder, all or none


@pytest.mark.parametrize("overwrite", [False, True])
def test_a_link_in_the_output_folder_is_never_written_through(
    tmp_path: Path, overwrite: bool
) -> None:
    config = _config(tmp_path / "pf", _doc())
    out = tmp_path / "out"
    out.mkdir()
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (out / "eval.yaml").symlink_to(outside / "planted.yaml")  # dangling
    (outside / "bashrc").write_text("keep me", encoding="utf-8")
    (out / "import-report.md").symlink_to(outside / "bashrc")
    with pytest.raises(ConfigError, match=r"is a link; the import writes only plain files"):
        import_promptfoo(config, out, overwrite=overwrite)
    assert sorted(p.name for p in outside.iterdir()) == ["bashrc"]
    assert (outside / "bashrc").read_text(encoding="utf-8") == "keep me"
    assert sorted(p.name for p in out.iterdir()) == ["eval.yaml", "import-report.md"]


def test_an_output_folder_that_is_a_link_is_refused(tmp_path: Path) -> None:
    config = _config(tmp_path / "pf", _doc())
    target = tmp_path / "elsewhere"
    target.mkdir()
    (tmp_path / "out").symlink_to(target)
    with pytest.raises(ConfigError, match="the output folder is a link"):
        import_promptfoo(config, tmp_path / "out")
    assert list(target.iterdir()) == []


def test_a_failed_write_leaves_no_file_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = _config(tmp_path / "pf", _doc())
    out = tmp_path / "out"
    real_fsync = os.fsync
    calls = []

    def failing_fsync(fd: int) -> None:
        calls.append(fd)
        if len(calls) == 2:  # the second file: the disk is full
            raise OSError(28, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", failing_fsync)
    with pytest.raises(ConfigError, match="cannot write: No space left on device"):
        import_promptfoo(config, out)
    monkeypatch.undo()
    assert list(out.iterdir()) == []  # neither a file nor a temporary one


# (c) generated files come from emitters: no text of the configuration injects a key or code


def test_hostile_names_round_trip_through_the_eval_file_and_inject_nothing(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "pf"
    doc = {
        "description": HOSTILE,
        "prompts": [HOSTILE + " {{q}}"],
        "providers": ["openai:gpt-4o-mini"],
        "defaultTest": {"assert": [{"type": "contains", "value": HOSTILE}]},
        "tests": [
            {
                "description": HOSTILE,
                "vars": {"q": HOSTILE},
                "metadata": {HOSTILE: HOSTILE},
                "assert": [{"type": "icontains", "value": HOSTILE}],
            }
        ],
    }
    config = _config(folder, doc, name="x\nimports: [evil.py]\n#: y.yaml")
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "evil.py").write_text("raise SystemExit('ran')\n", encoding="utf-8")
    result = import_promptfoo(config, tmp_path / "out")
    (eval_file,) = result.eval_files
    parsed = yaml.safe_load(eval_file.read_text(encoding="utf-8"))
    assert parsed == {
        "name": "a-imports-evil-py-quoted-single-x-2j-evil",
        "dataset": "dataset.jsonl",
        "target": {
            "provider": "openai",
            "model": "gpt-4o-mini",
            "prompt": HOSTILE.replace("{", "{{").replace("}", "}}") + " {vars[q]}",
        },
        "default_checks": [{"contains": {"value": HOSTILE}}],
    }
    (row,) = load_dataset(result.dataset)
    assert row.fields["vars"] == {"q": HOSTILE}
    assert row.metadata["description"] == HOSTILE and row.metadata[HOSTILE] == HOSTILE
    # the eval file is read as aieval reads it, and imports nothing
    spec = parse_eval(parsed, source=str(eval_file), base_dir=eval_file.parent)
    assert spec is not None


def test_hostile_names_and_values_cannot_add_code_to_the_stub_module(tmp_path: Path) -> None:
    hostile = HOSTILE + '"""\nimport os; os.system("x")\n"""\\'
    doc = _doc(
        tests=[
            {
                "vars": {"q": "hi"},
                "assert": [
                    {"type": "javascript", "value": hostile},
                    {"type": "llm-rubric", "value": hostile + '"'},
                ],
            }
        ]
    )
    config = _config(tmp_path / "pf", doc, name='c"""\nimport os\n""".yaml')
    result = import_promptfoo(config, tmp_path / "out")
    assert result.stubs is not None
    module = ast.parse(result.stubs.read_text(encoding="utf-8"))
    kinds = [type(node).__name__ for node in module.body]
    assert (
        kinds
        == ["Expr", "ImportFrom", "ImportFrom", "ImportFrom", "ImportFrom"] + ["FunctionDef"] * 2
    )
    for function in module.body[5:]:
        assert isinstance(function, ast.FunctionDef)
        assert [type(node).__name__ for node in function.body] == ["Expr", "Raise"]
    text = result.stubs.read_text(encoding="utf-8")
    assert "\x1b" not in text and "\u202e" not in text


# (d) bounded reading: aliases, sizes, and what an import makes


def _bomb(levels: int, width: int) -> str:
    lines = [f"l0: &l0 [{', '.join(['lol'] * width)}]"]
    for n in range(1, levels):
        lines.append(f"l{n}: &l{n} [{', '.join([f'*l{n - 1}'] * width)}]")
    return "\n".join(lines) + "\n"


def test_an_alias_bomb_in_a_vars_file_is_refused_naming_the_file(tmp_path: Path) -> None:
    folder = tmp_path / "pf"
    folder.mkdir()
    bomb = _bomb(6, 11)  # 11**6 = 1.8 million values from under 500 bytes
    assert len(bomb) < 500
    (folder / "vars.yaml").write_text(bomb, encoding="utf-8")
    test = {"vars": {"q": "hi", "big": "file://vars.yaml"}, "assert": [{"type": "is-json"}]}
    doc = _doc(tests=[test])
    with pytest.raises(ConfigError, match=r"vars\.yaml.*alias bomb"):
        import_promptfoo(_config(folder, doc), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_repeating_a_large_value_in_every_test_stops_at_the_bound(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("aieval.migrate._promptfoo.MAX_IMPORT_BYTES", 1_000_000)
    folder = tmp_path / "pf"
    folder.mkdir()
    (folder / "vars.yaml").write_text(_bomb(3, 30), encoding="utf-8")  # 27,000 values
    test = {"vars": {"q": "hi", "big": "file://vars.yaml"}, "assert": [{"type": "is-json"}]}
    with pytest.raises(ConfigError, match=r"more than 1,000,000 bytes.*write the values"):
        import_promptfoo(_config(folder, _doc(tests=[test] * 20)), tmp_path / "out")
    assert not (tmp_path / "out").exists()


def test_a_template_repeating_a_variable_is_bounded(tmp_path: Path) -> None:
    folder = tmp_path / "pf"
    folder.mkdir()
    (folder / "doc.txt").write_text("x" * 100_000, encoding="utf-8")
    test = {
        "vars": {"q": "file://doc.txt"},
        "assert": [{"type": "contains", "value": "{{q}}" * 20}],
    }
    result = import_promptfoo(_config(folder, _doc(tests=[test])), tmp_path / "out")
    (line,) = result.unmapped
    assert "renders to more than 1,000,000 characters" in line.note
    assert result.dataset.stat().st_size < 300_000


def test_a_large_json_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    folder = tmp_path / "pf"
    folder.mkdir()
    (folder / "vars.json").write_text(json.dumps({"q": "x" * 1_100_000}), encoding="utf-8")
    doc = _doc(tests=[{"vars": "file://vars.json", "assert": [{"type": "is-json"}]}])
    with pytest.raises(ConfigError, match=r"vars\.json: file is \d+ bytes, larger than"):
        import_promptfoo(_config(folder, doc), tmp_path / "out")


# (e) what is printed shows control and bidi characters as escapes


def test_the_report_and_the_command_escape_control_and_bidi_characters(tmp_path: Path) -> None:
    evil = "evil\x1b[2J\x1b]0;title\x07\u202eexe.txt"
    doc = _doc(providers=["openai:gpt-4o-mini", f"file://{evil}.py"])
    doc["tests"][0]["assert"].append({"type": "javascript", "value": evil})
    config = _config(tmp_path / "pf", doc)
    # the one real process for ``aieval import`` in this file: the bytes a pipe receives
    done = subprocess.run(
        [*AIEVAL, "import", "promptfoo", str(config), "-o", str(tmp_path / "out")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    for text in (done.stdout, done.stderr, (tmp_path / "out" / "import-report.md").read_text()):
        assert "\x1b" not in text and "\u202e" not in text and "\x07" not in text
    assert "evil\\x1b[2J" in done.stdout and "\\u202eexe" in done.stdout


def test_an_error_naming_a_hostile_key_is_one_escaped_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    doc = _doc(tests=[{"vars": {"q": "hi", "k\n\x1b[31mok: fine": [1, 2]}, "assert": []}])
    config = _config(tmp_path / "pf", doc)
    done = run_main(
        capsys, monkeypatch, "import", "promptfoo", str(config), "-o", str(tmp_path / "out")
    )
    assert done.returncode == 2
    assert done.stderr.count("\n") == 1 and "\x1b" not in done.stderr
    assert "k\\x0a\\x1b[31mok: fine" in done.stderr


# the endpoint and the key a request carries are the eval author's


def test_a_provider_endpoint_and_key_variable_need_the_authors_flag(tmp_path: Path) -> None:
    evil = {
        "id": "openai:chat:gpt-4o",
        "config": {"apiBaseUrl": "https://collector.invalid/v1", "apiKeyEnvar": "AWS_SECRET"},
    }
    config = _config(tmp_path / "pf", _doc(providers=["openai:gpt-4o-mini", evil]))
    result = import_promptfoo(config, tmp_path / "out")
    (eval_file,) = result.eval_files
    assert "collector.invalid" not in eval_file.read_text(encoding="utf-8")
    (line,) = [u for u in result.unmapped if u.promptfoo == "openai:chat:gpt-4o"]
    assert "apiBaseUrl 'https://collector.invalid/v1'" in line.note
    assert "apiKeyEnvar 'AWS_SECRET'" in line.note and "--allow-endpoints" in line.note
    alone = _config(tmp_path / "pf2", _doc(providers=[evil]))
    with pytest.raises(ConfigError, match=r"none of the providers.*--allow-endpoints"):
        import_promptfoo(alone, tmp_path / "out2")
    allowed = import_promptfoo(alone, tmp_path / "out2", allow_endpoints=True)
    target = yaml.safe_load(allowed.eval_files[0].read_text(encoding="utf-8"))["target"]
    assert target["base_url"] == "https://collector.invalid/v1"
    assert target["api_key_env"] == "AWS_SECRET"


# the rows' checks are read by the row loader, and set only what a row may set

#: every option the importer writes on a row's check: what the check compares with (and the
#: common name, weight, negate); never an endpoint, a key, a provider or code to run
ROW_OPTIONS_WRITTEN = {
    "contains": {"value", "negate", "name", "weight"},
    "icontains": {"value"},
    "starts_with": {"value"},
    "contains_any": {"values"},
    "equals": {"value"},
    "regex": {"pattern"},
    "json_schema": {"schema", "contains"},
    "is_xml": set(),
    "is_sql": {"dialect"},
    "levenshtein": {"value", "max_distance"},
    "latency": {"max_s"},
    "cost": {"max_usd"},
    "similar": {"value", "threshold", "embedding_model"},
    "finish_reason": {"value"},
    "python": {"expression"},
}


def test_the_rows_checks_load_through_the_row_loader_with_data_options_only(
    tmp_path: Path,
) -> None:
    asserts = [
        {"type": "not-contains", "value": "{{q}}", "metric": "m", "weight": 2},
        {"type": "icontains", "value": "a"},
        {"type": "starts-with", "value": "a"},
        {"type": "contains-any", "value": ["a", "b"]},
        {"type": "equals", "value": "a"},
        {"type": "regex", "value": "^a"},
        {"type": "contains-json", "value": {"type": "object"}},
        {"type": "is-xml"},
        {"type": "is-sql"},
        {"type": "levenshtein", "value": "a", "threshold": 2},
        {"type": "latency", "threshold": 500},
        {"type": "cost", "threshold": 0.01},
        {"type": "similar", "value": "a", "provider": "openai:embedding:text-embedding-3-small"},
        {"type": "finish-reason", "value": "stop"},
        {"type": "python", "value": "len(output) > 1"},
    ]
    doc = _doc(tests=[{"vars": {"q": "hi"}, "assert": asserts}])
    result = import_promptfoo(_config(tmp_path / "pf", doc), tmp_path / "out")
    assert not result.unmapped
    (example,) = load_dataset(result.dataset)
    written = {c.check: set(c.options) for c in example.checks}
    written["contains"].add("name")  # the loader keeps the name in the check's key
    assert written == ROW_OPTIONS_WRITTEN


def test_model_outputs_may_be_larger_than_a_configuration(tmp_path: Path) -> None:
    asserts = tmp_path / "asserts.yaml"
    asserts.write_text(yaml.safe_dump([{"type": "contains", "value": "a"}]), encoding="utf-8")
    outputs = tmp_path / "outputs.json"
    outputs.write_text(json.dumps(["a" * 1000] * 1500), encoding="utf-8")  # 1.5 MB
    result = import_promptfoo(asserts, tmp_path / "out", model_outputs=outputs)
    assert len(result.dataset.read_text(encoding="utf-8").splitlines()) == 1500


def test_a_lone_surrogate_in_a_json_tests_file_is_written_as_its_escape(tmp_path: Path) -> None:
    folder = tmp_path / "pf"
    folder.mkdir()
    test = {"vars": {"q": "a\udc80b"}, "assert": [{"type": "is-json"}]}
    (folder / "tests.json").write_text(json.dumps([test]), encoding="utf-8")
    result = import_promptfoo(_config(folder, _doc(tests="file://tests.json")), tmp_path / "out")
    (row,) = load_dataset(result.dataset)
    assert row.fields["vars"] == {"q": "a\udc80b"}
