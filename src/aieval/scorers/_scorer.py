"""The ``@scorer`` decorator, the :class:`Scorer` wrapper and the scorer registry."""

from __future__ import annotations

import asyncio
import difflib
import importlib
import inspect
import math
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, overload

from aieval._types import Score
from aieval.core import GROUPS, load_plugins, plugin_names
from aieval.errors import ConfigError, ScorerError, StoreError
from aieval.scorers._expressions import in_process_budget

__all__ = [
    "CONTEXT_PARAMETERS",
    "GRADING_KEYS",
    "OFF_LOOP_CHARS",
    "BatchFunction",
    "Scorer",
    "get_scorer",
    "registered_scorers",
    "scorer",
    "to_score",
]

#: Keyword-only parameters the runner fills in when a scorer declares them.
CONTEXT_PARAMETERS = frozenset({"example", "model", "provider", "prompt", "output", "run"})

#: Options that set how a scorer's value is graded (its own pass threshold and its weight in the
#: weighted score) rather than being passed to its function; a function that declares one of
#: these names as a parameter keeps it as its own option (``similar``'s ``threshold``).
GRADING_KEYS = ("threshold", "weight")

_REGISTRY: dict[str, Scorer] = {}

#: A scorer's batch implementation: ``(predictions, expected, **options)`` to one result per row,
#: in order: the value (or Score) the per-pair call returns, or the ScorerError it raises.
BatchFunction = Callable[..., list[Any]]


class Scorer:
    """A named metric: a callable returning a float in 0..1 (or a :class:`Score`).

    Calling a ``Scorer`` calls the wrapped function unchanged, so ``token_f1("a b", "b a")``
    returns ``1.0``. The runner uses :meth:`score`, which fills in declared context parameters,
    awaits async scorers and validates the result.
    """

    __slots__ = (
        "__dict__",
        "_positional",
        "batch_fn",
        "context",
        "fn",
        "is_async",
        "name",
        "options",
        "threshold",
        "weight",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        *,
        name: str | None = None,
        options: Mapping[str, Any] | None = None,
        batch_fn: BatchFunction | None = None,
        threshold: float | None = None,
        weight: float = 1.0,
    ) -> None:
        if not callable(fn):
            raise ConfigError(f"@scorer needs a function, got {type(fn).__name__}")
        self.fn = fn
        #: Scores many rows in one call (see :meth:`batched`); ``None``: one call per row.
        self.batch_fn = batch_fn
        self.name = name or getattr(fn, "__name__", None) or type(fn).__name__
        self.options = dict(options or {})
        #: The least value that passes (0..1); ``None``: the run's ``pass_threshold``.
        self.threshold = check_threshold(threshold, self.name)
        #: This scorer's weight in the sample's weighted score (>= 0; default 1).
        self.weight = check_weight(weight, self.name)
        self.is_async = inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
            type(fn).__call__
        )
        self.context, self._positional = _inspect_parameters(fn, self.name)
        self.__doc__ = getattr(fn, "__doc__", None)
        self.__wrapped__ = fn

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.options:
            kwargs = {**self.options, **kwargs}
        return self.fn(*args, **kwargs)

    def __repr__(self) -> str:
        opts = ", ".join(f"{k}={v!r}" for k, v in {**self.options, **self.grading}.items())
        return f"Scorer({self.name!r}{', ' + opts if opts else ''})"

    @property
    def grading(self) -> dict[str, float]:
        """The scorer's own ``threshold`` and ``weight``, where they differ from the defaults
        (the run's pass threshold, weight 1): ``{}`` for a scorer graded as the run says."""
        out: dict[str, float] = {}
        if self.threshold is not None:
            out["threshold"] = self.threshold
        if self.weight != 1.0:
            out["weight"] = self.weight
        return out

    def __reduce_ex__(self, protocol: Any) -> Any:
        """Pickle a module-level ``@scorer`` by import path (its function cannot be found by
        name: the module attribute is this wrapper), anything else by value."""
        module = getattr(self.fn, "__module__", None)
        qualname = getattr(self.fn, "__qualname__", "")
        if module and module != "__main__" and "<" not in qualname:
            found = _import_attribute(module, qualname)
            if isinstance(found, Scorer) and found.fn is self.fn:
                return (
                    _restore_scorer,
                    (module, qualname, self.name, self.options, self.threshold, self.weight),
                )
        return super().__reduce_ex__(protocol)

    def with_options(self, *, name: str | None = None, **options: Any) -> Scorer:
        """A copy with keyword options bound, e.g. ``token_f1.with_options(case_sensitive=True)``.

        The copy keeps this scorer's name unless ``name`` is given. ``threshold`` and ``weight``
        (:data:`GRADING_KEYS`) set how the value is graded, unless the function takes an option
        of that name itself: ``token_f1.with_options(threshold=0.3, weight=2)`` passes a sample
        whose F1 is at least 0.3 and counts twice in its weighted score.

        Raises:
            ConfigError: a threshold outside 0..1 or a negative, infinite or NaN weight.
        """
        options, threshold, weight = self._split_grading(options)
        return Scorer(
            self.fn,
            name=name or self.name,
            options={**self.options, **options},
            batch_fn=self.batch_fn,
            threshold=threshold,
            weight=weight,
        )

    def _split_grading(self, options: dict[str, Any]) -> tuple[dict[str, Any], float | None, Any]:
        """``options`` without the grading keys the function does not take, and the threshold
        and weight they give (else this scorer's own); an error names this scorer."""
        own = _parameter_names(self.fn)
        threshold: Any = self.threshold
        weight: Any = self.weight
        rest = dict(options)
        if "threshold" in rest and "threshold" not in own:
            threshold = rest.pop("threshold")
        if "weight" in rest and "weight" not in own:
            weight = rest.pop("weight")
        return rest, check_threshold(threshold, self.name), check_weight(weight, self.name)

    def batched(self, batch_fn: BatchFunction) -> BatchFunction:
        """Register ``batch_fn`` as this scorer's batch implementation (usable as a decorator).

        ``batch_fn(predictions, expected, **options)`` returns one result per row, in order:
        what the per-pair call returns, or the :class:`ScorerError` it raises (as a value).
        """
        self.batch_fn = batch_fn
        return batch_fn

    def batch(
        self,
        predictions: Sequence[Any],
        expected: Sequence[Any],
        *,
        errors: Literal["raise", "return"] = "raise",
    ) -> list[Any]:
        """Score rows pairwise: the same values (or Scores), in order, as one call per row.

        A scorer with a batch implementation (``rouge_l``, ``token_f1``,
        ``exact_match``, ``json_valid``) runs it in one call; any other sync
        scorer is called once per row. A row's failure is a :class:`ScorerError`: with
        ``errors="raise"`` the first one is raised (naming its row) once every row was
        scored; with ``errors="return"`` it takes that row's place, so one bad row never
        fails the others.

        Example:
            >>> from aieval.scorers import rouge_l
            >>> rouge_l.batch(["the cat sat", "a b"], ["the cat sat", "b a"])
            [1.0, 0.5]
        """
        if errors not in ("raise", "return"):
            raise ConfigError(f"errors={errors!r} is not supported; use 'raise' or 'return'")
        preds, refs = list(predictions), list(expected)
        if len(preds) != len(refs):
            raise ConfigError(
                f"scorer {self.name!r}: batch got {len(preds)} predictions and "
                f"{len(refs)} expected answers; give one of each per row"
            )
        if self.is_async or self.context:
            raise ConfigError(
                f"scorer {self.name!r} is async or takes run context; score it with score()"
            )
        if self.batch_fn is not None:
            results = self.batch_fn(preds, refs, **self.options)
        else:
            results = [self._call_row(p, r) for p, r in zip(preds, refs, strict=True)]
        if errors == "raise":
            for row, result in enumerate(results):
                if isinstance(result, ScorerError):
                    raise ScorerError(f"row {row}: {result}") from result
        return results

    def _call_row(self, prediction: Any, expected: Any) -> Any:
        """One row of a batch without a batch implementation; its failure as a value."""
        args = (prediction,) if self._positional == 1 else (prediction, expected)
        try:
            return self.fn(*args, **self.options)
        except ScorerError as exc:
            return exc
        except Exception as exc:
            error = ScorerError(f"scorer {self.name!r} raised {type(exc).__name__}: {exc}")
            error.__cause__ = exc
            return error

    async def score(
        self, prediction: Any, expected: Any, context: Mapping[str, Any] | None = None
    ) -> Score:
        """Score one sample, raising :class:`ScorerError` on any failure or invalid value."""
        kwargs = dict(self.options)
        if context and self.context:
            for key in self.context:
                kwargs[key] = context.get(key)
        args = (prediction,) if self._positional == 1 else (prediction, expected)
        try:
            if getattr(self.fn, "__aieval_bounded__", False):
                # it waits on a worker: the other samples' target calls and checks go on
                result = await asyncio.to_thread(self.fn, *args, **kwargs)
            elif getattr(self.fn, "__aieval_off_loop__", False) and _long(args):
                # it takes long on a long text and cannot be stopped: off the event loop, and
                # charged to the sample's check budget (a short text scores in microseconds,
                # less than a thread's hand-off costs)
                with in_process_budget(self.name):
                    result = await asyncio.to_thread(self.fn, *args, **kwargs)
            else:
                result = self.fn(*args, **kwargs)
            if self.is_async or inspect.isawaitable(result):
                result = await result
        except (ScorerError, StoreError):
            raise  # a store failure (a judge cache's) is the run's, not the scorer's
        except Exception as exc:
            raise ScorerError(f"scorer {self.name!r} raised {type(exc).__name__}: {exc}") from exc
        return to_score(result, self.name)


#: Characters of text (prediction and expected together) from which a reference metric that
#: grows with the texts' lengths is scored off the event loop.
OFF_LOOP_CHARS = 20_000


def _long(args: tuple[Any, ...]) -> bool:
    """Whether the texts of ``args`` together reach :data:`OFF_LOOP_CHARS`."""
    return sum(len(a) for a in args if isinstance(a, str)) >= OFF_LOOP_CHARS


def _import_attribute(module: str, qualname: str) -> Any:
    """``module.qualname`` imported, or ``None`` when it cannot be."""
    try:
        found: Any = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
    except (ImportError, AttributeError):
        return None
    return found


def _restore_scorer(
    module: str,
    qualname: str,
    name: str,
    options: dict[str, Any],
    threshold: float | None = None,
    weight: float = 1.0,
) -> Scorer:
    """Unpickle a scorer pickled by import path, with its name, options, threshold and weight."""
    found = _import_attribute(module, qualname)
    if not isinstance(found, Scorer):
        raise ConfigError(f"scorer {name!r}: {module}:{qualname} is no longer a scorer here")
    if (
        found.name == name
        and found.options == options
        and found.threshold == threshold
        and found.weight == weight
    ):
        return found
    return type(found)(
        found.fn,
        name=name,
        options=options,
        batch_fn=found.batch_fn,
        threshold=threshold,
        weight=weight,
    )


def _parameter_names(fn: Callable[..., Any]) -> frozenset[str]:
    """The names ``fn`` declares as parameters (none when it has no signature)."""
    try:
        return frozenset(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return frozenset()


def check_threshold(value: Any, name: str) -> float | None:
    """``value`` as a scorer's own pass threshold: ``None``, or a number in 0..1.

    Raises:
        ConfigError: naming the scorer, for a bool, a text, NaN or a number outside 0..1 (a
            score's range: no value could pass a higher one).
    """
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{name}.threshold: must be a number in 0..1, got {value!r}")
    number = float(value)
    if not 0.0 <= number <= 1.0:  # NaN fails both comparisons
        raise ConfigError(
            f"{name}.threshold: must be in 0..1 (the range of a score), got {value!r}"
        )
    return number


def check_weight(value: Any, name: str) -> float:
    """``value`` as a scorer's weight: a finite number >= 0.

    Raises:
        ConfigError: naming the scorer, for a bool, a text, NaN, infinity or a negative number.
    """
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConfigError(f"{name}.weight: must be a number >= 0, got {value!r}")
    number = float(value)
    if not math.isfinite(number) or number < 0:
        raise ConfigError(f"{name}.weight: must be a finite number >= 0, got {value!r}")
    return number


def to_score(result: Any, name: str) -> Score:
    """Validate a scorer's return value and wrap it in a :class:`Score`."""
    if isinstance(result, Score):
        if result.value is not None:
            _check_value(result.value, name)
            return Score(
                float(result.value), result.raw, result.reason, result.metadata, result.unreadable
            )
        return result
    if isinstance(result, bool):
        return Score(1.0 if result else 0.0)
    return Score(_check_value(result, name))


def _check_value(value: Any, name: str) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if not isinstance(value, (int, float)):
        raise ScorerError(
            f"scorer {name!r} returned {type(value).__name__} {value!r}; expected a float in 0..1"
        )
    number = float(value)
    if math.isnan(number):
        raise ScorerError(f"scorer {name!r} returned NaN; expected a float in 0..1")
    if not 0.0 <= number <= 1.0:
        raise ScorerError(f"scorer {name!r} returned {number!r}, outside 0..1")
    return number


def _inspect_parameters(fn: Callable[..., Any], name: str) -> tuple[frozenset[str], int]:
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        return frozenset(), 2
    positional = 0
    context: set[str] = set()
    varargs = False
    for param in signature.parameters.values():
        if param.kind in (param.POSITIONAL_ONLY, param.POSITIONAL_OR_KEYWORD):
            positional += 1
        elif param.kind is param.VAR_POSITIONAL:
            varargs = True
        elif param.kind is param.KEYWORD_ONLY and param.name in CONTEXT_PARAMETERS:
            context.add(param.name)
    if positional == 0 and not varargs:
        raise ConfigError(
            f"scorer {name!r} must take the prediction as its first positional parameter"
        )
    return frozenset(context), 1 if positional == 1 and not varargs else 2


@overload
def scorer(fn: Callable[..., Any], /) -> Scorer: ...


@overload
def scorer(*, name: str | None = None) -> Callable[[Callable[..., Any]], Scorer]: ...


def scorer(
    fn: Callable[..., Any] | None = None, /, *, name: str | None = None
) -> Scorer | Callable[[Callable[..., Any]], Scorer]:
    """Turn a function into a registered scorer.

    The function takes ``(prediction, expected)`` and returns a float in 0..1 (or a
    :class:`~aieval.Score`). It may declare any of ``example``, ``model``, ``provider``,
    ``prompt``, ``output``, ``run`` as keyword-only parameters; the runner fills them in.

    Example:
        >>> @scorer
        ... def mentions_refund(prediction: str, _expected: str) -> float:
        ...     return 1.0 if "refund" in prediction.lower() else 0.0
        >>> mentions_refund.name, mentions_refund("Refund issued", "")
        ('mentions_refund', 1.0)
    """

    def wrap(function: Callable[..., Any]) -> Scorer:
        built = function if isinstance(function, Scorer) else Scorer(function, name=name)
        if isinstance(function, Scorer) and name:
            built = function.with_options(name=name)
        _REGISTRY[built.name] = built
        return built

    if fn is not None:
        return wrap(fn)
    return wrap


def registered_scorers() -> dict[str, Scorer]:
    """Every scorer registered by name (built-ins, ``@scorer`` functions, entry points)."""
    _load_entry_points()
    return dict(_REGISTRY)


def get_scorer(name: str) -> Scorer:
    """The scorer registered under ``name``; :class:`ConfigError` names the known ones."""
    if name not in _REGISTRY or (not _entry_points_loaded and name in _plugin_names()):
        _load_entry_points()  # also finds a plug-in that has a registered scorer's name
    try:
        return _REGISTRY[name]
    except KeyError:
        known = ", ".join(sorted(_REGISTRY)) or "none"
        close = difflib.get_close_matches(name, list(_REGISTRY), n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]}?)" if close else ""
        raise ConfigError(f"unknown scorer {name!r}{hint}; known scorers: {known}") from None


_entry_points_loaded = False


_names: frozenset[str] | None = None


def _plugin_names() -> frozenset[str]:
    """Names of the installed scorer plug-ins (read once per process, none loaded)."""
    global _names
    if _names is None:
        _names = frozenset(plugin_names(GROUPS["scorers"]))
    return _names


def _load_entry_points() -> None:
    global _entry_points_loaded
    if _entry_points_loaded:
        return
    found: dict[str, Scorer] = {}
    for name, loaded in load_plugins(GROUPS["scorers"]).items():
        if isinstance(loaded, Scorer):
            # stored and reported under the name the user asks for: the entry point's
            found[name] = loaded if loaded.name == name else loaded.with_options(name=name)
        elif callable(loaded):
            found[name] = Scorer(loaded, name=name)
        else:
            raise ConfigError(
                f"scorer plug-in {name!r} ({GROUPS['scorers']}) is {type(loaded).__name__} "
                f"{loaded!r}, not a scorer or a function"
            )
    for name, built in found.items():
        have = _REGISTRY.get(name)
        if have is not None and have is not built and have.fn is not built.fn:
            raise ConfigError(
                f"scorer plug-in {name!r} ({GROUPS['scorers']}) has the name of a scorer "
                f"already registered here ({have.fn.__module__}.{have.fn.__qualname__}): "
                "rename one of them, so that neither replaces the other unnoticed"
            )
    _entry_points_loaded = True
    for name, built in found.items():
        _REGISTRY.setdefault(name, built)
