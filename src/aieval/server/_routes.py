"""The HTTP API: start evaluations, list and read runs and samples, compare, follow events."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Depends, Header, Query, Request
from pydantic import Field, field_validator
from pydantic.json_schema import SkipJsonSchema
from sse_starlette import EventSourceResponse

from aieval._files import confined_to
from aieval._json import duplicate_key_path
from aieval.core import SampleRecord
from aieval.errors import ConfigError, RunNotFoundError
from aieval.runner import EvalConfig, RunSummary, check_eval
from aieval.server._compare_conversation import regressed_turn_view
from aieval.server._diff import text_diff
from aieval.server._events import run_events
from aieval.server._paths import confine_config
from aieval.server._reports import comparison, run_header
from aieval.server._responses import SafeJSONResponse
from aieval.server._sql_table import count_field, sql_page
from aieval.server._table import TableQuery, table_scorers
from aieval.server._views import SampleFilter, run_item, sample_detail
from aieval.server._window_names import refuse_window_name
from aieval.store import RunRow, Store, TableReads

__all__ = ["EvaluationRequest", "router"]


async def _no_duplicate_keys(request: Request) -> None:
    """A JSON body naming a key twice is refused (422): JSON parsers keep the last silently."""
    if request.method not in ("POST", "PUT", "PATCH"):
        return
    path = duplicate_key_path(await request.body())  # starlette keeps the body for the route
    if path is not None:
        raise ConfigError(
            f"{path}: duplicate key in the request body; JSON readers would keep only the last "
            "value. Give each key once"
        )


router = APIRouter(prefix="/api", dependencies=[Depends(_no_duplicate_keys)])

_Limit = Annotated[int, Query(ge=1, le=1000)]
_Offset = Annotated[int, Query(ge=0, le=10**9)]
_SampleId = Annotated[str, Query(min_length=1, description="the sample's id, as stored")]


class EvaluationRequest(EvalConfig):
    """An eval file's content, plus ``enforce_hard_gates``; paths are relative to a root."""

    base_dir: SkipJsonSchema[str | None] = Field(None, exclude=True)

    @field_validator("base_dir")
    @classmethod
    def _no_base_dir(cls, value: str | None) -> str | None:
        if value is not None:
            raise ValueError("not accepted: paths are resolved against the server's roots")
        return value


@router.post("/evaluations", status_code=202)
def start_evaluation(body: EvaluationRequest, request: Request) -> SafeJSONResponse:
    """Validate an evaluation, queue it, and answer with its run id and event stream."""
    state = request.app.state
    state.redactor.learn(body.model_dump())
    if body.models is not None and len(body.models) > 1:
        raise ConfigError("models: the server starts one run per request; give one 'model'")
    if body.settings.executor != "local":
        # a client must not make the server start a Ray or connect to an address of its choice
        raise ConfigError(
            "settings.executor: the server runs evaluations in its own process; remove "
            "settings.executor and settings.ray_address (Ray runs start with aieval run or run())"
        )
    _no_variable_names(body)
    refuse_window_name("name", body.name)
    config = EvalConfig.model_validate(body.model_dump(exclude={"base_dir"}))
    roots = state.settings.dataset_roots
    with confined_to(roots):
        confine_config(config, roots, allow_imports=state.settings.allow_imports)
        check_eval(config)
    run_id = state.manager.submit(config)
    body_out = {"run_id": run_id, "events_url": f"/api/runs/{run_id}/events"}
    return SafeJSONResponse(body_out, status_code=202)


def _no_variable_names(body: EvalConfig) -> None:
    """Refuse ``api_key_env``: a client must not make the server send the value of any
    variable of its environment (its own token, a password) to an endpoint the client names."""
    fields = ["target.api_key_env"] if body.target and body.target.api_key_env else []
    for i, entry in enumerate(body.scorers):
        options = next(iter(entry.values()), None) if isinstance(entry, dict) else None
        if isinstance(options, dict) and "api_key_env" in options:
            fields.append(f"scorers[{i}].{next(iter(entry))}.api_key_env")
    if fields:
        raise ConfigError(
            f"{fields[0]}: the server does not read its environment variables for a request; "
            "send the key as a header of the target (headers: {Authorization: Bearer ...}) or "
            "run the evaluation with aieval run"
        )


@router.get("/runs")
def list_runs(
    request: Request, name: str | None = None, limit: _Limit = 50, offset: _Offset = 0
) -> SafeJSONResponse:
    """Stored runs, most recent first."""
    store: Store = request.app.state.store
    runs = store.list_runs(name=name or None, limit=limit, offset=offset)
    body = {
        "runs": [run_item(store, run, _pass_counts(request, run.id)) for run in runs],
        "total": store.count_runs(name=name or None),
        "limit": limit,
        "offset": offset,
    }
    return _reply(request, body)


def _pass_counts(request: Request, run_id: str) -> tuple[int, int] | None:
    """A run's ``(samples, passed)`` as a PostgreSQL store keeps them, else None (counted)."""
    queries = request.app.state.table_queries
    return None if queries is None else queries.pass_counts(run_id)


@router.get("/runs/{run_id}")
def get_run(run_id: str, request: Request) -> SafeJSONResponse:
    """The run's reporting bundle (over the samples stored so far while it runs)."""
    state = request.app.state
    return _reply(request, state.bundles.get(state.store, _run(request, run_id).id))


@router.get("/runs/{run_id}/header")
def get_run_header(run_id: str, request: Request) -> SafeJSONResponse:
    """The run's header alone (identity, status, model, timing), its sample count and target
    errors: what a page shows at once while the full report (``/runs/{run_id}``) is built."""
    store: Store = request.app.state.store
    run = _run(request, run_id)
    # a run still running has no summary yet: its target errors are not known
    errors = RunSummary.from_dict(run.metrics).target_errors if run.metrics else None
    counts = _pass_counts(request, run.id)
    body = {
        "run": run_header(run),
        "samples": TableReads(store.location).sample_count(run.id) if counts is None else counts[0],
        "target_errors": errors,
    }
    return _reply(request, body)


@router.get("/runs/{run_id}/samples")
def list_samples(
    run_id: str,
    request: Request,
    filter: SampleFilter = "all",
    q: Annotated[str, Query(max_length=500)] = "",
    scorer: str | None = None,
    min: float | None = None,
    max: float | None = None,
    meta: Annotated[str | None, Query(max_length=200)] = None,
    sort: str = "index",
    order: Literal["asc", "desc"] = "asc",
    limit: _Limit = 50,
    offset: _Offset = 0,
    after: Annotated[str | None, Query(max_length=4000)] = None,
    count: Literal["exact", "fast"] = "exact",
) -> SafeJSONResponse:
    """One page of the run's samples that match: ``q`` searches input, prediction and
    expected (case-insensitive); ``filter`` keeps passed / failed / gate-failed / errored
    samples; ``scorer`` with ``min``/``max`` keeps a score range; ``meta`` keeps samples with
    a metadata key (``key``) or value (``key=value``); ``sort`` is ``index``, ``id``,
    ``weighted_score``, ``passed``, ``error``, ``input``, ``prediction`` or ``score:NAME``.
    On a PostgreSQL store the answer's ``next`` is the token of the next page: ``after=`` it
    reads that page by key, where ``offset`` walks to it. ``count=fast`` answers without
    reading the whole run to count: ``count`` may then say ``"kind": "at_least"`` (and
    ``total`` is None) where the default counts exactly."""
    state = request.app.state
    store: Store = state.store
    run = _run(request, run_id)
    queries = state.table_queries
    if queries is not None and queries.answers(run.id):
        query = TableQuery(
            q=q.strip(), outcome=filter, scorer=scorer, min=min, max=max, meta=meta or None,
            sort=sort, order=order,
        )  # fmt: skip
        names = table_scorers(run.config, queries.scorer_names(run.id))
        body = sql_page(
            store, queries, state.sample_index.row, run.id, query, names,
            limit=limit, offset=offset, after=after, exact=count == "exact",
        )  # fmt: skip
        return _reply(request, body)
    found = state.sample_index.ready(store, run.id)
    plain = filter == "all" and not q.strip() and scorer is None and not meta
    if found is None and plain and sort == "index" and order == "asc":
        # the run is being indexed: the pages in dataset order come straight from the store
        page = state.sample_index.page(store, run.id, limit, offset)
        page["scorers"] = table_scorers(run.config, page["scorers"])
        page["count"] = count_field(page["total"])
        return _reply(request, page)
    table = found or state.sample_index.table(store, run.id)
    names = table_scorers(run.config, table.scorer_names)
    query = TableQuery(
        q=q.strip(), outcome=filter, scorer=scorer, min=min, max=max, meta=meta or None,
        sort=sort, order=order,
    )  # fmt: skip
    kept = table.select(query, names)
    body = {
        "samples": state.sample_index.items(store, run.id, table, kept[offset : offset + limit]),
        "total": len(kept),
        "count": count_field(len(kept)),
        "run_total": table.count,
        "scorers": names,
        "metadata_keys": table.metadata_keys,
        "limit": limit,
        "offset": offset,
        "indexed": True,
    }
    return _reply(request, body)


@router.get("/runs/{run_id}/sample")
def get_sample_by_id(run_id: str, request: Request, id: _SampleId) -> SafeJSONResponse:
    """One sample in full, its id in the query (``?id=HumanEval%2F7%230``): reaches every id,
    ``.``, ``..`` and ids holding ``/`` included (clients resolve ``..`` in a path)."""
    store: Store = request.app.state.store
    run = _run(request, run_id)
    return _reply(request, sample_detail(store.get_sample(run.id, id)))


@router.get("/runs/{run_id}/samples/{sample_id:path}")
def get_sample(run_id: str, sample_id: str, request: Request) -> SafeJSONResponse:
    """One sample in full: input, prompt, output, scores with reasons, calls, workflow.

    The id is the rest of the path, so ``HumanEval/7#0`` is ``samples/HumanEval%2F7%230``; an
    id that is ``.`` or ``..`` (or ends in such a segment) is reached by ``/sample?id=`` only.
    """
    return get_sample_by_id(run_id, request, _path_id(sample_id))


@router.get("/compare")
def compare(
    request: Request,
    baseline: Annotated[str, Query(min_length=1)],
    candidate: Annotated[str, Query(min_length=1)],
) -> SafeJSONResponse:
    """Candidate against baseline: metric deltas with intervals, regressions, the decision."""
    store: Store = request.app.state.store
    return _reply(request, comparison(store, baseline, candidate))


@router.get("/compare/sample")
def compare_sample_by_id(
    request: Request,
    id: _SampleId,
    baseline: Annotated[str, Query(min_length=1)],
    candidate: Annotated[str, Query(min_length=1)],
) -> SafeJSONResponse:
    """One example side by side, its id in the query: reaches every id (see ``/sample``)."""
    return compare_sample(id, request, baseline, candidate)


@router.get("/compare/samples/{sample_id:path}")
def compare_sample(
    sample_id: str,
    request: Request,
    baseline: Annotated[str, Query(min_length=1)],
    candidate: Annotated[str, Query(min_length=1)],
) -> SafeJSONResponse:
    """One example side by side: both runs' sample (output, scores, reasons) and a word diff
    of the baseline's prediction against the candidate's. The id is the rest of the path."""
    sample_id = _path_id(sample_id)
    store: Store = request.app.state.store
    sides: dict[str, Any] = {}
    records: dict[str, SampleRecord | None] = {}
    for side, ref in (("baseline", baseline), ("candidate", candidate)):
        run = _run(request, ref)
        try:
            found = records[side] = store.get_sample(run.id, sample_id)
            sides[side] = sample_detail(found)
        except RunNotFoundError:
            records[side] = sides[side] = None
        sides[side + "_run"] = {"id": run.id, "name": run.name, "model": run.model}
    if sides["baseline"] is None and sides["candidate"] is None:
        raise RunNotFoundError(f"no sample {sample_id!r} in either run")
    before = (sides["baseline"] or {}).get("prediction")
    after = (sides["candidate"] or {}).get("prediction")
    sides["diff"] = text_diff(before, after)
    # two conversations: the first turn where the candidate did worse
    sides["regressed_turn"] = regressed_turn_view(records["baseline"], records["candidate"])
    sides["id"] = sample_id
    return _reply(request, sides)


@router.get("/runs/{run_id}/events", response_class=EventSourceResponse)
async def follow_run(
    run_id: str,
    request: Request,
    last_event_id: Annotated[str | None, Header()] = None,
) -> EventSourceResponse:
    """Server-sent events of the run: run_started, sample_completed, progress, and
    run_completed (or error) last. Send ``Last-Event-ID`` to resume after an event."""
    state = request.app.state
    if state.manager.state(run_id) is None:
        run_id = (await _arun(request, run_id)).id
    after = _event_id(last_event_id)
    redact = state.redactor.redact

    async def events() -> Any:
        async for event in run_events(state.store, state.manager, state.wakeups, run_id, after):
            yield event.as_sse(redact)

    return EventSourceResponse(events(), ping=state.settings.keepalive_s)


def _path_id(sample_id: str) -> str:
    """A sample id taken from the rest of a path; an empty one is refused by name."""
    if not sample_id:
        raise ConfigError("sample_id: empty; give the id after samples/, or use ?id=")
    return sample_id


def _event_id(value: str | None) -> int | None:
    if value is None or not value.strip():
        return None
    try:
        return int(value)
    except ValueError:
        message = f"Last-Event-ID must be an event id (an integer), got {value!r}"
        raise ConfigError(message) from None


def _run(request: Request, ref: str) -> RunRow:
    """A run by id, unique id prefix or name; the 404 names only the reference."""
    store: Store = request.app.state.store
    try:
        return store.get_run(ref)
    except RunNotFoundError as exc:
        detail = "" if "ambiguous" not in str(exc) else " (the prefix is ambiguous)"
        raise RunNotFoundError(f"no run with id {ref!r}{detail}") from None


async def _arun(request: Request, run_id: str) -> RunRow:
    from starlette.concurrency import run_in_threadpool

    return await run_in_threadpool(_run, request, run_id)


def _reply(request: Request, body: dict[str, Any]) -> SafeJSONResponse:
    return SafeJSONResponse(request.app.state.redactor.redact(body))
