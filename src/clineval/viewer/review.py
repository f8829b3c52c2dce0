"""The viewer's review mode (``clineval view --review``): clinicians give verdicts on cases
and on their facts, sentences and turns, one keystroke each.

:func:`clineval.viewer.app.create_app` mounts these routes when it is given
:class:`ReviewSettings` (the reviewer's name, blind or not, the session's token); they come
before the viewer's own routes, so in review mode they take the case page over:

* ``GET /review``: every review queue of the store with this reviewer's progress;
* ``GET /review/{queue}/next``: 303 to the reviewer's next unfinished case of the queue
  (claimed for them), or the *queue done* page;
* ``GET /runs/{run}/cases/{case}[?queue=Q]``: the case with the review panel;
* ``GET /runs/{run}/cases/{case}/revealed[?queue=Q]``: the scores, the metrics' evidence and
  the judge's verdict on each item, as an HTML fragment (blind: only once the reviewer has
  answered every required question of the case);
* ``POST /api/review`` and ``POST /api/review/undo``: save a verdict, take the last one back;
* blind only: the pages that show scores of many cases (comparisons, the aggregates, the
  agreement page) say *hidden while you review blind* instead.

**Writes.** Only the two ``POST`` routes write, only through
:class:`clineval.store.reviews.ReviewStore` on a store connection of their own (the pages
read through the viewer's read-only one), and only when the request carries the session's
token in ``X-Clineval-Token`` (compared in constant time), comes from no other origin and
holds a JSON body. Every verdict is committed before the answer: a page shows *saved* only
for what is in the store. A run being run (its lock held by a live process) refuses
reviews with 409.

**Blind.** The case page of a blind review holds no score, value, label or explanation of
a metric and nothing the judge said of an item (verdict, importance, support, evidence) until
the reviewer has answered every required question of the case: the template is given none
of them, so none can leak into the HTML.
"""

from __future__ import annotations

import getpass
import itertools
import json
import os
import secrets
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

from markupsafe import Markup
from pydantic import BaseModel, ConfigDict, ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from clineval.errors import ConfigError, RunLockedError, StoreError, field_errors
from clineval.model import Case, ResultRecord, ReviewQueue, ReviewRecord, RunRecord
from clineval.model.review import reviewer_problem
from clineval.review.data import CaseProgress, QueueState, items_of, progress_of, review_schema
from clineval.review.items import CaseItems, JudgeVerdict, ReviewItem
from clineval.review.schema import ReviewScale, ReviewSchema
from clineval.store.reviews import MAX_COMMENT, ReviewStore
from clineval.store.sqlite import RunStore
from clineval.viewer.data import NotFound, ViewerData

#: The header that carries the session's token on every write.
TOKEN_HEADER = "X-Clineval-Token"
#: Environment variable naming the reviewer when ``--reviewer`` is not given.
REVIEWER_ENV = "CLINEVAL_REVIEWER"
#: Characters of an item's text kept in a verdict's ``shown`` record.
SHOWN_TEXT_CHARS = 500
#: Largest request body a write accepts (a comment is at most MAX_COMMENT characters).
MAX_BODY_BYTES = 4 * MAX_COMMENT + 4096
_ITEMS_CACHED = 4096


# --------------------------------------------------------------------------- settings


@dataclass(frozen=True)
class ReviewSettings:
    """A review session: who reviews, whether blind, and the token every write must carry."""

    reviewer: str
    blind: bool = True
    token: str = field(default_factory=lambda: secrets.token_urlsafe(32), repr=False)
    queue: str | None = None
    """The queue named on the command line (the start page marks it)."""

    def __post_init__(self) -> None:
        check_reviewer(self.reviewer)
        if len(self.token) < 16:
            raise ConfigError("a review session's token must be at least 16 characters")


def check_reviewer(name: str) -> str:
    """``name`` if it can name a reviewer (1-80 printable characters, not blank)."""
    if reviewer_problem(name) is not None:
        raise ConfigError(
            f"--reviewer {name!r}: a reviewer's name is 1 to 80 printable characters, "
            "without spaces around it (e.g. --reviewer dr.lee)"
        )
    return name


def reviewer_name(given: str | None = None) -> str:
    """The reviewer: ``--reviewer``, else ``CLINEVAL_REVIEWER``, else the login name."""
    name = given if given is not None else os.environ.get(REVIEWER_ENV) or None
    if name is None:
        try:
            name = getpass.getuser()
        except Exception:  # no login name (a container without a user entry)
            raise ConfigError(
                f"cannot tell who reviews: give --reviewer NAME (or set {REVIEWER_ENV})"
            ) from None
    return check_reviewer(name.strip() if given is None else name)


# --------------------------------------------------------------------------- what the pages need


@dataclass(frozen=True)
class PageKit:
    """What the review pages borrow from the viewer's app (which imports this module)."""

    page: Callable[..., HTMLResponse]
    """``page(request, template, status_code=200, **context)``: a whole page."""
    fragment: Callable[..., str]
    """``fragment(request, template, **context)``: a template without the page around it."""
    texts: Callable[[Case], Markup]
    """The case's texts (input, response, reference, contexts, conversation)."""
    evidence: Callable[[Case, ResultRecord, bool], Markup]
    """One metric's evidence block (``lower_is_better``)."""
    suite_case: Callable[[RunRecord, Case], Any]
    """A suite case's inputs, checked fields and output (``None`` for other cases)."""


class Refused(Exception):
    """A write refused: its HTTP status and the reason (shown on the page)."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message


class VerdictIn(BaseModel):
    """The body of ``POST /api/review``."""

    model_config = ConfigDict(extra="forbid")

    run: str
    case: str
    item: str = "case"
    scale: str
    verdict: str | None = None
    comment: str | None = None
    queue: str | None = None


class UndoIn(BaseModel):
    """The body of ``POST /api/review/undo``."""

    model_config = ConfigDict(extra="forbid")

    run: str
    case: str
    queue: str | None = None


@dataclass
class Question:
    """One question of the panel: a scale asked of an item, with the reviewer's answer."""

    item: ReviewItem
    scale: ReviewScale
    answer: ReviewRecord | None

    @property
    def value(self) -> str | None:
        return None if self.answer is None else self.answer.verdict

    @property
    def comment(self) -> str:
        return "" if self.answer is None else self.answer.comment or ""


@dataclass
class ItemView:
    item: ReviewItem
    questions: list[Question]
    judge: str | None = None
    """What the judge said of it, in words (only when the scores are shown)."""
    judge_verdict: str | None = None


@dataclass
class Group:
    title: str
    kind: str
    items: list[ItemView]
    against_title: str = ""
    against_text: str = ""


@dataclass
class QueueCounts:
    """A queue as the bar shows it for one reviewer."""

    queue: ReviewQueue
    done: int
    left: int
    fully_reviewed: int
    run_name: str | None = None
    missing_run: bool = False

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.queue.id,
            "done": self.done,
            "left": self.left,
            "size": len(self.queue.case_ids),
            "per_case": self.queue.per_case,
            "fully_reviewed": self.fully_reviewed,
        }


def _progress_json(progress: CaseProgress, reviewer: str) -> dict[str, Any]:
    return {
        "answered": min(progress.answered.get(reviewer, 0), progress.required),
        "required": progress.required,
        "complete": progress.complete(reviewer),
    }


def judge_words(judge: JudgeVerdict | None, kind: str) -> str | None:
    """What the judge said of an item, in a few words (``judge: partly · support 0.46 · importance high``)."""
    if judge is None:
        return None
    words = {"not": "not entailed" if kind == "fact" else "not supported"}.get(judge.verdict, judge.verdict)
    if judge.contradicted:
        words = "contradicted"
    parts = [f"judge: {words}"]
    if judge.support is not None and judge.verdict == "partly":
        parts.append(f"support {judge.support:.2f}")
    if judge.importance:
        parts.append(f"importance {judge.importance}")
    if kind == "turn" and judge.label:
        parts.append(judge.label)
    return " · ".join(parts)


def _case_link(run_id: str, case_id: str, queue: str | None = None, suffix: str = "") -> str:
    link = f"/runs/{quote(run_id, safe='')}/cases/{quote(case_id, safe='')}{suffix}"
    return link + (f"?queue={quote(queue, safe='')}" if queue else "")


def _without_gold_agents(value: Any) -> Any:
    """A stored conversation without its turns' gold labels (agent and tools)."""
    if not isinstance(value, dict) or not isinstance(value.get("messages"), list):
        return value
    messages = [
        {k: v for k, v in m.items() if k not in ("gold_agent", "gold_tools")} if isinstance(m, dict) else m
        for m in value["messages"]
    ]
    return {**value, "messages": messages}


def _blind_case(case: Case) -> Case:
    """The case as a blind reviewer sees it: without its gold facts' importance (the reviewer
    rates it), the agent's latency (the ``latency`` metric's value) and the gold labels of a
    conversation's turns (the reviewer says whether the right agent answered; the gold agent
    or tools beside those that answered would give the metrics' verdicts away)."""
    from clineval.conversations.cases import CONVERSATION_KEY

    update: dict[str, Any] = {}
    if case.gold_facts and any(g.importance is not None for g in case.gold_facts):
        update["gold_facts"] = [g.model_copy(update={"importance": None}) for g in case.gold_facts]
    if case.agent_run is not None and case.agent_run.latency_s is not None:
        update["agent_run"] = case.agent_run.model_copy(update={"latency_s": None})
    metadata = dict(case.metadata)
    if CONVERSATION_KEY in metadata:
        metadata[CONVERSATION_KEY] = _without_gold_agents(metadata[CONVERSATION_KEY])
    output = metadata.get("agent_output")
    if isinstance(output, dict) and CONVERSATION_KEY in output:
        metadata["agent_output"] = {
            **output,
            CONVERSATION_KEY: _without_gold_agents(output[CONVERSATION_KEY]),
        }
    if metadata != case.metadata:
        update["metadata"] = metadata
    return case.model_copy(update=update) if update else case


# --------------------------------------------------------------------------- the desk


class ReviewDesk:
    """The review mode of one viewer: its routes, its writable store, its caches."""

    def __init__(self, path: str | Path, data: ViewerData, settings: ReviewSettings, kit: PageKit):
        self.settings = settings
        self.data = data
        self.kit = kit
        # the review tables only, through ReviewStore (the pages read through data.store)
        self.store = RunStore(Path(path))
        self.reviews = ReviewStore(self.store)
        self._items: OrderedDict[tuple[str, str, str], tuple[tuple[Any, ...], CaseItems]] = OrderedDict()
        self._items_lock = threading.Lock()
        self._write_lock = threading.Lock()

    @property
    def reviewer(self) -> str:
        return self.settings.reviewer

    @property
    def blind(self) -> bool:
        return self.settings.blind

    def close(self) -> None:
        self.store.close()

    # reading -----------------------------------------------------------------------------

    def _version(self, run_id: str) -> tuple[Any, ...]:
        """Changes when the run's results change (a resumed run): the items' cache key."""
        return tuple(
            self.data.store.query(
                "SELECT COUNT(*), MAX(rowid), (SELECT status FROM runs WHERE id = ?1)"
                " FROM results WHERE run_id = ?1",
                (run_id,),
            )[0]
        )

    @staticmethod
    def _schema_key(queue: ReviewQueue | None) -> str:
        if queue is None or not queue.schema_:
            return ""
        return json.dumps(queue.schema_, sort_keys=True, default=str)

    def items(
        self,
        record: RunRecord,
        case_id: str,
        schema: ReviewSchema,
        queue: ReviewQueue | None,
        version: tuple[Any, ...] | None = None,
    ) -> CaseItems:
        """The case's reviewable items (kept until the run's results change)."""
        version = version if version is not None else self._version(record.id)
        key = (record.id, case_id, self._schema_key(queue))
        with self._items_lock:
            hit = self._items.get(key)
            if hit is not None and hit[0] == version:
                self._items.move_to_end(key)
                return hit[1]
        try:
            _, _, items = items_of(self.data.store, record, case_id, schema)
        except StoreError as exc:
            raise NotFound(str(exc)) from None
        with self._items_lock:
            self._items[key] = (version, items)
            while len(self._items) > _ITEMS_CACHED:
                self._items.popitem(last=False)
        return items

    def queue_of(self, ref: str, record: RunRecord | None = None) -> ReviewQueue:
        """A queue by id (or unique prefix); :class:`NotFound` otherwise."""
        try:
            queue = self.reviews.get_queue(ref)
        except StoreError as exc:
            raise NotFound(str(exc)) from None
        if record is not None and queue.run_id != record.id:
            raise NotFound(f"review queue {queue.id} is of run {queue.run_id}, not of run {record.id}")
        return queue

    def queue_state(self, record: RunRecord, queue: ReviewQueue) -> QueueState:
        """Every case's progress in the queue and who has which case open."""
        schema = review_schema(record, queue)
        version = self._version(record.id)
        verdicts: dict[str, list[ReviewRecord]] = {}
        for review in self.reviews.current(record.id, case_ids=queue.case_ids):
            verdicts.setdefault(review.case_id, []).append(review)
        progress: dict[str, CaseProgress] = {}
        for case_id in queue.case_ids:
            try:
                items = self.items(record, case_id, schema, queue, version)
            except NotFound:  # a case no longer in the run: not reviewable
                continue
            progress[case_id] = progress_of(items, schema, verdicts.get(case_id, []))
        return QueueState(queue=queue, progress=progress, claims=self.reviews.claims(queue.id))

    def counts(self, state: QueueState) -> QueueCounts:
        mine = state.cases_for(self.reviewer)
        done = set(state.done_by(self.reviewer))
        return QueueCounts(
            queue=state.queue,
            done=len(done),
            left=len([c for c in mine if c not in done]),
            fully_reviewed=state.fully_reviewed,
        )

    def case_progress(
        self, record: RunRecord, case_id: str, items: CaseItems, schema: ReviewSchema
    ) -> CaseProgress:
        mine = self.reviews.current(record.id, case_ids=[case_id], reviewer=self.reviewer)
        return progress_of(items, schema, mine)

    def answers(self, run_id: str, case_id: str) -> dict[tuple[str, str], ReviewRecord]:
        """The reviewer's current answers on the case, by (item, scale)."""
        return {
            (r.item, r.scale): r
            for r in self.reviews.current(run_id, case_ids=[case_id], reviewer=self.reviewer)
        }

    def _context(self, request: Request) -> tuple[RunRecord, str, ReviewQueue | None]:
        record = self.data.get_run(request.path_params["run_id"])
        case_id = request.path_params["case_id"]
        ref = request.query_params.get("queue", "").strip()
        queue = self.queue_of(ref, record) if ref else None
        if queue is not None and case_id not in queue.case_ids:
            raise NotFound(f"case {case_id!r} is not in review queue {queue.id}")
        return record, case_id, queue

    # pages ---------------------------------------------------------------------------------

    def start_page(self, request: Request) -> Response:
        rows: list[QueueCounts] = []
        for queue in self.reviews.queues():
            try:
                record = self.data.get_run(queue.run_id)
            except NotFound:
                rows.append(QueueCounts(queue, 0, 0, 0, missing_run=True))
                continue
            counts = self.counts(self.queue_state(record, queue))
            counts.run_name = record.name
            rows.append(counts)
        runs = self.data.runs()
        return self.kit.page(
            request,
            "review_start.html",
            queues=rows,
            chosen=self.settings.queue,
            plan_run=runs[0].id if runs else "RUN",
            store_arg=self.data.path,
        )

    def next_case(self, request: Request) -> Response:
        queue = self.queue_of(request.path_params["queue"])
        record = self.data.get_run(queue.run_id)
        state = self.queue_state(record, queue)
        # the first unfinished case with room, looked up and claimed in one transaction: two
        # reviewers asking at once are not given the same case
        candidates = state.candidates_for(self.reviewer)
        case_id = self.reviews.claim_next(queue.id, self.reviewer, candidates, queue.per_case)
        if case_id is None:
            return self.kit.page(request, "review_done.html", c=self.counts(state), run=record)
        return RedirectResponse(_case_link(record.id, case_id, queue.id), status_code=303)

    def _groups(
        self,
        items: CaseItems,
        schema: ReviewSchema,
        answers: Mapping[tuple[str, str], ReviewRecord],
        shown: bool,
    ) -> list[Group]:
        groups: list[Group] = []
        for title, members in itertools.groupby(items.items, key=lambda i: i.group):
            views = [
                ItemView(
                    item=i,
                    questions=[Question(i, s, answers.get((i.id, s.name))) for s in schema.scales_of(i.kind)],
                    judge=judge_words(i.judge, i.kind) if shown else None,
                    judge_verdict=i.judge.verdict if shown and i.judge else None,
                )
                for i in members
            ]
            first = views[0].item
            group = Group(title=title, kind=first.kind, items=views)
            if first.kind in ("fact", "sentence") and first.evidence_text.strip():
                group.against_title = first.against[:1].upper() + first.against[1:]
                group.against_text = first.evidence_text
            groups.append(group)
        return groups

    def _revealed_context(
        self, record: RunRecord, case: Case, results: Sequence[ResultRecord], items: CaseItems
    ) -> dict[str, Any]:
        lower = set(record.lower_is_better)
        return {
            "results": list(results),
            "evidence": [(r, self.kit.evidence(case, r, r.metric in lower)) for r in results],
            "judge": [
                (i.id, words, i.judge.verdict)
                for i in items.items
                if i.judge is not None and (words := judge_words(i.judge, i.kind))
            ],
        }

    def case_page(self, request: Request) -> Response:
        record, case_id, queue = self._context(request)
        view = self.data.case(record.id, case_id)
        schema = review_schema(record, queue)
        items = self.items(record, case_id, schema, queue)
        if queue is not None:
            self.reviews.claim(queue.id, case_id, self.reviewer)
        answers = self.answers(record.id, case_id)
        progress = progress_of(items, schema, answers.values())
        revealed = not self.blind or progress.complete(self.reviewer)
        counts: QueueCounts | None = None
        previous = following = None
        position = mine_total = 0
        if queue is not None:
            state = self.queue_state(record, queue)
            counts = self.counts(state)
            before, after = state.neighbours(self.reviewer, case_id)
            mine = state.cases_for(self.reviewer)
            position = mine.index(case_id) + 1 if case_id in mine else 0
            mine_total = len(mine)
            previous = _case_link(record.id, before, queue.id) if before else None
            following = (
                _case_link(record.id, after, queue.id)
                if after
                else "/review/" + quote(queue.id, safe="") + "/next"
            )
        else:
            previous = _case_link(record.id, view.previous_id) if view.previous_id else None
            following = _case_link(record.id, view.next_id) if view.next_id else None
        case = view.case if revealed else _blind_case(view.case)
        context: dict[str, Any] = {
            "v": view,
            "run": record,
            "case": case,
            "texts": self.kit.texts(case),
            "suite_case": self.kit.suite_case(record, case),
            "groups": self._groups(items, schema, answers, revealed),
            "progress": _progress_json(progress, self.reviewer),
            "queue": queue,
            "counts": counts,
            "position": position,
            "mine": mine_total,
            "previous": previous,
            "following": following,
            "revealed": revealed,
            "revealed_url": _case_link(record.id, case_id, queue.id if queue else None, "/revealed"),
        }
        if revealed:
            context.update(self._revealed_context(record, view.case, view.results, items))
        return self.kit.page(request, "review_case.html", **context)

    def revealed(self, request: Request) -> Response:
        record, case_id, queue = self._context(request)
        view = self.data.case(record.id, case_id)
        schema = review_schema(record, queue)
        items = self.items(record, case_id, schema, queue)
        if self.blind and not self.case_progress(record, case_id, items, schema).complete(self.reviewer):
            return Response(
                "403 Forbidden: the scores of this case are hidden until you have answered every "
                "required question of it (blind review)\n",
                status_code=403,
                media_type="text/plain",
            )
        html = self.kit.fragment(
            request,
            "_revealed.html",
            run=record,
            **self._revealed_context(record, view.case, view.results, items),
        )
        return HTMLResponse(html, headers={"Cache-Control": "no-store"})

    def hidden(self, request: Request) -> Response:
        """A page of many cases' scores, while the reviewer works blind."""
        return self.kit.page(request, "review_hidden.html", path=request.url.path)

    # writing -----------------------------------------------------------------------------

    async def _body(self, request: Request) -> dict[str, Any]:
        """The JSON body of a write, once the write is allowed (see :meth:`check`)."""
        self.check(request)
        body = await request.body()
        if len(body) > MAX_BODY_BYTES:
            raise Refused(413, f"the request is larger than {MAX_BODY_BYTES:,} bytes")
        try:
            data = json.loads(body.decode("utf-8"))
        except (UnicodeDecodeError, ValueError):
            raise Refused(400, "the body is not valid JSON") from None
        if not isinstance(data, dict):
            raise Refused(400, "the body must be a JSON object")
        return data

    def check(self, request: Request) -> None:
        """Refuse a write from another origin (403), without the session's token (403), or
        whose body is not JSON (415). The Host was checked by the app's middleware."""
        origin = request.headers.get("origin")
        if origin is not None:
            own = f"{request.url.scheme}://{request.headers.get('host', '')}"
            parts = urlsplit(origin)
            if origin == "null" or f"{parts.scheme}://{parts.netloc}" != own:
                raise Refused(403, f"a write from another origin ({origin}) is refused")
        given = request.headers.get(TOKEN_HEADER, "")
        if not secrets.compare_digest(given.encode("utf-8"), self.settings.token.encode("utf-8")):
            raise Refused(
                403,
                f"missing or wrong {TOKEN_HEADER}: reload the page (a restarted viewer has a new token)"
                if given
                else f"a write needs the session's token in {TOKEN_HEADER}",
            )
        kind = request.headers.get("content-type", "").split(";", 1)[0].strip().lower()
        if kind != "application/json":
            raise Refused(415, f"the body must be application/json (got {kind or 'no content type'})")

    async def _handle(
        self, request: Request, shape: type[BaseModel], action: Callable[[Any], dict[str, Any]]
    ) -> Response:
        """A write: its body read as ``shape``, ``action`` run on a worker thread (it writes to the
        store); a refused write answers its status and reason."""
        try:
            body = shape.model_validate(await self._body(request))
        except Refused as exc:
            return _refusal(exc)
        except ValidationError as exc:
            return _refusal(Refused(400, "; ".join(field_errors(exc))))
        try:
            answer = await run_in_threadpool(action, body)
        except Refused as exc:
            return _refusal(exc)
        return JSONResponse(answer)

    async def save(self, request: Request) -> Response:
        return await self._handle(request, VerdictIn, self._save)

    def _target(self, run: str, case_id: str, queue_ref: str | None) -> tuple[RunRecord, ReviewQueue | None]:
        try:
            record = self.data.get_run(run)
        except NotFound:
            raise Refused(400, f"no run {run!r} in this store") from None
        if record.id != run:
            raise Refused(400, f"run {run!r}: give the run's full id ({record.id})")
        queue = None
        if queue_ref:
            try:
                queue = self.reviews.get_queue(queue_ref)
            except StoreError as exc:
                raise Refused(400, str(exc)) from None
            if queue.id != queue_ref or queue.run_id != record.id:
                raise Refused(400, f"queue {queue_ref!r} is not a review queue of run {record.id}")
            if case_id not in queue.case_ids:
                raise Refused(400, f"case {case_id!r} is not in review queue {queue.id}")
        return record, queue

    def _case_of(
        self, body: VerdictIn | UndoIn
    ) -> tuple[RunRecord, ReviewQueue | None, ReviewSchema, CaseItems]:
        """The run, queue, schema and review items a write is about (refused when unknown)."""
        record, queue = self._target(body.run, body.case, body.queue)
        schema = review_schema(record, queue)
        try:
            items = self.items(record, body.case, schema, queue)
        except NotFound:
            raise Refused(400, f"run {record.id} has no case {body.case!r}") from None
        return record, queue, schema, items

    def _save(self, body: VerdictIn) -> dict[str, Any]:
        record, queue, schema, items = self._case_of(body)
        item = items.get(body.item)
        if item is None:
            known = ", ".join(i.id for i in items.items[:6]) + (" ..." if len(items.items) > 6 else "")
            raise Refused(400, f"case {body.case!r} has no review item {body.item!r} (its items: {known})")
        try:
            scale = schema.scale(item.kind, body.scale)
        except KeyError as exc:
            raise Refused(400, str(exc.args[0])) from None
        verdict: str | None = None
        comment: str | None = None
        retracted = False
        if scale.kind == "text":
            if body.verdict is not None:
                raise Refused(400, f"{scale.name} is free text: send 'comment', not 'verdict'")
            if body.comment is None:
                raise Refused(400, f"{scale.name}: send the text as 'comment' (an empty one clears it)")
            if len(body.comment) > MAX_COMMENT:
                raise Refused(400, f"a comment may hold at most {MAX_COMMENT:,} characters")
            comment = body.comment if body.comment.strip() else None
            retracted = comment is None
        else:
            if body.comment is not None:
                raise Refused(400, f"{scale.name} takes a 'verdict' (one of: {', '.join(scale.values)})")
            if body.verdict is None:
                raise Refused(400, f"{scale.name}: give a 'verdict' (one of: {', '.join(scale.values)})")
            if body.verdict not in scale.values:
                raise Refused(
                    400,
                    f"{body.verdict!r} is not an option of {scale.name} for a {item.kind} "
                    f"(expected one of: {', '.join(scale.values)})",
                )
            verdict = body.verdict
        with self._write_lock:
            before = self.case_progress(record, body.case, items, schema)
            review = ReviewRecord(
                run_id=record.id,
                case_id=body.case,
                item=item.id,
                scale=scale.name,
                reviewer=self.reviewer,
                verdict=verdict,
                comment=comment,
                retracted=retracted,
                queue_id=queue.id if queue else None,
                source="viewer",
                shown={
                    "blind": self.blind,
                    "revealed": not self.blind or before.complete(self.reviewer),
                    "text": item.text[:SHOWN_TEXT_CHARS],
                    "queue": queue.id if queue else None,
                },
            )
            saved = self._write(lambda: self.reviews.add(review))
            assert saved is not None
            return {
                "saved": saved.model_dump(mode="json"),
                **self._progress_answer(record, body.case, items, schema, queue),
            }

    def _write(self, action: Callable[[], ReviewRecord | None]) -> ReviewRecord | None:
        try:
            return action()
        except RunLockedError as exc:
            raise Refused(409, str(exc)) from None
        except StoreError as exc:
            raise Refused(500, f"not saved: {exc}") from None

    def _progress_answer(
        self,
        record: RunRecord,
        case_id: str,
        items: CaseItems,
        schema: ReviewSchema,
        queue: ReviewQueue | None,
    ) -> dict[str, Any]:
        progress = self.case_progress(record, case_id, items, schema)
        counts = self.counts(self.queue_state(record, queue)).as_json() if queue is not None else None
        return {"case": _progress_json(progress, self.reviewer), "queue": counts}

    async def undo(self, request: Request) -> Response:
        return await self._handle(request, UndoIn, self._undo)

    def _undo(self, body: UndoIn) -> dict[str, Any]:
        record, queue, schema, items = self._case_of(body)
        with self._write_lock:
            undone = self._write(lambda: self.reviews.undo(record.id, body.case, self.reviewer))
            changed: dict[str, Any] | None = None
            if undone is not None:
                now = self.answers(record.id, body.case).get((undone.item, undone.scale))
                changed = {
                    "item": undone.item,
                    "scale": undone.scale,
                    "verdict": now.verdict if now else None,
                    "comment": now.comment if now else None,
                }
            return {"undone": changed, **self._progress_answer(record, body.case, items, schema, queue)}

    # routes ------------------------------------------------------------------------------

    def routes(self) -> list[Route]:
        """The review routes, to be put before the viewer's own (they take some of its paths over)."""
        routes = [
            Route("/review", self.start_page, methods=["GET"]),
            Route("/review/{queue}/next", self.next_case, methods=["GET"]),
            Route("/api/review", self.save, methods=["POST"]),
            Route("/api/review/undo", self.undo, methods=["POST"]),
            Route("/runs/{run_id}/cases/{case_id:path}/revealed", self.revealed, methods=["GET"]),
            Route("/runs/{run_id}/cases/{case_id:path}", self.case_page, methods=["GET"]),
        ]
        if self.blind:
            routes += [
                Route(path, self.hidden, methods=["GET"])
                for path in (
                    "/compare",
                    "/compare/case",
                    "/runs/{run_id}/aggregates",
                    "/runs/{run_id}/agreement",
                )
            ]
        return routes


def _refusal(exc: Refused) -> JSONResponse:
    return JSONResponse({"error": exc.message}, status_code=exc.status)


__all__ = [
    "TOKEN_HEADER",
    "PageKit",
    "ReviewDesk",
    "ReviewSettings",
    "reviewer_name",
]
