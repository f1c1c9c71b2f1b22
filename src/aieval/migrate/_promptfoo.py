"""``import_promptfoo``: a promptfoo configuration to an aieval eval, dataset and stubs."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aieval.errors import ConfigError
from aieval.migrate._emit import (
    CheckEntry,
    Stub,
    eval_document,
    row_document,
    stub_module,
    stub_name,
    unique_names,
    write_jsonl,
    write_yaml,
)
from aieval.migrate._nunjucks import to_format, variables
from aieval.migrate._pfasserts import Mapped, Unmapped, map_assertion, uses_variables
from aieval.migrate._pfconfig import (
    Assertion,
    PromptfooConfig,
    TestCase,
    read_assertions,
    read_config,
    read_outputs,
)
from aieval.migrate._pfproviders import MappedProvider, UnmappedProvider, map_provider

__all__ = ["ImportLine", "PromptfooImport", "import_promptfoo"]

DATASET = "dataset.jsonl"
STUBS = "promptfoo_checks.py"
REPORT = "import-report.md"
_HEADER = "# Imported from promptfoo ({source}) by `aieval import promptfoo`; see {report}.\n"
#: test options that only the LLM-graded assertions read (those become stubs anyway)
_GRADER_OPTIONS = {"provider", "rubricPrompt"}


@dataclass(frozen=True, slots=True)
class ImportLine:
    """One line of the import report: a promptfoo part and what it became (or why not)."""

    where: str
    promptfoo: str
    aieval: str | None
    note: str = ""


@dataclass(frozen=True, slots=True)
class PromptfooImport:
    """What an import wrote, and what mapped and what did not."""

    directory: Path
    eval_files: tuple[Path, ...]
    dataset: Path
    stubs: Path | None
    mapped: tuple[ImportLine, ...]
    unmapped: tuple[ImportLine, ...]
    source: Path | None = None

    @property
    def complete(self) -> bool:
        """Whether everything mapped (no stub to write, nothing left out)."""
        return not self.unmapped

    def text(self) -> str:
        """The report as Markdown (also written to ``import-report.md``)."""
        out = [f"# promptfoo import into {self.directory.name}", ""]
        prefix = f"{self.source}: " if self.source is not None else ""
        if self.source is not None:
            out += [f"From: {self.source.name}", ""]
        out.append("Files: " + ", ".join(p.name for p in (*self.eval_files, self.dataset)))
        if self.stubs is not None:
            out[-1] += f", {self.stubs.name} (checks to write by hand)"
        out += ["", f"## Mapped ({len(self.mapped)})", ""]
        out += [_line(item, prefix) for item in self.mapped] or ["nothing"]
        out += ["", f"## Not mapped ({len(self.unmapped)})", ""]
        out += [_line(item, prefix) for item in self.unmapped] or [
            "nothing: the import is complete"
        ]
        return "\n".join(out) + "\n"


def _line(item: ImportLine, prefix: str) -> str:
    became = f" -> `{item.aieval}`" if item.aieval else ""
    note = f": {item.note}" if item.note else ""
    return f"- {item.where.removeprefix(prefix)}: `{item.promptfoo}`{became}{note}"


class _Imported:
    """The state of one import: report lines and stubs, shared by its steps."""

    def __init__(self) -> None:
        self.mapped: list[ImportLine] = []
        self.unmapped: list[ImportLine] = []
        self.stubs: dict[str, Stub] = {}

    def check(self, assertion: Assertion, found: Mapped | Unmapped, test: str) -> CheckEntry:
        shown = _shown(assertion)
        if isinstance(found, Mapped):
            entry = CheckEntry(found.check, found.options)
            self.mapped.append(ImportLine(assertion.where, shown, _entry_text(entry)))
            return entry
        stub = self.stub(shown, found.reason, test)
        self.unmapped.append(ImportLine(assertion.where, shown, stub, found.reason))
        return CheckEntry(stub)

    def stub(self, original: str, reason: str, test: str) -> str:
        key = f"{original}\0{reason}"
        known = self.stubs.get(key)
        if known is not None:
            self.stubs[key] = Stub(known.name, original, reason, (*known.used_by, test))
            return known.name
        kind = original.split(" ", 1)[0].split(":", 1)[0]
        name = stub_name(kind, len(self.stubs) + 1)
        self.stubs[key] = Stub(name, original, reason, (test,))
        return name


def import_promptfoo(
    config: str | Path,
    out: str | Path,
    *,
    model_outputs: str | Path | None = None,
    overwrite: bool = False,
) -> PromptfooImport:
    """Translate a promptfoo configuration into ``out``: eval file(s), a dataset and (for the
    assertions with no aieval equivalent) a module of stub checks.

    ``config`` is a ``promptfooconfig.yaml``; with ``model_outputs`` it is a standalone
    assertions file (``promptfoo eval --assertions A --model-outputs O``) and the outputs become
    the dataset's recorded predictions.

    Raises:
        ConfigError: what cannot be translated without changing what is evaluated (a nunjucks
            construct, a list-valued variable, a test option that changes the prompt...), named
            with its file and key; or ``out`` holds files of an earlier import (``overwrite``).
    """
    source = Path(config)
    directory = Path(out)
    state = _Imported()
    if model_outputs is not None:
        docs, rows = _standalone(source, Path(model_outputs), state)
    else:
        docs, rows = _configured(read_config(source), state)
    stubs = list(state.stubs.values())
    written = [*docs, DATASET, REPORT, *([STUBS] if stubs else [])]
    _prepare(directory, written, overwrite)
    header = _HEADER.format(source=source.name, report=REPORT)
    eval_files = []
    for file_name, doc in docs.items():
        if stubs:
            doc = {**doc, "imports": [STUBS]}
        write_yaml(directory / file_name, doc, header)
        eval_files.append(directory / file_name)
    write_jsonl(directory / DATASET, rows)
    stub_file = None
    if stubs:
        stub_file = directory / STUBS
        stub_file.write_text(stub_module(stubs, source.name), encoding="utf-8")
    result = PromptfooImport(
        source=source,
        directory=directory,
        eval_files=tuple(eval_files),
        dataset=directory / DATASET,
        stubs=stub_file,
        mapped=tuple(state.mapped),
        unmapped=tuple(state.unmapped),
    )
    (directory / REPORT).write_text(result.text(), encoding="utf-8")
    return result


def _prepare(directory: Path, names: Sequence[str], overwrite: bool) -> None:
    if directory.exists() and not directory.is_dir():
        raise ConfigError(f"{directory}: not a directory")
    directory.mkdir(parents=True, exist_ok=True)
    present = [n for n in names if (directory / n).exists()]
    if present and not overwrite:
        raise ConfigError(
            f"{directory}: already holds {', '.join(present)}; choose another directory "
            "or pass --overwrite"
        )


def _configured(
    config: PromptfooConfig, state: _Imported
) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    if not config.prompts:
        raise ConfigError(f"{config.path}: no prompts")
    if not config.tests:
        raise ConfigError(f"{config.path}: no tests")
    for key in config.ignored:
        state.unmapped.append(ImportLine(f"{config.path.name}: {key}", key, None, "ignored"))
    default = config.default
    _refuse_test_keys(default)
    templates = [_template(prompt.text, prompt.where) for prompt in config.prompts]
    tests = [_merged(default, test) for test in config.tests]
    used = {path for _, paths in templates for path in paths}
    for test in tests:
        _refuse_test_keys(test)
        for path in sorted(used):
            _template_value(test, path)
    # defaultTest's assertions whose value is a template differ per test: they go to each row
    shared = [a for a in default.asserts if not uses_variables(a.value)]
    per_test = [a for a in default.asserts if uses_variables(a.value)]
    defaults = unique_names([_entry(state, a, default, {}, "every test") for a in shared])
    rows = []
    for test in tests:
        label = f"test {test.number}"
        checks = [_entry(state, a, test, test.vars, label) for a in (*per_test, *test.asserts)]
        if test.threshold is not None:
            reason = (
                f"the test passes on a weighted score of at least {test.threshold:g}, "
                "whatever its single assertions; aieval passes a sample when each check passes"
            )
            stub = state.stub(f"threshold: {test.threshold:g}", reason, label)
            state.unmapped.append(ImportLine(test.where, "threshold", stub, reason))
            checks.append(CheckEntry(stub))
        if not checks and not defaults:
            state.unmapped.append(
                ImportLine(
                    test.where,
                    "a test without assertions",
                    None,
                    "promptfoo passes it whatever the answer; aieval scores every sample, "
                    "so it is left out",
                )
            )
            continue
        metadata: dict[str, Any] = {"promptfoo_test": test.number}
        if test.description:
            metadata["description"] = test.description
        metadata.update(test.extra.get("metadata", {}))
        rows.append(row_document(str(test.number), test.vars, checks, metadata))
    if not rows:
        raise ConfigError(f"{config.path}: no test has an assertion: nothing to evaluate")
    docs = _eval_files(config, [t for t, _ in templates], defaults, state)
    return docs, rows


def _standalone(
    assertions: Path, outputs: Path, state: _Imported
) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    asserts = read_assertions(assertions)
    texts = read_outputs(outputs)
    holder = TestCase(0, {}, asserts, str(assertions))
    scorers = unique_names([_entry(state, a, holder, {}, "every output") for a in asserts])
    rows = [
        row_document(str(i + 1), {}, [], {}, prediction=text, input_text="")
        for i, text in enumerate(texts)
    ]
    name = _slug(assertions.stem)
    return {"eval.yaml": eval_document(name, DATASET, scorers)}, rows


def _entry(
    state: _Imported, assertion: Assertion, test: TestCase, test_vars: Mapping[str, Any], label: str
) -> CheckEntry:
    transform = test.options.get("transform")
    if transform is not None and not _parses_json_only(transform, assertion):
        found: Mapped | Unmapped = Unmapped(
            assertion, f"the test transforms the output with JavaScript first ({transform})"
        )
    else:
        found = map_assertion(assertion, test_vars)
    return state.check(assertion, found, label)


def _parses_json_only(transform: Any, assertion: Assertion) -> bool:
    """``transform: JSON.parse(output)`` before ``is-json``: the same outcome as ``is-json`` on
    the text (output that is not JSON fails either way: the transform throws, or the check)."""
    return (
        str(transform).strip().rstrip(";") == "JSON.parse(output)" and assertion.type == "is-json"
    )


def _merged(default: TestCase, test: TestCase) -> TestCase:
    """``test`` with ``defaultTest``'s variables, options and threshold beneath its own."""
    return TestCase(
        number=test.number,
        vars={**default.vars, **test.vars},
        asserts=test.asserts,
        where=test.where,
        description=test.description,
        threshold=test.threshold if test.threshold is not None else default.threshold,
        options={**default.options, **test.options},
        extra=test.extra,
    )


def _refuse_test_keys(test: TestCase) -> None:
    unknown = sorted(set(test.extra) - {"metadata"})
    if unknown:
        raise ConfigError(f"{test.where}: keys {unknown} are not translated")
    options = sorted(set(test.options) - {"transform", *_GRADER_OPTIONS})
    if options:
        raise ConfigError(
            f"{test.where}: options {options} change the prompt or the output; "
            "they are not translated"
        )


def _template(text: str, where: str) -> tuple[str, list[tuple[str, ...]]]:
    return to_format(text, where), variables(text, where)


def _template_value(test: TestCase, path: tuple[str, ...]) -> None:
    """Refuse a test whose value for a prompt variable would print differently in aieval."""
    value: Any = test.vars
    for key in path:
        if not isinstance(value, Mapping) or key not in value:
            raise ConfigError(
                f"{test.where}: the prompt uses {{{{ {'.'.join(path)} }}}}, which this test "
                "does not set (promptfoo would print nothing there)"
            )
        value = value[key]
    shown = ".".join(path)
    if isinstance(value, (Mapping, list)):
        raise ConfigError(
            f"{test.where}: vars.{shown} is a {'list' if isinstance(value, list) else 'mapping'}"
            "; a prompt variable must be text or a number"
        )
    if (
        value is None
        or isinstance(value, bool)
        or (isinstance(value, float) and value.is_integer())
    ):
        raise ConfigError(
            f"{test.where}: vars.{shown} = {value!r} prints differently in JavaScript and "
            "Python; quote it as text"
        )


def _eval_files(
    config: PromptfooConfig,
    templates: Sequence[str],
    defaults: Sequence[CheckEntry],
    state: _Imported,
) -> dict[str, dict[str, Any]]:
    groups: dict[tuple[Any, ...], list[MappedProvider]] = {}
    for ref in config.providers:
        found = map_provider(ref)
        if isinstance(found, UnmappedProvider):
            state.unmapped.append(ImportLine(ref.where, ref.id, None, found.reason))
            continue
        groups.setdefault(found.group, []).append(found)
        state.mapped.append(ImportLine(ref.where, ref.id, f"{found.provider}: {found.model}"))
    if not groups:
        reasons = "; ".join(u.note for u in state.unmapped if u.where.endswith("]"))
        raise ConfigError(
            f"{config.path}: none of the providers has an aieval target ({reasons or 'none given'})"
        )
    base = _slug(config.description or config.path.parent.name or "promptfoo")
    docs: dict[str, dict[str, Any]] = {}
    many = len(templates) * len(groups) > 1
    for p, template in enumerate(templates, 1):
        state.mapped.append(
            ImportLine(config.prompts[p - 1].where, config.prompts[p - 1].label, template)
        )
        for g, members in enumerate(groups.values(), 1):
            first = members[0]
            target: dict[str, Any] = {"provider": first.provider, "model": first.model}
            if first.base_url:
                target["base_url"] = first.base_url
            if first.api_key_env:
                target["api_key_env"] = first.api_key_env
            target["prompt"] = template
            if first.params:
                target["params"] = dict(first.params)
            suffix = f"-p{p}" + (f"-{first.provider}" if len(groups) > 1 else "")
            suffix += f"{g}" if len(groups) > 1 and _same_provider(groups, first) else ""
            name = base + (suffix if many else "")
            file_name = f"eval{suffix}.yaml" if many else "eval.yaml"
            docs[file_name] = eval_document(
                name,
                DATASET,
                [],
                default_checks=defaults,
                target=target,
                models=[m.model for m in members],
            )
    return docs


def _same_provider(groups: Mapping[Any, list[MappedProvider]], first: MappedProvider) -> bool:
    return sum(1 for m in groups.values() if m[0].provider == first.provider) > 1


def _slug(text: str) -> str:
    return re.sub(r"[^0-9a-z]+", "-", text.lower()).strip("-") or "promptfoo"


def _shown(assertion: Assertion) -> str:
    value = assertion.value
    if value is None:
        text = assertion.type
    else:
        shown = value if isinstance(value, str) else repr(value)
        shown = " ".join(shown.split())
        text = f"{assertion.type}: {shown[:117] + '...' if len(shown) > 120 else shown}"
    if assertion.threshold is not None:
        text += f" (threshold {assertion.threshold:g})"
    return text


def _entry_text(entry: CheckEntry) -> str:
    doc = entry.document()
    if isinstance(doc, str):
        return doc
    ((name, options),) = doc.items()
    inner = ", ".join(f"{k}: {v!r}" for k, v in options.items())
    return f"{name}: {{{inner}}}"
