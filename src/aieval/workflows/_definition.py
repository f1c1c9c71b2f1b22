"""Workflow definitions: declared inputs, required outputs, output contract, evaluation block.

Definition files of agentic workflow engines load as they are (``name``, ``version``,
``capabilities``, ``inputs``, ``steps``, ``outputs``, ``evaluation``); top-level keys this loader
does not use are kept, not refused. Inside a declared input, output or step, and in the
``evaluation`` block, the keys decide what is required, critical and how runs are graded, so an
unknown key there (``requried: true``) is refused with its path rather than dropped; the keys
such engines legitimately write there (a step's ``inputs``, ``when``, ``tools``...) are accepted.
Every error names the file and the field.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aieval._files import readable
from aieval._json import loads_strict
from aieval._keys import unknown_key
from aieval._yaml import load_yaml_file
from aieval.errors import RubricError, WorkflowError
from aieval.grading import Rubric, load_rubric
from aieval.workflows._fields import (
    BUDGET_KEYS,
    EVALUATION_KEYS,
    INPUT_KEYS,
    INPUT_TYPES,
    OUTPUT_KEYS,
    OVERRIDE_KEYS,
    RUBRIC_KEYS,
    STEP_KEYS,
)

__all__ = [
    "EvaluationSpec",
    "InputSpec",
    "OutputSpec",
    "StepSpec",
    "WorkflowDefinition",
    "load_workflow",
]


@dataclass(frozen=True, slots=True)
class InputSpec:
    """A declared input: required unless ``required: false`` or it has a ``default``."""

    name: str
    type: str = "any"
    required: bool = True
    enum: tuple[Any, ...] | None = None
    default: Any = None
    description: str = ""


@dataclass(frozen=True, slots=True)
class OutputSpec:
    """A declared output: required unless ``optional: true``; ``source`` is its ``from``."""

    name: str
    source: str | None = None
    optional: bool = False


@dataclass(frozen=True, slots=True)
class StepSpec:
    """A declared step: name, agent, dependencies and whether it is critical."""

    name: str
    agent: str | None = None
    depends_on: tuple[str, ...] = ()
    critical: bool = True


@dataclass(frozen=True, slots=True)
class EvaluationSpec:
    """The ``evaluation:`` block: how runs of this workflow are graded.

    Attributes:
        profile: a profile id (``B``), workflow family (``dag``) or profile file.
        rubric: the rubric replacing the profile's criteria, if any.
        overrides: profile overrides (``weights``, ``floors``, ``pass_threshold``,
            ``extra_gates``, ``slo``).
        allow_missing_criteria: grade over the scored criteria when some have no score
            (otherwise such a run cannot pass).
        budgets: token and cost budgets per run (``tokens``, ``cost_usd``).
        gate_inputs: keyword inputs of the profile's own gates (``forbidden`` tools, the
            allowed ``handoffs`` graph, tool schemas).
        extra: always empty: a key of the block this loader does not know is refused (kept
            for compatibility).
    """

    profile: str | None = None
    rubric: Rubric | None = None
    overrides: dict[str, Any] = field(default_factory=dict)
    allow_missing_criteria: bool = False
    budgets: dict[str, float] = field(default_factory=dict)
    gate_inputs: dict[str, dict[str, Any]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class WorkflowDefinition:
    """A workflow: what it needs, what it must produce, and how its runs are graded.

    Attributes:
        id: the workflow id (``id``, else ``name``).
        name: human name.
        version: the definition's version, as text.
        inputs: declared inputs by name.
        outputs: declared outputs by name.
        output_schema: JSON Schema the final outputs must satisfy (``None``: no contract).
        critical_steps: steps whose failure fails the run; all steps when none are named.
        steps: declared steps.
        evaluation: the evaluation block.
        capabilities: the engine's ``capabilities`` block, as written.
        source: the file it came from.

    Example:
        >>> wf = WorkflowDefinition.from_dict({"name": "triage", "version": 2,
        ...     "inputs": {"ticket": {"type": "string"}, "lang": {"type": "string",
        ...     "default": "en"}}, "outputs": {"label": {"from": "${steps.classify.outputs.label}"},
        ...     "notes": {"from": "${steps.note.outputs.text}", "optional": True}}})
        >>> wf.required_inputs, wf.required_outputs, wf.version
        (['ticket'], ['label'], '2')
    """

    id: str
    name: str
    version: str | None = None
    inputs: dict[str, InputSpec] = field(default_factory=dict)
    outputs: dict[str, OutputSpec] = field(default_factory=dict)
    output_schema: dict[str, Any] | None = None
    critical_steps: tuple[str, ...] = ()
    steps: tuple[StepSpec, ...] = ()
    evaluation: EvaluationSpec = field(default_factory=EvaluationSpec)
    capabilities: dict[str, Any] = field(default_factory=dict)
    source: str = "<workflow>"

    @property
    def required_inputs(self) -> list[str]:
        """Names of the inputs a dataset must supply."""
        return [i.name for i in self.inputs.values() if i.required]

    @property
    def required_outputs(self) -> list[str]:
        """Names of the outputs every run must produce."""
        return [o.name for o in self.outputs.values() if not o.optional]

    def is_critical(self, step: str) -> bool:
        """Whether a failure of ``step`` fails the run (every step, when none are named)."""
        if self.critical_steps:
            return step in self.critical_steps
        declared = {s.name: s for s in self.steps}
        return declared[step].critical if step in declared else True

    @classmethod
    def from_dict(
        cls, data: Mapping[str, Any], *, source: str = "<workflow>", base_dir: Path | None = None
    ) -> WorkflowDefinition:
        """Validate a definition mapping; errors name ``source`` and the field."""
        if not isinstance(data, Mapping):
            raise WorkflowError(
                f"{source}: a workflow must be a mapping, got {type(data).__name__}"
            )
        ident = data.get("id") or data.get("name")
        if not isinstance(ident, str | int) or ident == "":
            raise WorkflowError(f"{source}: field 'name' (or 'id') is required")
        base = base_dir or Path(".")
        steps = _steps(data.get("steps"), source)
        critical = _names(data.get("critical_steps"), source, "critical_steps")
        critical += tuple(s.name for s in steps if s.critical and _marked_critical(data, s.name))
        version = data.get("version")
        return cls(
            id=str(ident),
            name=str(data.get("name") or ident),
            version=str(version) if version is not None else None,
            inputs=_inputs(data.get("inputs"), source),
            outputs=_outputs(data.get("outputs"), source),
            output_schema=_schema(data.get("output_schema"), source, base),
            critical_steps=tuple(dict.fromkeys(critical)),
            steps=steps,
            evaluation=_evaluation(data, source, base),
            capabilities=_mapping(data.get("capabilities"), source, "capabilities"),
            source=source,
        )


def load_workflow(
    source: str | Path | Mapping[str, Any] | WorkflowDefinition,
) -> WorkflowDefinition:
    """Load a workflow definition from a YAML/JSON file, a mapping, or pass one through.

    Raises:
        WorkflowError: an unreadable file or a bad field (names the file and the field).
    """
    if isinstance(source, WorkflowDefinition):
        return source
    if isinstance(source, Mapping):
        return WorkflowDefinition.from_dict(source)
    file = readable(source, "workflow")
    if not file.is_file():
        raise WorkflowError(f"{file}: workflow definition not found")
    try:
        data = load_yaml_file(file)
    except RubricError as exc:
        raise WorkflowError(str(exc)) from None
    return WorkflowDefinition.from_dict(data, source=str(file), base_dir=file.parent)


def _inputs(value: Any, source: str) -> dict[str, InputSpec]:
    out: dict[str, InputSpec] = {}
    for name, spec in _mapping(value, source, "inputs").items():
        where = f"{source}: field 'inputs.{name}'"
        if spec is None or isinstance(spec, str):
            spec = {"type": spec or "any"}
        if not isinstance(spec, Mapping):
            raise WorkflowError(f"{where}: expected a mapping with type/required/enum/default")
        _refuse_unknown(spec, INPUT_KEYS, f"{source}: field 'inputs.{name}.")
        kind = str(spec.get("type", "any")).lower()
        if kind not in INPUT_TYPES:
            raise WorkflowError(
                f"{where}.type: unknown type {kind!r}; use {', '.join(sorted(INPUT_TYPES))}"
            )
        enum = spec.get("enum")
        if enum is not None and not isinstance(enum, list):
            raise WorkflowError(f"{where}.enum: expected a list of allowed values")
        has_default = "default" in spec and spec["default"] is not None
        required = spec.get("required", not has_default)
        if not isinstance(required, bool):
            raise WorkflowError(f"{where}.required: expected true or false, got {required!r}")
        out[str(name)] = InputSpec(
            name=str(name),
            type=kind,
            required=required,
            enum=tuple(enum) if enum is not None else None,
            default=spec.get("default"),
            description=str(spec.get("description", "")),
        )
    return out


def _outputs(value: Any, source: str) -> dict[str, OutputSpec]:
    if isinstance(value, list):  # a bare list of names: every one required
        value = {str(v): {} for v in value}
    out: dict[str, OutputSpec] = {}
    for name, spec in _mapping(value, source, "outputs").items():
        where = f"{source}: field 'outputs.{name}'"
        if spec is None:
            spec = {}
        if isinstance(spec, str):
            spec = {"from": spec}
        if not isinstance(spec, Mapping):
            raise WorkflowError(f"{where}: expected a mapping with from/optional")
        _refuse_unknown(spec, OUTPUT_KEYS, f"{source}: field 'outputs.{name}.")
        optional = spec.get("optional", False)
        if not isinstance(optional, bool):
            raise WorkflowError(f"{where}.optional: expected true or false, got {optional!r}")
        origin = spec.get("from")
        out[str(name)] = OutputSpec(
            str(name), str(origin) if origin is not None else None, optional
        )
    return out


def _steps(value: Any, source: str) -> tuple[StepSpec, ...]:
    if value is None:
        return ()
    paths: list[str] | None = None
    if isinstance(value, Mapping):  # some engines key steps by name
        paths = [f"steps.{k}" for k in value]
        value = [{"name": k, **(v if isinstance(v, Mapping) else {})} for k, v in value.items()]
    if not isinstance(value, list):
        raise WorkflowError(f"{source}: field 'steps' must be a list of steps")
    steps = []
    for i, item in enumerate(value):
        if not isinstance(item, Mapping) or not item.get("name"):
            raise WorkflowError(f"{source}: field 'steps[{i}].name' is required")
        path = paths[i] if paths is not None else f"steps[{i}]"
        _refuse_unknown(item, STEP_KEYS, f"{source}: field '{path}.")
        depends = item.get("depends_on") or []
        if isinstance(depends, str):
            depends = [depends]
        critical = item.get("critical", True)
        if not isinstance(critical, bool):
            raise WorkflowError(f"{source}: field 'steps[{i}].critical': expected true or false")
        agent = item.get("agent") or item.get("agent_role")
        steps.append(
            StepSpec(
                str(item["name"]), str(agent) if agent else None, tuple(map(str, depends)), critical
            )
        )
    return tuple(steps)


def _marked_critical(data: Mapping[str, Any], name: str) -> bool:
    """Whether the step says ``critical: true`` explicitly (the default is implicit)."""
    raw = data.get("steps")
    items = raw if isinstance(raw, list) else []
    return any(
        isinstance(s, Mapping) and s.get("name") == name and s.get("critical") is True
        for s in items
    )


def _names(value: Any, source: str, key: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise WorkflowError(f"{source}: field '{key}' must be a list of step names")
    return tuple(value)


def _schema(value: Any, source: str, base: Path) -> dict[str, Any] | None:
    if value is None:
        return None
    where = f"{source}: field 'output_schema'"
    if isinstance(value, str):
        file = readable(Path(value) if Path(value).is_absolute() else base / value, where)
        try:
            value = loads_strict(file.read_text(encoding="utf-8"))
        except OSError:
            raise WorkflowError(f"{source}: field 'output_schema': file {file} not found") from None
        except ValueError as exc:
            raise WorkflowError(
                f"{source}: field 'output_schema': {file} is not JSON: {exc}"
            ) from None
    if not isinstance(value, Mapping):
        raise WorkflowError(
            f"{source}: field 'output_schema' must be a JSON Schema object or a file"
        )
    from jsonschema import validators
    from jsonschema.exceptions import SchemaError

    try:
        validators.validator_for(value).check_schema(dict(value))
    except SchemaError as exc:
        path = "/".join(map(str, exc.absolute_path)) or "(root)"
        raise WorkflowError(
            f"{source}: field 'output_schema' is not a valid JSON Schema at {path}: {exc.message}"
        ) from None
    return dict(value)


def _evaluation(data: Mapping[str, Any], source: str, base: Path) -> EvaluationSpec:
    block = _mapping(data.get("evaluation"), source, "evaluation")
    where = f"{source}: field 'evaluation"
    _refuse_unknown(block, EVALUATION_KEYS, f"{where}.")
    profile = block.get("profile", block.get("scoring_profile"))
    if profile is not None and not isinstance(profile, str):
        raise WorkflowError(f"{where}.profile': expected a profile id, family or file")
    rubric = _rubric(block, data, source, base)
    if profile is None and rubric is not None:
        profile = rubric.scoring_profile
    if (
        profile is not None
        and profile.endswith((".yaml", ".yml"))
        and not Path(profile).is_absolute()
    ):
        profile = str(base / profile)
    allow = block.get("allow_missing_criteria", False)
    if not isinstance(allow, bool):
        raise WorkflowError(f"{where}.allow_missing_criteria': expected true or false")
    budgets = _mapping(block.get("budgets"), source, "evaluation.budgets")
    _refuse_unknown(budgets, BUDGET_KEYS, f"{where}.budgets.")
    for key, value in budgets.items():
        if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
            raise WorkflowError(f"{where}.budgets.{key}': expected a non-negative number")
    gates = _mapping(block.get("gates"), source, "evaluation.gates")
    for key, value in gates.items():
        if not isinstance(value, Mapping):
            raise WorkflowError(f"{where}.gates.{key}': expected a mapping of the gate's inputs")
    return EvaluationSpec(
        profile=profile,
        rubric=rubric,
        overrides=_overrides(block, source),
        allow_missing_criteria=allow,
        budgets={k: float(v) for k, v in budgets.items()},
        gate_inputs={k: dict(v) for k, v in gates.items()},
    )


def _overrides(block: Mapping[str, Any], source: str) -> dict[str, Any]:
    """Profile overrides: ``overrides:``, plus the block's own ``weights``, ``pass_threshold``,
    ``floors``, ``extra_gates`` and ``slo`` (the agentic-workflows way of writing them), except
    the keys an inline rubric (``criteria:``) takes for itself."""
    where = f"{source}: field 'evaluation"
    overrides = _mapping(block.get("overrides"), source, "evaluation.overrides")
    _refuse_unknown(overrides, OVERRIDE_KEYS, f"{where}.overrides.")
    taken_by_rubric = RUBRIC_KEYS if "criteria" in block else ()
    for key in OVERRIDE_KEYS:
        if key not in block or key in taken_by_rubric:
            continue
        if key in overrides:
            raise WorkflowError(
                f"{where}.{key}': also given as 'evaluation.overrides.{key}'; keep one"
            )
        overrides[key] = block[key]
    return overrides


def _refuse_unknown(mapping: Mapping[str, Any], known: Iterable[str], where: str) -> None:
    for key in mapping:
        if key not in known:
            raise WorkflowError(f"{where}{key}': {unknown_key(key, known)}")


def _rubric(
    block: Mapping[str, Any], data: Mapping[str, Any], source: str, base: Path
) -> Rubric | None:
    ref = block.get("rubric")
    try:
        if isinstance(ref, str):
            file = Path(ref) if Path(ref).is_absolute() else base / ref
            return load_rubric(file)
        if isinstance(ref, Mapping):
            return load_rubric(ref)
        if ref is not None:
            raise WorkflowError(
                f"{source}: field 'evaluation.rubric': expected a file or a mapping"
            )
        if "criteria" in block:
            inline = {k: block[k] for k in (*RUBRIC_KEYS, "scoring_profile") if k in block}
            inline.setdefault("rubric_id", f"{data.get('name') or data.get('id')}_rubric")
            inline.setdefault("version", str(data.get("version") or "1"))
            return load_rubric(inline)
    except RubricError as exc:
        raise WorkflowError(f"{source}: field 'evaluation' rubric: {exc}") from None
    return None


def _mapping(value: Any, source: str, key: str) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise WorkflowError(
            f"{source}: field '{key}' must be a mapping, got {type(value).__name__}"
        )
    return dict(value)
