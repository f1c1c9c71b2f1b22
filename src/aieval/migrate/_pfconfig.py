"""Read a promptfoo configuration into typed parts: prompts, providers, tests, ``defaultTest``.

Only reading happens here (``file://`` references resolved relative to the file that names
them, and read only inside the allowed folders: see ``_pffiles``); what each part becomes in
aieval is decided elsewhere. What the reader cannot represent is refused with the file and the
key."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aieval.errors import ConfigError
from aieval.migrate._pffiles import MAX_BYTES, MAX_OUTPUTS_BYTES, ConfigFiles
from aieval.migrate._pfrefs import resolve_refs

__all__ = [
    "Assertion",
    "PromptText",
    "PromptfooConfig",
    "ProviderRef",
    "TestCase",
    "read_assertions",
    "read_config",
    "read_outputs",
]

#: top-level keys whose meaning is carried over (the rest are refused or reported)
_READ = {
    "description",
    "prompts",
    "providers",
    "targets",
    "tests",
    "defaultTest",
    "assertionTemplates",  # read where an assertion refers to one ($ref)
}
#: top-level keys that change which tests run or how: never dropped silently
_REFUSED = {
    "scenarios": "scenarios (tests multiplied by data sets) are not translated; list the tests",
    "redteam": "red-team generation has no aieval equivalent",
    "nunjucksFilters": "custom nunjucks filters are not translated",
}


@dataclass(frozen=True, slots=True)
class Assertion:
    """One promptfoo assertion as written (``where`` names it for messages)."""

    type: str
    value: Any
    where: str
    threshold: float | None = None
    weight: float = 1.0
    metric: str | None = None
    transform: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class TestCase:
    """One promptfoo test: its variables and its assertions."""

    number: int
    vars: dict[str, Any]
    asserts: tuple[Assertion, ...]
    where: str
    description: str | None = None
    threshold: float | None = None
    options: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PromptText:
    """A prompt template as promptfoo renders it (nunjucks)."""

    label: str
    text: str
    where: str


@dataclass(frozen=True, slots=True)
class ProviderRef:
    """A provider as written: ``openai:chat:gpt-4o`` or ``{id, label, config}``."""

    id: str
    where: str
    label: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class PromptfooConfig:
    """A promptfoo configuration, read."""

    path: Path
    description: str | None
    prompts: tuple[PromptText, ...]
    providers: tuple[ProviderRef, ...]
    tests: tuple[TestCase, ...]
    default: TestCase
    ignored: tuple[str, ...] = ()


def read_config(path: Path, files: ConfigFiles, *, chat: bool = False) -> PromptfooConfig:
    """Read ``path`` (``promptfooconfig.yaml``); :class:`ConfigError` names what is refused.
    ``files`` says which folders its ``file://`` references may read; ``chat`` keeps a JSON
    chat-message prompt file as its text (the conversation import reads it)."""
    data = _load(path, files)
    if not isinstance(data, Mapping):
        raise ConfigError(f"{path}: a promptfoo configuration is a mapping (prompts, tests...)")
    for key, why in _REFUSED.items():
        if key in data:
            raise ConfigError(f"{path}: {key}: {why}")
    data = resolve_refs(data, str(path))
    base = path.parent
    prompts = tuple(_prompts(data.get("prompts"), base, path, files, chat))
    providers_key = "providers" if "providers" in data else "targets"
    providers = tuple(_providers(data.get(providers_key), f"{path}: {providers_key}"))
    default = _test(data.get("defaultTest") or {}, 0, f"{path}: defaultTest", base, files)
    tests = tuple(_tests(data.get("tests"), base, path, files))
    description = data.get("description")
    ignored = tuple(sorted(str(k) for k in data if k not in _READ))
    return PromptfooConfig(
        path=path,
        description=str(description) if description is not None else None,
        prompts=prompts,
        providers=providers,
        tests=tests,
        default=default,
        ignored=ignored,
    )


def read_assertions(path: Path, files: ConfigFiles) -> tuple[Assertion, ...]:
    """A standalone assertions file (``promptfoo eval --assertions``): a list of assertions."""
    data = _load(path, files)
    if not isinstance(data, list):
        raise ConfigError(f"{path}: an assertions file is a list of {{type, value}} entries")
    data = resolve_refs(data, str(path), assertions=True)
    return tuple(_assertion(item, f"{path}: [{i}]") for i, item in enumerate(data))


def _load(path: Path, files: ConfigFiles, *, limit: int = MAX_BYTES) -> Any:
    if not path.is_file():
        raise ConfigError(f"{path}: file not found")
    if path.suffix in {".js", ".cjs", ".mjs", ".ts"}:
        raise ConfigError(
            f"{path}: a JavaScript configuration cannot be read without running it; "
            "use promptfoo's YAML form (promptfooconfig.yaml)"
        )
    return files.data(path, str(path), limit=limit)


def _file_ref(value: Any) -> str | None:
    if isinstance(value, str) and value.startswith("file://"):
        return value[len("file://") :]
    return None


def _text_file(base: Path, ref: str, where: str, files: ConfigFiles) -> Path:
    if any(ch in ref for ch in "*?["):
        raise ConfigError(f"{where}: file://{ref}: glob patterns are not translated; list files")
    if ":" in Path(ref).name:
        raise ConfigError(
            f"{where}: file://{ref}: a function in a file (file:...:name) runs code; "
            "it is not translated"
        )
    return files.resolve(base, ref, where)


def _prompts(
    value: Any, base: Path, path: Path, files: ConfigFiles, chat: bool = False
) -> list[PromptText]:
    where = f"{path}: prompts"
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    found: list[PromptText] = []
    for i, item in enumerate(items):
        here = f"{where}[{i}]"
        label: str | None = None
        if isinstance(item, Mapping):
            unknown = set(item) - {"raw", "id", "label"}
            if unknown:
                raise ConfigError(f"{here}: keys {sorted(unknown)} are not translated")
            label = item.get("label")
            item = item.get("raw", item.get("id"))
        if not isinstance(item, str):
            raise ConfigError(f"{here}: a prompt is text or file://path, got {item!r}")
        ref = _file_ref(item)
        if ref is None:
            found.append(PromptText(label or f"prompt {len(found) + 1}", item, here))
            continue
        file = _text_file(base, ref, here, files)
        if file.suffix in {".js", ".cjs", ".mjs", ".ts", ".py"}:
            raise ConfigError(f"{here}: {item}: a prompt function runs code; it is not translated")
        if chat and file.suffix == ".json":
            found.append(PromptText(label or file.name, files.text(file, here), here))
            continue
        if file.suffix in {".json", ".jsonl", ".yaml", ".yml"}:
            raise ConfigError(
                f"{here}: {item}: chat-message prompts are not translated yet; give the user "
                "message as text (a .txt file or an inline prompt)"
            )
        text = files.text(file, here)
        pieces = _split_prompts(text)
        for j, piece in enumerate(pieces):
            name = label or (file.name if len(pieces) == 1 else f"{file.name} #{j + 1}")
            found.append(PromptText(name, piece, f"{here} ({file.name}, prompt {j + 1})"))
    return found


def _split_prompts(text: str) -> list[str]:
    """A prompts file: prompts separated by lines of ``---`` (promptfoo's separator)."""
    pieces: list[list[str]] = [[]]
    for line in text.splitlines(keepends=True):
        if line.strip() == "---":
            pieces.append([])
        else:
            pieces[-1].append(line)
    return [t for t in ("".join(p).strip() for p in pieces) if t]


def _providers(value: Any, where: str) -> list[ProviderRef]:
    if value is None:
        return []
    items = value if isinstance(value, list) else [value]
    found: list[ProviderRef] = []
    for i, item in enumerate(items):
        here = f"{where}[{i}]"
        if isinstance(item, str):
            found.append(ProviderRef(item, here))
        elif isinstance(item, Mapping) and isinstance(item.get("id"), str):
            config = item.get("config") or {}
            if not isinstance(config, Mapping):
                raise ConfigError(f"{here}: config must be a mapping")
            extra = {k: v for k, v in item.items() if k not in {"id", "label", "config"}}
            label = item.get("label")
            found.append(ProviderRef(item["id"], here, label, dict(config), extra))
        elif isinstance(item, Mapping) and len(item) == 1:
            # the older form {openai:chat:gpt-4o: {config: ...}}
            ((key, body),) = item.items()
            body = body if isinstance(body, Mapping) else {}
            extra = {k: v for k, v in body.items() if k not in {"id", "label", "config"}}
            found.append(
                ProviderRef(
                    str(key), here, body.get("label"), dict(body.get("config") or {}), extra
                )
            )
        else:
            raise ConfigError(f"{here}: a provider is an id or {{id, config}}, got {item!r}")
    return found


def _tests(value: Any, base: Path, path: Path, files: ConfigFiles) -> list[TestCase]:
    where = f"{path}: tests"
    if value is None:
        return []
    ref = _file_ref(value)
    if ref is not None:
        file = _text_file(base, ref, where, files)
        rows = _test_file(file, where, files)
        return [
            _test(row, i + 1, f"{file}: test {i + 1}", file.parent, files)
            for i, row in enumerate(rows)
        ]
    if not isinstance(value, list):
        raise ConfigError(f"{where}: tests are a list (or file://tests.yaml)")
    found: list[TestCase] = []
    for item in value:
        inner = _file_ref(item)
        if inner is not None:
            file = _text_file(base, inner, where, files)
            for row in _test_file(file, where, files):
                found.append(_test(row, len(found) + 1, f"{file}: test", file.parent, files))
        else:
            found.append(_test(item, len(found) + 1, f"{where}[{len(found)}]", base, files))
    return found


def _test_file(file: Path, where: str, files: ConfigFiles) -> list[Any]:
    if file.suffix == ".csv":
        raise ConfigError(
            f"{where}: {file.name}: CSV tests (with __expected columns) are not translated yet; "
            "give them as YAML"
        )
    data = _load(file, files)
    if not isinstance(data, list):
        raise ConfigError(f"{file}: a tests file is a list of tests")
    # promptfoo dereferences a tests file on its own: its references point into it
    resolved: list[Any] = resolve_refs(data, str(file))
    return resolved


_TEST_KEYS = {"vars", "assert", "description", "threshold", "options", "metadata"}


def _test(item: Any, number: int, where: str, base: Path, files: ConfigFiles) -> TestCase:
    if not isinstance(item, Mapping):
        raise ConfigError(f"{where}: a test is a mapping (vars, assert), got {item!r}")
    variables = item.get("vars") or {}
    ref = _file_ref(variables)
    if ref is not None:
        variables = _load(_text_file(base, ref, f"{where}: vars", files), files)
    if not isinstance(variables, Mapping):
        raise ConfigError(f"{where}: vars must be a mapping")
    values = {str(k): _var(v, base, f"{where}: vars.{k}", files) for k, v in variables.items()}
    raw_asserts = item.get("assert") or []
    if not isinstance(raw_asserts, list):
        raise ConfigError(f"{where}: assert must be a list")
    asserts = tuple(_assertion(a, f"{where}: assert[{i}]") for i, a in enumerate(raw_asserts))
    threshold = item.get("threshold")
    options = item.get("options") or {}
    if not isinstance(options, Mapping):
        raise ConfigError(f"{where}: options must be a mapping")
    extra = {k: v for k, v in item.items() if k not in _TEST_KEYS}
    description = item.get("description")
    metadata = item.get("metadata")
    if metadata is not None and not isinstance(metadata, Mapping):
        raise ConfigError(f"{where}: metadata must be a mapping")
    return TestCase(
        number=number,
        vars=values,
        asserts=asserts,
        where=where,
        description=str(description) if description is not None else None,
        threshold=float(threshold) if threshold is not None else None,
        options=dict(options),
        extra={**extra, **({"metadata": dict(metadata)} if metadata else {})},
    )


def _var(value: Any, base: Path, where: str, files: ConfigFiles) -> Any:
    ref = _file_ref(value)
    if ref is None:
        if isinstance(value, list):
            raise ConfigError(
                f"{where}: a list of values makes promptfoo run one test per value; "
                "this is not translated: write one test per value"
            )
        return value
    file = _text_file(base, ref, where, files)
    if file.suffix in {".js", ".cjs", ".mjs", ".ts", ".py"}:
        raise ConfigError(f"{where}: file://{ref}: a variable computed by code is not translated")
    if file.suffix in {".json", ".yaml", ".yml"}:
        return files.data(file, where)
    if file.suffix in {".csv", ".png", ".jpg", ".jpeg", ".gif", ".webp", ".pdf"}:
        raise ConfigError(f"{where}: file://{ref}: this file type is not translated")
    return files.text(file, where)


_ASSERT_KEYS = {"type", "value", "threshold", "weight", "metric", "transform"}


def _assertion(item: Any, where: str) -> Assertion:
    if not isinstance(item, Mapping) or not isinstance(item.get("type"), str):
        raise ConfigError(f"{where}: an assertion is a mapping with a 'type', got {item!r}")
    threshold = item.get("threshold")
    weight = item.get("weight", 1)
    if not isinstance(weight, (int, float)) or isinstance(weight, bool) or weight < 0:
        raise ConfigError(f"{where}: weight must be a number >= 0, got {weight!r}")
    if threshold is not None and (
        not isinstance(threshold, (int, float)) or isinstance(threshold, bool)
    ):
        raise ConfigError(f"{where}: threshold must be a number, got {threshold!r}")
    metric = item.get("metric")
    transform = item.get("transform")
    return Assertion(
        type=item["type"],
        value=item.get("value"),
        where=f"{where} ({item['type']})",
        threshold=float(threshold) if threshold is not None else None,
        weight=float(weight),
        metric=str(metric) if metric is not None else None,
        transform=str(transform) if transform is not None else None,
        extra={k: v for k, v in item.items() if k not in _ASSERT_KEYS},
    )


def read_outputs(path: Path, files: ConfigFiles) -> list[str]:
    """Model outputs for standalone assertions (``--model-outputs``): a JSON list of texts or
    of ``{output, tags}`` objects, at most :data:`MAX_OUTPUTS_BYTES`."""
    data = _load(path, files, limit=MAX_OUTPUTS_BYTES)
    if not isinstance(data, list):
        raise ConfigError(f"{path}: model outputs are a JSON list")
    outputs: list[str] = []
    for i, item in enumerate(data):
        value = item.get("output") if isinstance(item, Mapping) else item
        if not isinstance(value, str):
            raise ConfigError(f"{path}: [{i}]: an output is text or {{output: text}}")
        outputs.append(value)
    return outputs
