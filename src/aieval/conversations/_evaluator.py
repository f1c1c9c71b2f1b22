"""The ``conversation`` evaluator plug-in: ``aieval run`` plays each scenario as one sample.

The dataset is a scenario file (the rows :func:`load_scenarios` reads; the run's dataset
version is the scenario set's). The run's target is the assistant under test: a provider's
model (the eval file's ``target:``) is called as a :class:`ChatTarget`, a Python callable as
``fn(turns)``. Each sample's prediction is the final assistant answer; its ``extra`` keeps the
whole record (``extra["conversation"]``, :meth:`Conversation.to_dict`) on either store backend.
A conversation that failed (the target, the simulated user, a replay miss) is the sample's
error, never a score of 0. With a replay, each scenario takes its record from the stored run by
scenario id and epoch.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from aieval._types import Example
from aieval.conversations._checks import Played, check_scorers, final_answer
from aieval.conversations._engine import Replay, ReplayMode, run_conversation
from aieval.conversations._environment import FinalState, made, snapshot
from aieval.conversations._estimate import Estimate, estimate_calls
from aieval.conversations._fidelity import (
    FIDELITY_KEY,
    SimulatorFidelity,
    check_fidelity,
    simulated_turn_numbers,
)
from aieval.conversations._grader import ConversationGrader
from aieval.conversations._records import (
    CONVERSATION_KEY,
    replay_records,
    replay_source,
    replayed_states,
)
from aieval.conversations._records_file import is_records_file
from aieval.conversations._scenario import Scenario
from aieval.conversations._scenarios import ScenarioSet, _file_rows, load_scenarios
from aieval.conversations._settings import (
    ConversationSettings,
    Hooks,
    UserSettings,
    import_hooks,
    parse_settings,
    simulated_user,
)
from aieval.conversations._target import ChatTarget, ConversationTarget
from aieval.conversations._transcript_judges import TRANSCRIPT_JUDGES, judges_of
from aieval.core import (
    Conversation,
    ConversationOutcome,
    Grader,
    GraderRequest,
    Output,
    Target,
    Usage,
)
from aieval.datasets import Dataset
from aieval.errors import ConfigError, DatasetError, ReplayMissError
from aieval.runner import Aggregator, EvaluatorRequest
from aieval.scorers import Scorer
from aieval.scorers.state import FINAL_STATE_KEY

__all__ = ["ConversationEvaluator", "ConversationRunTarget", "estimate_run", "factory"]

_MODES = ("strict", "all", "branch")
#: sources of turns that cost a call in this run (replayed and scripted turns cost none)
_SPENT = frozenset({"live", "simulated"})


class ConversationEvaluator:
    """Plays scenarios as samples (see the module docstring)."""

    #: the run config's key for :meth:`describe` (not ``workflow``: this is no workflow run)
    config_key = "conversation"
    #: why a run cannot go to Ray workers: the runner refuses it before anything is stored
    local_only = (
        "a conversation run plays its scenarios in this process (the scenario file, the "
        "author's Python and a replayed run's records are read here, not on workers): run it "
        "with the local executor (--executor local, or settings.executor: local); "
        "settings.concurrency sets how many conversations play at once"
    )

    def __init__(self, request: EvaluatorRequest) -> None:
        self.settings: ConversationSettings = parse_settings(request.conversation)
        self.hooks: Hooks = import_hooks(self.settings)
        mode = request.replay_mode or "strict"
        if mode not in _MODES:
            raise ConfigError(f"replay_mode: {mode!r}; expected one of {', '.join(_MODES)}")
        if request.replay_mode is not None and request.replay is None:
            raise ConfigError("replay_mode: give the run to replay (replay: RUN, or --replay)")
        self.replay: str | None = request.replay
        self.mode: ReplayMode = mode  # type: ignore[assignment]
        judges = [c for c in self.settings.builtin_checks if c in TRANSCRIPT_JUDGES]
        if self.replay is not None and mode == "all" and judges:
            # replay 'all' makes no call at all; a judge is a live call, so it is refused here,
            # before anything is played or stored, rather than called behind the contract
            raise ConfigError(
                f"conversation.builtin_checks: {', '.join(judges)} call a judge model, and a "
                "replay in mode 'all' makes no call: replay in mode 'strict' or 'branch', or "
                "leave the judges out of this run"
            )
        self.store = request.store
        self.limit = request.limit
        self.epochs = request.epochs
        self.scenarios: ScenarioSet | None = None
        self.records: dict[tuple[str, int], Conversation] | None = None
        #: the replayed run's environment snapshots (with an environment only)
        self.states: dict[tuple[str, int], Any] = {}

    @property
    def own_target(self) -> bool:
        """Whether the assistant under test is the author's Python (``conversation.target``):
        it answers again in every epoch, as a run's target does."""
        return self.hooks.target is not None

    def describe(self) -> dict[str, Any]:
        """What the run's config records: the scenario set and how it was played."""
        user = self.settings.user
        return {
            "kind": "conversation",
            "scenarios": self.scenarios.version if self.scenarios is not None else None,
            "replay": self.replay,
            "replay_mode": self.mode if self.replay is not None else None,
            "user": None if user is None else _described(user),
        }

    def scorers(self) -> list[Scorer]:
        """The checks per turn and per conversation, as the run's scorers."""
        return check_scorers(
            self.hooks.turn_checks or {},
            self.hooks.conversation_checks or {},
            self.hooks.state,
            self.settings.builtin_checks,
            state_check=self.hooks.state_check,
        ) + judges_of(self.settings.builtin_checks, self.settings.judge)

    def judge_calls(self) -> int:
        """The judge calls each judged conversation costs (judges times samples)."""
        judge = self.settings.judge
        asked = [c for c in self.settings.builtin_checks if c in TRANSCRIPT_JUDGES]
        return 0 if judge is None else len(asked) * judge.samples

    def rows(self, dataset: Any) -> Dataset:
        """The scenario file as the run's rows: one per scenario, its version the set's."""
        if not isinstance(dataset, str | list | tuple) and not hasattr(dataset, "__fspath__"):
            raise ConfigError(
                "dataset: the conversation evaluator reads a scenario file (.jsonl, .yaml) "
                "or a list of scenario rows"
            )
        turn = set(self.hooks.turn_checks or {})
        whole = set(self.hooks.conversation_checks or {})
        goals = set(self.hooks.goal_checks or {})
        scenarios = load_scenarios(dataset, checks=turn | whole, goal_checks=goals)
        label = scenarios.source
        raw = (
            [row for _, row, _ in _file_rows_of(dataset, label)]
            if not isinstance(dataset, list | tuple)
            else list(dataset)
        )
        for scenario in scenarios:
            _kinds(scenario, turn, whole, label)
        self.scenarios = scenarios
        rows = [
            {
                "id": s.id,
                "input": {"goal": s.goal, "persona": s.persona},
                "scenario": row,
            }
            for s, row in zip(scenarios, raw, strict=True)
        ]
        # the version hashes each scenario row as written: the scenario set's version
        return Dataset(rows, label=label, limit=self.limit, example_key=_scenario_row)

    def check(self, examples: Iterable[Example]) -> None:
        """Nothing beyond the scenarios' own validation (done in :meth:`rows`)."""

    def wrap(self, target: Target | None) -> Target:
        """The target that plays each scenario against the run's assistant."""
        inner = _assistant(target)
        self.check_once(inner is not None)
        if self.hooks.target is not None:
            inner = self.hooks.target
        if self.replay is not None and self.records is None:
            self.records = replay_records(self.store, self.replay)
            _check_epochs(self.replay, self.records, self.epochs)
            if self.hooks.environment is not None:
                self.states = replayed_states(self.store, self.replay)
        self.check_target(inner is not None)
        user = self.settings.user
        return ConversationRunTarget(
            self,
            inner,
            None if user is None else simulated_user(user, 16),
            target,
        )

    def check_once(self, given: bool) -> None:
        """Refuse the assistant under test given twice (``given``: the run has a target, and
        ``conversation.target`` names one too)."""
        if given and self.hooks.target is not None:
            raise ConfigError(
                "conversation.target: the eval already has a target (target:, or target= "
                "in Python); give the assistant under test once"
            )

    def check_target(self, given: bool) -> None:
        """Refuse a run (or its estimate) with no assistant under test (``given``: the run
        has a target), unless it replays in mode 'all'."""
        if not given and self.hooks.target is None and (self.replay is None or self.mode != "all"):
            raise ConfigError(
                "conversation: give the assistant under test as the target (target: in the "
                "eval file, or a Python function as conversation.target); only a replay in mode "
                "'all' runs without one"
            )

    def grader(self, request: GraderRequest) -> Grader:
        """The threshold grader over the checks' scores; a conversation whose simulated user
        failed fidelity is invalid (see :class:`ConversationGrader`)."""
        return ConversationGrader(request.pass_threshold)

    def aggregator(self, scorer_names: list[str]) -> Aggregator:
        return Aggregator(scorer_names)

    def scenario(self, scenario_id: str) -> Scenario:
        if self.scenarios is None:
            raise ConfigError(
                "conversation: the scenarios were not read in this process (conversation runs "
                "use the local executor)"
            )
        return self.scenarios.by_id(scenario_id)


class ConversationRunTarget(Target):
    """Plays one scenario per example and returns the conversation as its output."""

    def __init__(
        self,
        evaluator: ConversationEvaluator,
        assistant: Any,
        user: Any,
        wrapped: Target | None,
    ) -> None:
        self.evaluator = evaluator
        self.assistant = assistant
        self.user = user
        self.inner = wrapped
        if wrapped is not None:
            self.name = wrapped.name
        elif assistant is not None:  # the author's Python: a function, or a callable object
            self.name = getattr(assistant, "__name__", None) or type(assistant).__name__
        else:
            self.name = "replay"

    async def produce(self, example: Example) -> Output:
        ev = self.evaluator
        scenario = ev.scenario(example.id)
        epoch = example.epoch or 0
        replay = None
        if ev.records is not None:
            record = ev.records.get((scenario.id, epoch))
            if record is None:
                miss = ReplayMissError(
                    scenario.id,
                    1,
                    f"{replay_source(ev.replay or '')} holds no conversation of epoch {epoch}",
                    mode=ev.mode,
                )
                outcome = ConversationOutcome("failed", False, str(miss), type(miss).__name__)
                return _output(scenario, Conversation(scenario.id, epoch, (), outcome))
            replay = Replay(record, ev.mode)
        factory = ev.hooks.environment
        environment = None if factory is None else made(factory, scenario)
        conversation = await run_conversation(
            scenario,
            self.assistant,
            user=self.user,
            tools=ev.hooks.tools,
            goal_checks=ev.hooks.goal_checks,
            replay=replay,
            epoch=epoch,
            max_tool_rounds=ev.settings.max_tool_rounds,
            environment=environment,
        )
        state = None
        if environment is not None:
            state = snapshot(environment) if replay is None else _replayed_state(ev, conversation)
        return _output(scenario, conversation, state)

    async def aclose(self) -> None:
        if self.inner is not None:
            await self.inner.aclose()
        else:
            # the author's Python assistant (conversation.target) may hold a client to close
            closer = getattr(self.assistant, "aclose", None)
            if callable(closer):
                await closer()
        provider = getattr(self.user, "provider", None)
        closer = getattr(provider, "aclose", None)
        if closer is not None:
            await closer()


def _described(user: UserSettings) -> dict[str, Any]:
    """The simulated user as the run's config records it (a Python one by its reference)."""
    described: dict[str, Any] = {"provider": user.provider, "model": user.model, "seed": user.seed}
    if user.python is not None:
        # a file by its name only: the run's config says the same from any checkout
        module, _, name = user.python.rpartition(":")
        described["python"] = (
            f"{Path(module).name}:{name}" if module.endswith(".py") else user.python
        )
    return described


def _fidelity(scenario: Scenario, conversation: Conversation) -> SimulatorFidelity | None:
    """The simulated user's fidelity, when one spoke in a conversation that did not fail: the
    task counts as done when the goal check ended it, and as not done when the scenario has a
    goal check that did not."""
    if conversation.outcome.stop_reason == "failed":
        return None
    if not simulated_turn_numbers(conversation, scenario):
        return None
    reached = conversation.outcome.stop_reason == "goal_reached"
    goal_met = True if reached else (False if scenario.stop.goal_check is not None else None)
    return check_fidelity(conversation, scenario, goal_met=goal_met)


#: why a replayed conversation has no environment state: its tool results came from the record
_REPLAYED = (
    "a replayed conversation's tools were not run (their results came from the record), so "
    "the environment did not change: its final state is not known; play the scenario live"
)


def _replayed_state(ev: ConversationEvaluator, conversation: Conversation) -> FinalState:
    """A replay's final state: the replayed run's snapshot when every turn and tool result
    was the record's (no branch, no failure), else not known (tools that ran after a branch
    ran on an environment that never saw the replayed calls)."""
    key = (conversation.scenario_id, conversation.epoch)
    whole = conversation.branched_at is None and conversation.outcome.stop_reason != "failed"
    if whole and key in ev.states:
        return FinalState(ev.states[key])
    if whole:
        return FinalState(error=f"{_REPLAYED} (the replayed record stores no final state)")
    return FinalState(error=_REPLAYED)


def _output(
    scenario: Scenario, conversation: Conversation, state: FinalState | None = None
) -> Output:
    outcome = conversation.outcome
    spent = [t for t in conversation.turns if t.source in _SPENT and t.usage is not None]
    latencies = [t.latency_s for t in conversation.turns if t.latency_s is not None]
    fidelity = _fidelity(scenario, conversation)
    extra: dict[str, Any] = {CONVERSATION_KEY: conversation.to_dict()}
    if fidelity is not None:
        extra[FIDELITY_KEY] = fidelity.to_dict()
    if state is not None and state.error is None:
        extra[FINAL_STATE_KEY] = state.value  # stored with the sample: reports and show see it
    return Output(
        final_answer(conversation),
        Played(
            scenario,
            conversation,
            fidelity,
            final_state=None if state is None else state.value,
            final_state_error=None if state is None else state.error,
        ),
        error=None
        if outcome.stop_reason != "failed"
        else f"{outcome.failure_type}: {outcome.failure}",
        latency_s=sum(latencies) if latencies else None,
        usage=_usage(spent),
        extra=extra,
    )


def _usage(turns: list[Any]) -> Usage:
    """Tokens and cost of the calls this run made (replayed and scripted turns cost nothing);
    a count or cost one call did not report leaves the sum unknown (``None``), never 0."""
    if not turns:
        return Usage(0, 0, 0.0, 0)
    return Usage(
        _sum([t.usage.input_tokens for t in turns]),
        _sum([t.usage.output_tokens for t in turns]),
        _sum([t.usage.cost for t in turns]),
        sum(t.usage.retries for t in turns),
    )


def _sum(values: list[Any]) -> Any:
    return None if None in values else sum(values)


def _assistant(target: Target | None) -> ConversationTarget | Any:
    """The run's target as a conversation target: a provider's model as a chat endpoint, a
    Python callable as ``fn(turns)``."""
    if target is None:
        return None
    # the runner's provider target (its provider, model, system, parameters) or callable
    provider = getattr(target, "provider", None)
    if provider is not None and isinstance(getattr(target, "model", None), str):
        params = dict(getattr(target, "params", {}))
        if getattr(target, "max_tokens", None) is not None:
            params["max_tokens"] = target.max_tokens  # type: ignore[attr-defined]
        if getattr(target, "template", None) is not None:
            raise ConfigError(
                "target.prompt: a conversation sends the turns themselves; remove the template"
            )
        return ChatTarget(
            provider,
            target.model,  # type: ignore[attr-defined]
            system=getattr(target, "system", None),
            temperature=getattr(target, "temperature", None),
            params=params,
        )
    fn = getattr(target, "fn", None)
    if callable(fn):
        return fn
    raise ConfigError(
        f"conversation: the target must be a provider's model or a Python callable, got "
        f"{type(target).__name__}"
    )


def _check_epochs(run: str, records: Mapping[tuple[str, int], Conversation], epochs: int) -> None:
    """Epochs are played live; a replay plays the epochs its run recorded (by number), so
    asking for others is refused before the run starts, not failed in every sample."""
    asked = {0} if epochs == 1 else set(range(1, epochs + 1))
    held = {epoch for _, epoch in records}
    if asked <= held:
        return
    recorded = (
        "without epochs" if held == {0} else f"with epochs {', '.join(map(str, sorted(held)))}"
    )
    given = max(held) if held and held != {0} else 1
    asking = f"{epochs} epochs" if epochs > 1 else "no epochs"
    raise ConfigError(
        f"replay {run!r}: this run asks for {asking} and the replayed run was played "
        f"{recorded}: epochs are played live, and a replay plays only the epochs its run "
        f"recorded; run without --replay to play {asking}, or replay with --epochs {given}"
    )


def _scenario_row(row: Mapping[str, Any]) -> Any:
    return row["scenario"]


def _file_rows_of(dataset: Any, label: str) -> list[tuple[int, Any, str]]:
    from aieval._files import readable

    return _file_rows(readable(dataset, "scenario file"), label)


def _kinds(scenario: Scenario, turn: set[str], whole: set[str], source: str) -> None:
    """A turn check named as a conversation check (or the reverse) is refused, naming both."""
    for name in scenario.checks.turn:
        if name not in turn:
            raise DatasetError(
                f"scenario {scenario.id!r}: checks.turn names {name!r}, a conversation check; "
                f"turn checks: {', '.join(sorted(turn)) or 'none'}",
                source=source,
            )
    for name in scenario.checks.conversation:
        if name not in whole:
            raise DatasetError(
                f"scenario {scenario.id!r}: checks.conversation names {name!r}, a turn check; "
                f"conversation checks: {', '.join(sorted(whole))}",
                source=source,
            )


def factory(request: EvaluatorRequest) -> ConversationEvaluator:
    """Play each scenario of the run's scenario file as one sample."""
    return ConversationEvaluator(request)


def estimate_run(config: Any, *, store: Any, **overrides: Any) -> list[Estimate]:
    """The estimate of each run an eval configuration (an :class:`~aieval.runner.EvalConfig`
    of the conversation evaluator) would make with ``overrides`` (``run()`` keywords), read
    from its scenarios and, replaying, the stored record; nothing is called. It refuses what
    the run would refuse, with the run's message (naming the eval file first)."""
    path = config.source.path if config.source is not None else None
    try:
        return _estimates(config, store, overrides)
    except ConfigError as exc:
        message = exc.args[0] if exc.args else None
        if path and isinstance(message, str) and not message.startswith(f"{path}:"):
            exc.args = (f"{path}: {message}", *exc.args[1:])
        raise


def _estimates(config: Any, store: Any, overrides: dict[str, Any]) -> list[Estimate]:
    estimates = []
    for spec in config.specs(store=False, **overrides):
        scoring = spec.scoring
        if scoring.conversation is None and scoring.replay is None:
            file = config.source.path if config.source is not None else config.name
            raise ConfigError(
                f"{file}: --estimate applies to conversation evals, and this one has no "
                "`conversation:` key"
            )
        evaluator = ConversationEvaluator(
            EvaluatorRequest(
                conversation=scoring.conversation,
                replay=scoring.replay,
                replay_mode=scoring.replay_mode,
                store=store,
                limit=spec.limit,
                epochs=spec.epochs,
            )
        )
        data = evaluator.rows(spec.dataset)
        ids = [example.id for example in data]
        # the run's own refusals, in its order, so that no figures are printed for a run
        # that would not start
        given = spec.target.provider is not None or spec.target.function is not None
        evaluator.check_once(given)
        records = None
        if evaluator.replay is not None:
            records = replay_records(store, evaluator.replay)
            _check_epochs(evaluator.replay, records, spec.epochs)
        evaluator.check_target(given)
        estimates.append(
            estimate_calls(
                [evaluator.scenario(i) for i in ids],
                spec.epochs,
                has_user=evaluator.settings.user is not None,
                records=records,
                mode=evaluator.mode if records is not None else None,
                judge_calls=evaluator.judge_calls(),
                max_tool_rounds=evaluator.settings.max_tool_rounds,
                shared_tools=bool(evaluator.hooks.tools),
                from_file=evaluator.replay is not None and is_records_file(evaluator.replay),
            )
        )
    return estimates
