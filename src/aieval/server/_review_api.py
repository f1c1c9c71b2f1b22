"""The review queue's API: queues with progress, a reviewer's next item (blind), labels.

Only a review token reaches these endpoints (:mod:`aieval.server._security`); the token's
name is the reviewer. The one exception is making a queue: that chooses which runs reviewers
read, so it takes the server's own token (a review token gets 403). An item is served blind:
its input, prompt, expected and answer, never the judge's score, reason, verdicts or the
sample's pass flag, until this reviewer saved a label for it; the save's answer reveals them,
with the queue's agreement so far. Errors here never name the store's file or URL, and an
unknown field is named with the request's own fields.

The live agreement (a queue's ``agreement``, after a save and in ``GET /queues/{id}``) is the
judge against the queue's saved labels, weighted by the queue's design, with 95% intervals
(:func:`aieval.judges.queue_agreement`, the figures ``aieval judges`` prints); it holds only
labels already saved, so it tells a reviewer nothing of an item before its save.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine
from typing import Annotated, Any, get_args

from fastapi import APIRouter, Path, Request, Response
from fastapi.exceptions import RequestValidationError
from fastapi.routing import APIRoute
from pydantic import BaseModel, ConfigDict, Field
from starlette.exceptions import HTTPException

from aieval.core import ReviewLabel
from aieval.errors import ConfigError, RunNotFoundError, UserError
from aieval.judges import MAX_NOTE, QueueRequest, build_queue, parse_mix, queue_agreement
from aieval.server._errors import error_body
from aieval.server._responses import SafeJSONResponse
from aieval.server._security import REVIEWER
from aieval.store import ReviewItem, ReviewQueue, Store, StoreLocation

__all__ = ["MAX_NOTE", "review_api"]


def _hide_store(text: str, location: StoreLocation) -> str:
    """``text`` without the store's file or URL: a reviewer has no business knowing where the
    server keeps its runs."""
    text = location.scrub(text)
    names = [location.redacted]
    if location.path is not None:
        names += [str(location.path), str(location.path.resolve()), location.path.name]
    for name in sorted({n for n in names if n}, key=len, reverse=True):
        text = text.replace(name, "the store")
    return text


def _body_fields(route: APIRoute) -> tuple[str, ...]:
    """The fields of the route's body model (none for a route without one)."""
    for param in route.dependant.body_params:
        annotation = param.field_info.annotation
        for kind in (annotation, *get_args(annotation)):
            if isinstance(kind, type) and issubclass(kind, BaseModel):
                return tuple(kind.model_fields)
    return ()


class _ReviewRoute(APIRoute):
    """A review endpoint: its user errors answered without the store's name, and an unknown
    body field named with this request's own fields (not the evaluation body's keys)."""

    def get_route_handler(self) -> Callable[[Request], Coroutine[Any, Any, Response]]:
        handler = super().get_route_handler()
        fields = _body_fields(self)

        async def guarded(request: Request) -> Response:
            try:
                return await handler(request)
            except RequestValidationError as exc:
                reasons = [_reason(err, fields) for err in exc.errors()]
                message = f"invalid request: {len(reasons)} problem(s): " + "; ".join(reasons)
                return _answer(request, 422, error_body(message, reasons, missing_inputs=[]))
            except (RunNotFoundError, UserError) as exc:
                said = _hide_store(str(exc), _store(request).location)
                status = 404 if isinstance(exc, RunNotFoundError) else 422
                return _answer(request, status, error_body(said, [said], missing_inputs=[]))

        return guarded


def _reason(err: Any, fields: tuple[str, ...]) -> str:
    loc = [str(part) for part in err.get("loc", ())]
    if loc and loc[0] == "body":
        loc = loc[1:]
    msg = str(err.get("msg", "invalid"))
    if err.get("type") == "extra_forbidden":
        msg = f"unknown field; the fields are {', '.join(fields) or '(none)'}"
    return f"{'.'.join(loc) or '(body)'}: {msg}"


def _answer(request: Request, status: int, body: dict[str, Any]) -> SafeJSONResponse:
    return SafeJSONResponse(request.app.state.redactor.redact(body), status_code=status)


review_api = APIRouter(prefix="/api/review", tags=["review"], route_class=_ReviewRoute)
_Ord = Annotated[int, Path(ge=0, le=10**9)]
_QueueId = Annotated[str, Path(min_length=1, max_length=200)]


class QueueCreate(BaseModel):
    """A new queue: the runs and the judge's scorer, its size, reviewers per item, selection."""

    model_config = ConfigDict(extra="forbid")
    runs: list[Annotated[str, Field(min_length=1, max_length=200)]] = Field(
        min_length=1, max_length=100
    )
    scorer: str = Field(min_length=1, max_length=200)
    size: int = Field(50, ge=1, le=10000)
    reviewers: int = Field(2, ge=1, le=20)
    selection: str = Field(
        "stratified=20,uncertain=80",
        max_length=200,
        description="ways and shares: stratified, uncertain, random",
    )
    seed: int = Field(0, ge=0, le=2**31)
    name: str | None = Field(None, min_length=1, max_length=200)


class NextAsk(BaseModel):
    """Items the reviewer skipped (their places), not to be served again now."""

    model_config = ConfigDict(extra="forbid")
    skip: list[Annotated[int, Field(ge=0)]] = Field(default_factory=list, max_length=1000)


class LabelSave(BaseModel):
    """One reviewer's label: pass/fail or a score on 0..1, and a note."""

    model_config = ConfigDict(extra="forbid")
    passed: bool | None = None
    score: float | None = Field(None, ge=0, le=1, allow_inf_nan=False)
    note: str = Field("", max_length=MAX_NOTE)


#: Who made a queue over the API with the server's own token.
OWNER = "server owner"


def _reviewer(request: Request) -> str:
    name = request.scope.get(REVIEWER)
    if not isinstance(name, str):  # the middleware lets only review tokens through
        raise HTTPException(403, "this token has no review right")
    return name


def _store(request: Request) -> Store:
    store: Store = request.app.state.store
    return store


def _queue_body(queue: ReviewQueue, reviewer: str) -> dict[str, Any]:
    return {
        "id": queue.id,
        "name": queue.name,
        "judge": {"digest": queue.judge.digest, "label": queue.judge.label()},
        "runs": list(queue.runs),
        "selection": queue.selection,
        "reviewers": queue.reviewers,
        "created_by": queue.created_by,
        "created_at": queue.created_at,
        "items": queue.items,
        "complete": queue.complete,
        "labels": queue.labels,
        "wanted": queue.items * queue.reviewers,
        "yours": queue.by_reviewer.get(reviewer, 0),
        "by_reviewer": queue.by_reviewer,
    }


@review_api.get("/queues")
def list_queues(request: Request) -> SafeJSONResponse:
    """Every review queue with its progress (and the calling reviewer's own count)."""
    reviewer = _reviewer(request)
    queues = _store(request).review_queues()
    return SafeJSONResponse({"queues": [_queue_body(q, reviewer) for q in queues]})


@review_api.post("/queues", status_code=201)
def create_queue(body: QueueCreate, request: Request) -> SafeJSONResponse:
    """Build a queue from stored runs and a scorer (the judge read from the runs' stored
    options; runs of different judges are refused, naming them).

    Only the server's own token may: a queue chooses what reviewers read, and reviewers label,
    they do not choose (the security middleware lets the own token reach this one endpoint).
    """
    if isinstance(request.scope.get(REVIEWER), str):
        raise HTTPException(
            403,
            "a review token may not make queues; the server's owner makes them "
            "(aieval review create, or this endpoint with the server's own token)",
        )
    reviewer = OWNER
    store = _store(request)
    queue_id = build_queue(
        store,
        QueueRequest(
            runs=tuple(body.runs),
            scorer=body.scorer,
            size=body.size,
            reviewers=body.reviewers,
            mix=parse_mix(body.selection),
            seed=body.seed,
            name=body.name,
            created_by=reviewer,
        ),
    )
    return SafeJSONResponse(_queue_body(store.review_queue(queue_id), reviewer), status_code=201)


@review_api.get("/queues/{queue_id}")
def get_queue(queue_id: _QueueId, request: Request) -> SafeJSONResponse:
    """One queue's progress and its live agreement (labels saved so far)."""
    reviewer = _reviewer(request)
    store = _store(request)
    queue = store.review_queue(queue_id)
    return SafeJSONResponse({**_queue_body(queue, reviewer), "agreement": _agreement(store, queue)})


def _blind_item(store: Store, queue: ReviewQueue, item: ReviewItem) -> dict[str, Any]:
    """What a reviewer sees before labelling: the sample's texts, nothing of the judge."""
    sample = store.get_sample(item.run_id, item.sample_id)
    return {
        "queue": queue.id,
        "ord": item.ord,
        "run_id": item.run_id,
        "sample_id": item.sample_id,
        "input": sample.input,
        "prompt": sample.prompt,
        "expected": sample.expected,
        "prediction": sample.prediction,
    }


@review_api.post("/queues/{queue_id}/next")
def next_item(
    queue_id: _QueueId, request: Request, body: NextAsk | None = None
) -> SafeJSONResponse:
    """Reserve the calling reviewer's next item (or give back the one it holds), blind;
    ``item`` is null when nothing is left for this reviewer."""
    reviewer = _reviewer(request)
    store = _store(request)
    queue = store.review_queue(queue_id)
    skip = body.skip if body is not None else []
    item = store.reserve_review_item(queue.id, reviewer, skip=skip)
    return SafeJSONResponse(
        {
            "item": None if item is None else _blind_item(store, queue, item),
            "queue": _queue_body(store.review_queue(queue.id), reviewer),
        }
    )


@review_api.post("/queues/{queue_id}/items/{ord}/label")
def save_label(
    queue_id: _QueueId, ord: _Ord, body: LabelSave, request: Request
) -> SafeJSONResponse:
    """Save the calling reviewer's label of an item it holds; the answer reveals the judge's
    score, reason and verdicts, and the queue's agreement so far."""
    reviewer = _reviewer(request)
    if (body.passed is None) == (body.score is None):
        raise ConfigError("a label gives either passed (true or false) or a score from 0 to 1")
    store = _store(request)
    queue = store.review_queue(queue_id)
    item = store.review_item(queue.id, ord)
    label = ReviewLabel(
        judge=queue.judge.digest,
        run_id=item.run_id,
        sample_id=item.sample_id,
        reviewer=reviewer,
        passed=body.passed,
        score=body.score,
        note=body.note,
        labelled_at=time.time(),
    )
    store.save_review_label(queue.id, ord, label)
    return SafeJSONResponse(
        {
            "saved": True,
            "judge": _revealed(store, queue, item),
            "agreement": _agreement(store, queue),
            "queue": _queue_body(store.review_queue(queue.id), reviewer),
        }
    )


@review_api.post("/queues/{queue_id}/items/{ord}/release")
def release_item(queue_id: _QueueId, ord: _Ord, request: Request) -> SafeJSONResponse:
    """Give back the calling reviewer's reservation of an item (skip it for now)."""
    reviewer = _reviewer(request)
    store = _store(request)
    queue = store.review_queue(queue_id)
    return SafeJSONResponse({"released": store.release_review_item(queue.id, ord, reviewer)})


def _threshold(queue: ReviewQueue) -> float:
    value = queue.selection.get("threshold")
    return float(value) if isinstance(value, int | float) else 0.5


def _revealed(store: Store, queue: ReviewQueue, item: ReviewItem) -> dict[str, Any]:
    """The judge's side of an item, shown once the reviewer saved a label."""
    score = store.get_sample(item.run_id, item.sample_id).scores.get(queue.judge.scorer)
    if score is None:
        return {"score": None, "passed": None, "reason": None, "verdicts": []}
    verdicts = (score.metadata or {}).get("verdicts")
    return {
        "score": score.value,
        "passed": None if score.value is None else score.value >= _threshold(queue),
        "reason": score.reason,
        "verdicts": verdicts if isinstance(verdicts, list) else [],
        "stratum": item.stratum,
    }


def _agreement(store: Store, queue: ReviewQueue) -> dict[str, Any]:
    """The queue's labels against the judge, design-weighted with 95% intervals (or why not):
    :meth:`aieval.judges.Agreement.to_dict`, with ``agree`` (labelled items where the judge
    agrees with the human majority) and ``kappa`` (the judge-human estimate) for the page."""
    try:
        figures = queue_agreement(store, queue, _threshold(queue))
    except ConfigError as exc:
        return {"labels": 0, "items": 0, "agree": 0, "kappa": None, "problem": str(exc)}
    kappa = None if figures.judge_human_undefined else round(figures.judge_human.estimate, 4)
    return {
        **figures.to_dict(),
        "agree": figures.true_pos + figures.true_neg,
        "kappa": kappa,
        "problem": None,
    }
