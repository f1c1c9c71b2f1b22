"""promptfoo's example configurations, imported and graded offline, give promptfoo's own verdict
on every test x fixed output (``oracle.json``, recorded by ``record_oracle.py`` with promptfoo
itself), and the translated prompt templates print what promptfoo's templates print."""

from __future__ import annotations

import ast
import json
import shutil
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml

from aieval import Example
from aieval.migrate import import_promptfoo
from aieval.runner import parse_eval, run_eval
from aieval.runner._target import ProviderTarget

HERE = Path(__file__).parent
ORACLE = json.loads((HERE / "oracle.json").read_text(encoding="utf-8"))
FIXED = yaml.safe_load((HERE / "fixed_outputs.yaml").read_text(encoding="utf-8"))
#: a provider that is never called: the template alone prints the prompt
OFFLINE = SimpleNamespace(name="offline")
CONFIGS = ["getting-started", "json-output", "self-grading", "assert-types"]
#: promptfoo's files per example (origins in README.md); the rest here is aieval's own
PROMPTFOO_FILES = {
    "getting-started": {"promptfooconfig.yaml"},
    "json-output": {"promptfooconfig.yaml"},
    "self-grading": {"promptfooconfig.yaml", "prompts.txt"},
    "standalone-assertions": {"asserts.yaml", "outputs.json", "outputs-with-tags.json"},
}


def _stub_names(module: Path) -> set[str]:
    tree = ast.parse(module.read_text(encoding="utf-8"))
    return {
        node.name
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and not node.name.startswith("_")
    }


def _fill_stubs(imported: Any, example: str) -> None:
    """Replace the generated stubs by their Python versions (``filled/``), as a user would;
    the two modules must define the same checks."""
    if imported.stubs is None:
        assert not (HERE / "filled" / f"{example.replace('-', '_')}.py").exists()
        return
    filled = HERE / "filled" / f"{example.replace('-', '_')}.py"
    assert _stub_names(imported.stubs) == _stub_names(filled)
    shutil.copy(filled, imported.stubs)


def _graded(eval_file: Path, rows: list[dict[str, Any]]) -> dict[str, bool]:
    """Run ``eval_file`` on ``rows`` (recorded predictions, no target) and each row's verdict."""
    doc = yaml.safe_load(eval_file.read_text(encoding="utf-8"))
    doc.pop("target", None)
    doc.pop("models", None)
    recorded = eval_file.parent / "recorded.jsonl"
    recorded.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    doc["dataset"] = recorded.name
    config = parse_eval(doc, source=str(eval_file), base_dir=eval_file.parent)
    (result,) = run_eval(config, store=False)
    return {s.id: bool(s.passed) for s in result.samples}


@pytest.mark.parametrize("example", CONFIGS)
def test_the_imported_eval_gives_promptfoos_verdicts(example: str, tmp_path: Path) -> None:
    imported = import_promptfoo(HERE / example / "promptfooconfig.yaml", tmp_path / example)
    _fill_stubs(imported, example)
    rows = [json.loads(line) for line in imported.dataset.read_text(encoding="utf-8").splitlines()]
    recorded = [
        {**row, "id": f"{row['metadata']['promptfoo_test']}/{k}", "prediction": output}
        for row in rows
        for k, output in enumerate(FIXED[example][row["metadata"]["promptfoo_test"]], 1)
    ]
    expected = ORACLE["outcomes"][example]
    assert len(recorded) == len(expected)
    for eval_file in imported.eval_files:  # prompts x providers: the same checks in each
        assert _graded(eval_file, recorded) == expected, eval_file.name


def test_the_standalone_assertions_give_promptfoos_verdicts(tmp_path: Path) -> None:
    source = HERE / "standalone-assertions"
    imported = import_promptfoo(
        source / "asserts.yaml", tmp_path / "out", model_outputs=source / "outputs.json"
    )
    _fill_stubs(imported, "standalone-assertions")
    rows = [json.loads(line) for line in imported.dataset.read_text(encoding="utf-8").splitlines()]
    recorded = [{**row, "id": f"{row['id']}/1"} for row in rows]
    (eval_file,) = imported.eval_files
    assert _graded(eval_file, recorded) == ORACLE["outcomes"]["standalone-assertions"]


def test_outputs_with_tags_read_as_the_same_outputs(tmp_path: Path) -> None:
    source = HERE / "standalone-assertions"
    plain = import_promptfoo(
        source / "asserts.yaml", tmp_path / "plain", model_outputs=source / "outputs.json"
    )
    tagged = import_promptfoo(
        source / "asserts.yaml", tmp_path / "tags", model_outputs=source / "outputs-with-tags.json"
    )
    assert plain.dataset.read_text(encoding="utf-8") == tagged.dataset.read_text(encoding="utf-8")


@pytest.mark.parametrize("example", CONFIGS)
def test_the_prompt_templates_print_what_promptfoo_prints(example: str, tmp_path: Path) -> None:
    imported = import_promptfoo(HERE / example / "promptfooconfig.yaml", tmp_path / example)
    rows = [json.loads(line) for line in imported.dataset.read_text(encoding="utf-8").splitlines()]
    templates = []
    for eval_file in imported.eval_files:
        template = yaml.safe_load(eval_file.read_text(encoding="utf-8"))["target"]["prompt"]
        if template not in templates:
            templates.append(template)
    printed = {}
    for p, template in enumerate(templates, 1):
        target = ProviderTarget(OFFLINE, "model", template=template)  # type: ignore[arg-type]
        for row in rows:
            example_row = Example(id=row["id"], input=row["input"], fields=row)
            (message,) = target.messages(example_row)
            printed[f"{p}/{row['metadata']['promptfoo_test']}"] = message["content"]
    assert printed == ORACLE["prompts"][example]


def test_the_examples_are_promptfoos_files_with_their_licence() -> None:
    for example, names in PROMPTFOO_FILES.items():
        assert {f.name for f in (HERE / example).iterdir()} == names, example
    assert "MIT License" in (HERE / "LICENSE").read_text(encoding="utf-8")
    readme = (HERE / "README.md").read_text(encoding="utf-8")
    for example, names in PROMPTFOO_FILES.items():
        for name in names:
            assert f"`{example}/{name}`" in readme


def test_the_imported_eval_calls_the_model_with_promptfoos_prompts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """getting-started through the real provider path (a loopback OpenAI-compatible server):
    each model gets the prompt promptfoo renders, and each fixed answer gets promptfoo's
    verdict."""
    from tests.support.openai_server import OpenAIServer, Reply

    example = "getting-started"
    imported = import_promptfoo(HERE / example / "promptfooconfig.yaml", tmp_path / "out")
    rendered = ORACLE["prompts"][example]
    rows = [json.loads(line) for line in imported.dataset.read_text(encoding="utf-8").splitlines()]
    numbers = {row["id"]: row["metadata"]["promptfoo_test"] for row in rows}
    with OpenAIServer() as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-loopback")
        for p, eval_file in enumerate(sorted(imported.eval_files), 1):
            doc = yaml.safe_load(eval_file.read_text(encoding="utf-8"))
            doc["settings"] = {"cache": False}
            config = parse_eval(doc, source=str(eval_file), base_dir=eval_file.parent)
            for k in range(1, 5):
                answers = {rendered[f"{p}/{n}"]: FIXED[example][n][k - 1] for n in (1, 2)}
                server.responder = lambda body, a=answers: Reply(a[body["messages"][-1]["content"]])
                server.requests.clear()
                results = run_eval(config, store=False)
                assert sorted(r.model for r in results) == ["gpt-4.1", "o4-mini"]
                sent = {
                    (r.body["model"], r.body["messages"][-1]["content"]) for r in server.requests
                }
                assert sent == {
                    (m, rendered[f"{p}/{n}"]) for m in ("gpt-4.1", "o4-mini") for n in (1, 2)
                }
                for result in results:
                    verdicts = {f"{numbers[s.id]}/{k}": bool(s.passed) for s in result.samples}
                    expected = ORACLE["outcomes"][example]
                    assert verdicts == {key: expected[key] for key in verdicts}
