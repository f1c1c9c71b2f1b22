"""``import_promptfoo``: a promptfoo configuration to an aieval eval, dataset and stubs."""

from __future__ import annotations

import json
import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import date
from pathlib import Path
from typing import Any

from aieval._terminal import printable
from aieval.errors import ConfigError
from aieval.migrate._emit import (
    CheckEntry,
    Stub,
    eval_document,
    jsonl_line,
    row_document,
    stub_module,
    stub_name,
    unique_names,
    yaml_text,
)
from aieval.migrate._nunjucks import to_format, variables
from aieval.migrate._pfasserts import (
    Mapped,
    Unmapped,
    embedding_provider,
    map_assertion,
    uses_variables,
)
from aieval.migrate._pfconfig import (
    Assertion,
    PromptfooConfig,
    TestCase,
    read_assertions,
    read_config,
    read_outputs,
)
from aieval.migrate._pffiles import ConfigFiles
from aieval.migrate._pfproviders import MappedProvider, UnmappedProvider, map_provider
from aieval.migrate._write import write_files

__all__ = ["MAX_IMPORT_BYTES", "ImportLine", "PromptfooImport", "import_promptfoo"]

DATASET = "dataset.jsonl"
STUBS = "promptfoo_checks.py"
REPORT = "import-report.md"
#: Most text one import makes: the files it reads, its prompt templates and translated checks,
#: and the files it writes. A few hundred bytes of aliases or ``file://`` references repeated
#: per test would otherwise make gigabytes.
MAX_IMPORT_BYTES = 50_000_000
#: Longest part of a report line (a translated check, a reason) before it is cut
_SHOWN = 300
#: test options that only the LLM-graded assertions (stubs anyway) and ``similar`` (its
#: embedding provider, carried to it) read
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
    #: mapped checks that may judge some outputs otherwise than promptfoo (each also in
    #: ``mapped``), the note saying what differs and what to do
    not_equivalent: tuple[ImportLine, ...] = ()

    @property
    def complete(self) -> bool:
        """Whether everything mapped to an equivalent (no stub to write, nothing left out, no
        check that judges otherwise than promptfoo)."""
        return not self.unmapped and not self.not_equivalent

    def text(self) -> str:
        """The report as Markdown (also written to ``import-report.md``); every name and value
        in it with control and bidi characters shown as escapes (see ``aieval._terminal``)."""
        out = [f"# promptfoo import into {printable(self.directory.name)}", ""]
        prefix = f"{self.source}: " if self.source is not None else ""
        if self.source is not None:
            out += [f"From: {printable(self.source.name)}", ""]
        out.append("Files: " + ", ".join(p.name for p in (*self.eval_files, self.dataset)))
        if self.stubs is not None:
            out[-1] += f", {self.stubs.name} (checks to write by hand)"
        out += ["", f"## Mapped ({len(self.mapped)})", ""]
        out += [_line(item, prefix) for item in self.mapped] or ["nothing"]
        out += ["", f"## Not equivalent ({len(self.not_equivalent)})", ""]
        if self.not_equivalent:
            out += [
                "Mapped, but aieval's check may judge some outputs otherwise than promptfoo: "
                "what differs, and what to do.",
                "",
            ]
        out += _differences(self.not_equivalent, prefix) or [
            "nothing: each mapped check gives promptfoo's verdict"
        ]
        out += ["", f"## Not mapped ({len(self.unmapped)})", ""]
        out += [_line(item, prefix) for item in self.unmapped] or ["nothing"]
        if self.complete:
            out += ["", "The import is complete."]
        else:
            out += [
                "",
                f"The import is not complete: {len(self.unmapped)} part(s) not mapped, "
                f"{len(self.not_equivalent)} check(s) not equivalent.",
            ]
        return "\n".join(out) + "\n"


def _differences(items: Sequence[ImportLine], prefix: str) -> list[str]:
    """One line per assertion type and difference, with where it occurs (the first three)."""
    groups: dict[tuple[str, str], list[str]] = {}
    for item in items:
        kind = item.promptfoo.split(" ", 1)[0].split(":", 1)[0]
        groups.setdefault((kind, item.note), []).append(item.where.removeprefix(prefix))
    out = []
    for (kind, note), wheres in groups.items():
        shown = "; ".join(printable(w) for w in wheres[:3])
        more = f" and {len(wheres) - 3} more" if len(wheres) > 3 else ""
        out.append(f"- `{printable(kind)}` ({len(wheres)}: {shown}{more}): {printable(note)}")
    return out


def _line(item: ImportLine, prefix: str) -> str:
    became = f" -> `{printable(item.aieval)}`" if item.aieval else ""
    note = f": {printable(item.note)}" if item.note else ""
    where = printable(item.where.removeprefix(prefix))
    return f"- {where}: `{printable(item.promptfoo)}`{became}{note}"


def _utf8(text: str) -> bytes:
    """``text`` as UTF-8; a lone surrogate (JSON's ``"\\udc80"``; no UTF-8 file can hold one,
    and only the dataset's JSON strings keep one raw) as its JSON escape, read back the same."""
    return text.encode("utf-8", "backslashreplace")


def _clip(text: str, limit: int = _SHOWN) -> str:
    return text if len(text) <= limit else text[: limit - 3] + "..."


class _Imported:
    """The state of one import: report lines, stubs and the text made so far, shared by its
    steps."""

    def __init__(self, files: ConfigFiles, allow_endpoints: bool) -> None:
        self.files = files
        self.allow_endpoints = allow_endpoints
        self.mapped: list[ImportLine] = []
        self.unmapped: list[ImportLine] = []
        self.not_equivalent: list[ImportLine] = []
        #: the translated ``similar`` checks: equivalent only where the embeddings come from
        #: OpenAI's API, as promptfoo's default embedding provider's do
        self.similar: list[ImportLine] = []
        self._stubs: dict[str, tuple[str, str, str, list[str]]] = {}
        self.made = 0

    def spend(self, size: int, what: str) -> None:
        """Count ``size`` more bytes made; past :data:`MAX_IMPORT_BYTES` the import stops."""
        self.made += size
        if self.made + self.files.read_bytes > MAX_IMPORT_BYTES:
            raise ConfigError(
                f"{self.files.config}: the import would make more than {MAX_IMPORT_BYTES:,} "
                f"bytes (at {what}); YAML aliases or file:// references repeat large values "
                "in every test: write the values each test needs"
            )

    def line(self, row: Mapping[str, Any], what: str) -> str:
        """``row`` as a dataset line, counted."""
        text = jsonl_line(row)
        self.spend(len(_utf8(text)), what)
        return text

    def check(self, assertion: Assertion, found: Mapped | Unmapped, test: str) -> CheckEntry:
        shown = _shown(assertion)
        if isinstance(found, Mapped):
            entry = CheckEntry(found.check, found.options)
            self.spend(len(json.dumps(entry.document(), default=str)), assertion.where)
            line = ImportLine(assertion.where, shown, _clip(_entry_text(entry)))
            self.mapped.append(line)
            if found.differs:
                self.not_equivalent.append(replace(line, note=found.differs))
            if found.check == "similar":
                self.similar.append(line)
            return entry
        reason = _clip(found.reason)
        stub = self.stub(shown, reason, test)
        self.unmapped.append(ImportLine(assertion.where, shown, stub, reason))
        return CheckEntry(stub)

    def stub(self, original: str, reason: str, test: str) -> str:
        key = f"{original}\0{reason}"
        known = self._stubs.get(key)
        if known is not None:
            known[3].append(test)
            return known[0]
        kind = original.split(" ", 1)[0].split(":", 1)[0]
        name = stub_name(kind, len(self._stubs) + 1)
        self._stubs[key] = (name, original, reason, [test])
        return name

    @property
    def stubs(self) -> list[Stub]:
        return [Stub(n, o, r, tuple(used)) for n, o, r, used in self._stubs.values()]


def import_promptfoo(
    config: str | Path,
    out: str | Path,
    *,
    model_outputs: str | Path | None = None,
    overwrite: bool = False,
    allow_outside: Sequence[str | os.PathLike[str]] = (),
    allow_endpoints: bool = False,
) -> PromptfooImport:
    """Translate a promptfoo configuration into ``out``: eval file(s), a dataset and (for the
    assertions with no aieval equivalent) a module of stub checks.

    ``config`` is a ``promptfooconfig.yaml``; with ``model_outputs`` it is a standalone
    assertions file (``promptfoo eval --assertions A --model-outputs O``) and the outputs become
    the dataset's recorded predictions.

    The configuration is data: its ``file://`` references are read only inside its folder
    (after following links), or inside the folders and files of ``allow_outside``; a provider's
    endpoint and key variable (``apiBaseUrl``, ``apiKeyEnvar``) are carried over only with
    ``allow_endpoints``; the files are written only into ``out``, all or none, never through a
    link in it.

    Raises:
        ConfigError: what cannot be translated without changing what is evaluated (a nunjucks
            construct, a list-valued variable, a test option that changes the prompt...), named
            with its file and key; a reference outside the allowed folders; a file or an import
            beyond its bounds (:data:`MAX_IMPORT_BYTES`, the YAML loader's); or ``out`` holds
            files of an earlier import (``overwrite``) or a link.
    """
    try:
        state = _Imported(ConfigFiles(Path(config), allow_outside), allow_endpoints)
        return _import(Path(config), Path(out), model_outputs, overwrite, state)
    except ConfigError as exc:
        # names and values from the configuration reach the terminal in these messages
        raise ConfigError(printable(str(exc))) from None


def _import(
    source: Path,
    directory: Path,
    model_outputs: str | Path | None,
    overwrite: bool,
    state: _Imported,
) -> PromptfooImport:
    if model_outputs is not None:
        docs, rows = _standalone(source, Path(model_outputs), state)
    else:
        docs, rows = _configured(read_config(source, state.files), state)
    stubs = state.stubs
    texts: dict[str, str] = {}
    for file_name, doc in docs.items():
        texts[file_name] = yaml_text({**doc, "imports": [STUBS]} if stubs else doc)
    texts[DATASET] = "".join(rows)
    if stubs:
        texts[STUBS] = stub_module(stubs, source.name)
    result = PromptfooImport(
        source=source,
        directory=directory,
        eval_files=tuple(directory / name for name in docs),
        dataset=directory / DATASET,
        stubs=directory / STUBS if stubs else None,
        mapped=tuple(state.mapped),
        unmapped=tuple(state.unmapped),
        not_equivalent=tuple(state.not_equivalent),
    )
    texts[REPORT] = result.text()
    contents = {name: _utf8(text) for name, text in texts.items()}
    for name, content in contents.items():
        if name != DATASET:  # its rows were counted as they were made
            state.spend(len(content), name)
    write_files(directory, contents, overwrite=overwrite)
    return result


def _configured(
    config: PromptfooConfig, state: _Imported
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    if not config.prompts:
        raise ConfigError(f"{config.path}: no prompts")
    if not config.tests:
        raise ConfigError(f"{config.path}: no tests")
    for key in config.ignored:
        state.unmapped.append(ImportLine(f"{config.path.name}: {key}", key, None, "ignored"))
    default = config.default
    _refuse_test_keys(default)
    templates = [_template(prompt.text, prompt.where, state) for prompt in config.prompts]
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
        row = row_document(str(test.number), test.vars, checks, metadata)
        rows.append(state.line(row, test.where))
    if not rows:
        raise ConfigError(f"{config.path}: no test has an assertion: nothing to evaluate")
    docs = _eval_files(config, [t for t, _ in templates], defaults, state)
    return docs, rows


def _standalone(
    assertions: Path, outputs: Path, state: _Imported
) -> tuple[dict[str, dict[str, Any]], list[str]]:
    asserts = read_assertions(assertions, state.files)
    texts = read_outputs(outputs, state.files)
    holder = TestCase(0, {}, asserts, str(assertions))
    scorers = unique_names([_entry(state, a, holder, {}, "every output") for a in asserts])
    rows = [
        state.line(
            row_document(str(i + 1), {}, [], {}, prediction=text, input_text=""),
            f"{outputs}: [{i}]",
        )
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
        found = map_assertion(_with_test_provider(assertion, test), test_vars)
    return state.check(assertion, found, label)


def _with_test_provider(assertion: Assertion, test: TestCase) -> Assertion:
    """``similar`` without its own ``provider`` embeds with the test's (``options.provider``),
    as in promptfoo."""
    if assertion.type.removeprefix("not-") != "similar" or "provider" in assertion.extra:
        return assertion
    provider = embedding_provider(test.options.get("provider"))
    if provider is None:
        return assertion
    return replace(assertion, extra={**assertion.extra, "provider": provider})


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


def _template(text: str, where: str, state: _Imported) -> tuple[str, list[tuple[str, ...]]]:
    template = to_format(text, where)
    state.spend(len(template), where)
    return template, variables(text, where)


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
        or isinstance(value, (bool, date))  # a datetime is a date; JavaScript prints a Date
        or (isinstance(value, float) and (not math.isfinite(value) or value.is_integer()))
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
        found = map_provider(ref, allow_endpoints=state.allow_endpoints)
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
    _embeddings_endpoint(groups, state)
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


def _embeddings_endpoint(groups: Mapping[Any, list[MappedProvider]], state: _Imported) -> None:
    """``similar`` asks the run's endpoint for embeddings; promptfoo asks OpenAI's API (its
    default embedding provider). A target elsewhere makes each ``similar`` not equivalent."""
    elsewhere = sorted(
        {
            f"{m.provider}" + (f" at {m.base_url}" if m.base_url else "")
            for members in groups.values()
            for m in members
            if m.provider != "openai" or m.base_url
        }
    )
    if not elsewhere or not state.similar:
        return
    note = (
        f"aieval asks the run's endpoint ({', '.join(elsewhere)}) for the embeddings; promptfoo "
        "asks its default embedding provider (OpenAI's API, with OPENAI_API_KEY). Serve the "
        "embedding model there, or write the check in the eval file with base_url: "
        "https://api.openai.com/v1"
    )
    state.not_equivalent += [replace(line, note=note) for line in state.similar]


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
