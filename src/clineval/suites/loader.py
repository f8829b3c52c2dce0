"""Loading a suite file: the whole file is checked first, and every problem is reported at once.

Each problem names the file, the line and the field: an unknown evaluator in a case's
``metrics``, a case without evaluations, a ``class`` that does not import, an evaluator
name used twice, a constructor argument the class does not take, a case listed but not
defined (or defined but not listed), a field path that does not parse, and so on.

Only the root of a problem is reported: a value that uses an unset environment variable
is reported as such, and nothing that follows from its empty value is (the pipeline or
evaluator it names is not imported, cases are not checked against an evaluator name it
left unknown); an evaluator with bad arguments is not bound, so cases that use it do not
report it again. With ``instantiate=False`` (``clineval validate``) no evaluator is
created (their classes are imported and their signatures checked); the pipeline is
created (not started) and each case bound to its ``generate_responses``
(:mod:`clineval.suites.calling`), and context entries that are pydantic models are built
(validation is all building one does; other context classes are checked against their
signatures only, as building them could act), so that what would fail every case at run
time fails validation, with its line.
"""

from __future__ import annotations

import difflib
import inspect
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ValidationError

from clineval.errors import ConfigError
from clineval.importing import import_object
from clineval.judges.config import JudgeConfig, default_judge_config
from clineval.metrics.registry import MetricSpec, check_metric
from clineval.review.schema import ReviewSchema, load_schema
from clineval.suites.binding import BoundEvaluator, import_target
from clineval.suites.calling import ResponseCall, case_problems, create_pipeline, response_call
from clineval.suites.paths import parse_path
from clineval.suites.pipeline import PipelineEvaluator, SuiteCase
from clineval.suites.schema import (
    CASE_FIELDS,
    HEADER_KEYS,
    CaseSpec,
    EvaluatorSpec,
    PipelineSpec,
    SuiteHeader,
)
from clineval.suites.source import (
    Document,
    PathKey,
    Problem,
    SuiteError,
    field_name,
    load_document,
    mask,
    one_line,
)


@dataclass
class Suite:
    """A validated suite, ready to run."""

    id: str
    file: Path
    header: SuiteHeader
    cases: list[SuiteCase]
    evaluators: dict[str, BoundEvaluator]
    pipeline_class: type[PipelineEvaluator]
    document: Document
    judge: JudgeConfig
    secrets: set[str] = field(default_factory=set)
    review: ReviewSchema | None = None
    """The suite's review schema (``review:`` in its header), if it has one."""

    @property
    def base_dir(self) -> Path:
        return self.file.resolve().parent

    def case(self, case_id: str) -> SuiteCase:
        for case in self.cases:
            if case.id == case_id:
                return case
        raise KeyError(case_id)


def _valid(model: Any, value: Any) -> Any:
    """``value`` validated as ``model``, or ``None`` (its problems are reported elsewhere)."""
    if value is None:
        return None
    try:
        return model.model_validate(value)
    except ValidationError:
        return None


def _did_you_mean(name: str, options: list[str]) -> str:
    close = difflib.get_close_matches(name, options, n=1)
    return f"; did you mean {close[0]!r}?" if close else ""


class _Checker:
    def __init__(
        self,
        doc: Document,
        file: Path,
        env: Mapping[str, str],
        judge: JudgeConfig | None,
        instantiate: bool = True,
    ):
        self.doc = doc
        self.file = file
        self.env = env
        self.judge_override = judge
        self.instantiate = instantiate
        self.problems: list[Problem] = list(doc.problems)
        self.declared: set[str] | None = None
        self.raw_cases: list[str] | None = None
        # an evaluator name from an unset variable: cases cannot be checked against the names
        self.names_known = True
        self.call: ResponseCall | None = None
        """How the pipeline's generate_responses takes a case (None: it has none, or it cannot)."""

    def add(self, path: PathKey, message: str) -> None:
        self.problems.append(self.doc.problem(path, mask(message, self.doc.secrets)))

    def root_problems(self) -> list[Problem]:
        """The problems, without those that only follow from an unset environment variable
        (reported at its own value)."""
        unset = {field_name(p) for p in self.doc.unset}
        if not unset:
            return self.problems

        def follows(problem: Problem) -> bool:
            if problem.message.startswith("environment variable "):
                return False
            return any(problem.field == u or problem.field.startswith((u + ".", u + "[")) for u in unset)

        return [p for p in self.problems if not follows(p)]

    def run(self) -> Suite | None:
        data = self.doc.data
        if data is None and self.problems:
            return None
        if not isinstance(data, dict):
            self.add((), "a suite is a mapping: the evaluation id with its header, then one section per case")
            return None
        headers = [k for k, v in data.items() if isinstance(v, dict) and HEADER_KEYS & set(v)]
        if not headers:
            self.add(
                (),
                "no evaluation header: a top-level key holding description, pipeline, evaluators and cases",
            )
            return None
        for extra in headers[1:]:
            self.add((extra,), f"one evaluation per file; {headers[0]!r} is already one (split the file)")
        eval_id = headers[0]
        header = self._header(eval_id, data[eval_id])
        evaluators: dict[str, BoundEvaluator] = {}
        pipeline_class: type[PipelineEvaluator] | None = None
        judge = self.judge_override or (header.judge if header else None) or default_judge_config()
        if header is not None:
            evaluators = self._evaluators(eval_id, header, judge)
            pipeline_class = self._pipeline(eval_id, header)
        cases = self._cases(eval_id, data, header, evaluators, pipeline_class)
        review = self._review(eval_id, data[eval_id], header)
        if self.problems or header is None or pipeline_class is None:
            return None
        secrets = set(self.doc.secrets)
        for bound in evaluators.values():
            secrets |= bound.secrets
        suite = Suite(
            id=str(eval_id),
            file=self.file,
            header=header,
            cases=cases,
            evaluators=evaluators,
            pipeline_class=pipeline_class,
            document=self.doc,
            judge=judge,
            secrets=secrets,
            review=review,
        )
        if not self.instantiate:  # clineval validate: the pipeline is created, not started
            try:
                create_pipeline(suite, pipeline_class, header.pipeline.params)
            except ConfigError as exc:
                message = str(exc).removeprefix(f"{self.file}: ")
                self.add((eval_id, "pipeline", "class"), message)
                return None
        return suite

    def _review(self, eval_id: str, value: dict[str, Any], header: SuiteHeader | None) -> ReviewSchema | None:
        """The header's ``review:`` (inline, or a file beside the suite): a schema whose
        ``compare_with`` names evaluators of the suite."""
        raw = value.get("review")
        path: PathKey = (eval_id, "review")
        if raw is None or self.doc.tainted(path):
            return None
        if isinstance(raw, str):
            target = Path(raw.strip())
            if not target.is_absolute():
                target = self.file.resolve().parent / target
            try:
                schema = load_schema(target)
            except SuiteError as exc:
                self.add(path, "; ".join(str(p) for p in exc.problems))
                return None
            except ConfigError as exc:
                self.add(path, str(exc))
                return None
            inline = False
        elif isinstance(raw, dict):
            try:
                schema = ReviewSchema.model_validate(raw)
            except ValidationError as exc:
                self.problems += self.doc.validation_problems(exc, path)
                return None
            inline = True
        else:
            self.add(path, "expected a review schema (a mapping) or the name of a YAML file holding one")
            return None
        if header is not None and self.names_known:
            declared = self.declared or {spec.name for spec in header.evaluators}
            for i, scale in enumerate(schema.scales):
                for j, name in enumerate(scale.compare_with):
                    if name in declared:
                        continue
                    where: PathKey = (*path, "scales", i, "compare_with", j) if inline else path
                    self.add(
                        where,
                        f"scale {scale.name!r} is compared with {name!r}, which is not an evaluator of "
                        f"this suite{_did_you_mean(name, sorted(declared))} (its evaluators: "
                        f"{', '.join(sorted(declared))})",
                    )
        return schema

    def _header(self, eval_id: str, value: Any) -> SuiteHeader | None:
        """The header; when it has problems, the parts that are valid (so the rest is checked too)."""
        try:
            return SuiteHeader.model_validate(value)
        except ValidationError as exc:
            self.problems += self.doc.validation_problems(exc, (eval_id,))
        raw_evaluators = value.get("evaluators")
        raw_cases = value.get("cases")
        if isinstance(raw_cases, list):
            self.raw_cases = [str(c) for c in raw_cases if isinstance(c, str | int)]
        self.declared = {
            str(e["name"])
            for e in (raw_evaluators or [])
            if isinstance(e, dict) and isinstance(e.get("name"), str)
        }
        if isinstance(raw_evaluators, list) and any(
            self.doc.tainted((eval_id, "evaluators", i, "name")) for i in range(len(raw_evaluators))
        ):
            self.names_known = False
        pipeline = _valid(PipelineSpec, value.get("pipeline"))
        if pipeline is None:
            return None
        evaluators = [
            spec
            for spec in (
                _valid(EvaluatorSpec, e) for e in (raw_evaluators if isinstance(raw_evaluators, list) else [])
            )
            if spec is not None
        ]
        cases = list(self.raw_cases or [])
        return SuiteHeader.model_construct(
            description=str(value.get("description") or ""),
            disclaimer=None,
            pipeline=pipeline,
            evaluators=evaluators,
            cases=cases,
            judge=_valid(JudgeConfig, value.get("judge")),
            tags={},
            table=None,
            review=None,
        )

    def _evaluators(self, eval_id: str, header: SuiteHeader, judge: JudgeConfig) -> dict[str, BoundEvaluator]:
        bound: dict[str, BoundEvaluator] = {}
        first_at: dict[str, int] = {}
        for i, spec in enumerate(header.evaluators):
            path: PathKey = (eval_id, "evaluators", i)
            if spec.name in first_at:
                where = self.doc.where((eval_id, "evaluators", first_at[spec.name], "name"))
                self.add(
                    (*path, "name"),
                    f"evaluator name {spec.name!r} is used twice "
                    f"(first at line {where.line if where else '?'})",
                )
                continue
            first_at[spec.name] = i
            if self.doc.tainted(path):
                continue  # an unset environment variable, reported where it is used
            source = "class" if spec.class_ is not None else "metric"
            try:
                item = BoundEvaluator(spec, base_dir=self.file.resolve().parent, judge=judge, env=self.env)
            except ConfigError as exc:
                self.add((*path, source), str(exc))
                continue
            problems = item.constructor_problems(spec.args)
            for message in problems:
                self.add((*path, "args"), message)
            typed = item.argument_problems(spec.args)
            for key, message in typed:
                self.add((*path, "args", key), message)
            if problems or typed:
                continue  # not bound: the cases that use it do not report it again
            try:
                item.check_call()
                if self.instantiate:
                    item.instance()
                elif spec.metric is not None:
                    metric = MetricSpec.model_validate(spec.metric)
                    metric = metric.model_copy(update={"args": {**metric.args, **spec.args}})
                    found = check_metric(metric, base_dir=self.file.resolve().parent)
                    if found:
                        raise ConfigError("; ".join(message for _, message in found))
            except ConfigError as exc:
                self.add((*path, "args" if spec.args else source), str(exc))
                continue
            bound[spec.name] = item
        return bound

    def _pipeline(self, eval_id: str, header: SuiteHeader) -> type[PipelineEvaluator] | None:
        path: PathKey = (eval_id, "pipeline", "class")
        if self.doc.tainted(path):
            return None  # an unset environment variable, reported where it is used
        try:
            cls = import_object(
                import_target(header.pipeline.class_),
                base_dir=self.file.resolve().parent,
                what="pipeline class",
            )
        except ConfigError as exc:
            self.add(path, str(exc))
            return None
        if not (inspect.isclass(cls) and issubclass(cls, PipelineEvaluator)):
            self.add(
                path,
                f"{header.pipeline.class_} is not a PipelineEvaluator subclass "
                "(subclass clineval.suites.SuitePipeline and write generate_responses)",
            )
            return None
        if inspect.isabstract(cls):
            missing = ", ".join(sorted(getattr(cls, "__abstractmethods__", ())))
            self.add(
                path, f"{header.pipeline.class_} does not implement {missing} (or subclass SuitePipeline)"
            )
            return None
        if cls.params_model is not None:
            try:
                cls.params_model.model_validate(header.pipeline.params)
            except ValidationError as exc:
                self.problems += self.doc.validation_problems(exc, (eval_id, "pipeline"))
        if cls.generates_responses():
            try:
                self.call = response_call(cls)
            except ConfigError as exc:
                self.add(path, str(exc))
        return cls

    def _cases(
        self,
        eval_id: str,
        data: dict[str, Any],
        header: SuiteHeader | None,
        evaluators: dict[str, BoundEvaluator],
        pipeline_class: type[PipelineEvaluator] | None,
    ) -> list[SuiteCase]:
        listed = header.cases if header else (self.raw_cases or [])
        seen: set[str] = set()
        for i, case_id in enumerate(listed):
            if case_id in seen:
                self.add((eval_id, "cases", i), f"case {case_id!r} is listed twice")
            seen.add(case_id)
            if case_id not in data:
                self.add(
                    (eval_id, "cases", i),
                    f"case {case_id!r} has no section in this file"
                    + _did_you_mean(case_id, [k for k in data if k != eval_id]),
                )
        for key in data:
            if key != eval_id and key not in seen:
                self.add(
                    (key,), f"{key!r} is not listed under {eval_id}.cases{_did_you_mean(key, list(seen))}"
                )
        cases: list[SuiteCase] = []
        names = list(evaluators) if header else []
        declared = self.declared or ({spec.name for spec in header.evaluators} if header else set())
        for case_id in dict.fromkeys(listed):
            if case_id not in data:
                continue
            built = self._case(case_id, data[case_id], header, names, declared, evaluators, pipeline_class)
            if built is not None:
                cases.append(built)
        return cases

    def _case(
        self,
        case_id: str,
        value: Any,
        header: SuiteHeader | None,
        names: list[str],
        declared: set[str],
        evaluators: dict[str, BoundEvaluator],
        pipeline_class: type[PipelineEvaluator] | None,
    ) -> SuiteCase | None:
        base: PathKey = (case_id,)
        if not isinstance(value, dict):
            self.add(base, "a case section is a mapping with metrics and evaluations")
            return None
        missing_evaluations = "evaluations" not in value
        if missing_evaluations:
            self.add(base, "the case has no evaluations: list at least one {query, ground_truth}")
        try:
            spec = CaseSpec.model_validate(value)
        except ValidationError as exc:
            found = self.doc.validation_problems(exc, base)
            if missing_evaluations:
                found = [p for p in found if p.field != f"{case_id}.evaluations"]
            self.problems += found
            return None
        ok = True
        metrics_seen: set[str] = set()
        for j, name in enumerate(spec.metrics):
            if header is not None and self.names_known and name not in declared:
                self.add(
                    (*base, "metrics", j),
                    f"unknown evaluator {name!r}{_did_you_mean(name, sorted(declared))}",
                )
                ok = False
            if name in metrics_seen:
                self.add((*base, "metrics", j), f"evaluator {name!r} is listed twice")
            metrics_seen.add(name)
        settings: dict[str, dict[str, Any]] = {}
        for key, setting in spec.settings.items():
            path = (*base, key)
            if header is not None and self.names_known and key not in declared:
                self.add(
                    path,
                    "unknown field: neither a case field ("
                    + ", ".join(sorted(CASE_FIELDS))
                    + ") nor an evaluator name"
                    + _did_you_mean(key, sorted(declared | CASE_FIELDS)),
                )
                ok = False
                continue
            if key not in spec.metrics:
                self.add(
                    path, f"settings for evaluator {key!r}, which this case does not run (add it to metrics)"
                )
                ok = False
                continue
            if not isinstance(setting, dict):
                self.add(path, "per-case evaluator settings are a mapping of constructor arguments")
                ok = False
                continue
            bound = evaluators.get(key)
            if bound is not None:
                merged = {**bound.spec.args, **setting}
                for message in bound.constructor_problems(merged):
                    self.add(path, message)
                    ok = False
                for arg, message in bound.argument_problems(setting):
                    self.add((*path, arg), message)
                    ok = False
            settings[key] = setting
        generates = pipeline_class.generates_responses() if pipeline_class is not None else True
        used: set[str] = set()
        for i, item in enumerate(spec.evaluations):
            path = (*base, "evaluations", i)
            try:
                parse_path(item.query)
            except ValueError as exc:
                self.add((*path, "query"), str(exc))
                ok = False
            for j, name in enumerate(item.metrics or []):
                if name not in spec.metrics:
                    self.add(
                        (*path, "metrics", j),
                        f"{name!r} is not in this case's metrics ({', '.join(spec.metrics)})",
                    )
                    ok = False
            used |= set(item.metrics or spec.metrics)
            given = "response" in value["evaluations"][i]
            if pipeline_class is not None and generates and given:
                self.add(
                    (*path, "response"),
                    f"the pipeline {pipeline_class.__name__} generates the responses; remove 'response' here "
                    "(or use a pipeline without generate_responses)",
                )
                ok = False
            if pipeline_class is not None and not generates and not given:
                self.add(
                    path,
                    f"no response: the pipeline {pipeline_class.__name__} has no generate_responses, so each "
                    "evaluation needs a 'response'",
                )
                ok = False
        for j, name in enumerate(spec.metrics):
            bound = evaluators.get(name)
            if bound is not None and bound.per_item and name not in used:
                self.add((*base, "metrics", j), f"no evaluation of this case selects evaluator {name!r}")
                ok = False
        context = self._context(spec.context, (*base, "context"))
        items = []
        for i, item in enumerate(spec.evaluations):
            if isinstance(item.context, dict):
                built = self._context(item.context, (*base, "evaluations", i, "context"))
                items.append(item.model_copy(update={"context": built}))
            else:
                items.append(item)
        if not ok:
            return None
        case = SuiteCase(
            id=str(case_id),
            description=spec.description,
            input=spec.input,
            metadata=dict(spec.metadata),
            context=context,
            evaluations=items,
            metrics=list(spec.metrics),
            settings=settings,
            conversation=spec.conversation,
            scores=spec.scores,
        )
        if self.call is not None:
            for message in case_problems(self.call, case):
                self.add(base, f"case {case_id!r}: {message}")
        return case

    def _context(self, value: Any, path: PathKey) -> Any:
        """A context mapping with its ``module:Class`` entries built (AutoAuth suite schema)."""
        if not isinstance(value, dict):
            return value
        built: dict[str, Any] = {}
        for key, entry in value.items():
            if ":" in key and not key.startswith(("http:", "https:")):
                try:
                    cls = import_object(key, base_dir=self.file.resolve().parent, what="context class")
                except ConfigError as exc:
                    self.add((*path, key), str(exc))
                    continue
                problem = _binding_problem(cls, entry)
                if problem:
                    self.add((*path, key), f"{key} cannot be built from this entry: {problem}")
                    continue
                if not self.instantiate and not _is_data_model(cls):
                    built[key] = entry  # validate builds data models only: any other class may act
                    continue
                try:  # a pydantic model is built by validate too: its validation is the check
                    built[key] = cls(**entry) if isinstance(entry, dict) else cls(entry)
                except ValidationError as exc:
                    located = isinstance(entry, dict)
                    for found in self.doc.validation_problems(exc, (*path, key)) if located else []:
                        self.problems.append(
                            Problem(
                                found.location,
                                found.field,
                                mask(f"{key} cannot be built: {found.message}", self.doc.secrets),
                            )
                        )
                    if not located:
                        self.add((*path, key), f"{key} cannot be built from this entry: {one_line(exc)}")
                except Exception as exc:
                    self.add((*path, key), f"{key} cannot be built from this entry: {one_line(exc)}")
                continue
            built[key] = entry
        return built


def _is_data_model(cls: Any) -> bool:
    """A pydantic model: building one validates data and does nothing else (the context
    entries the AutoAuth framework uses), so ``clineval validate`` builds it."""
    return inspect.isclass(cls) and issubclass(cls, BaseModel)


def _binding_problem(cls: Any, entry: Any) -> str | None:
    """Why ``cls(**entry)`` (or ``cls(entry)``) cannot be called, from its signature alone."""
    try:
        signature = inspect.signature(cls)
    except (TypeError, ValueError):
        return None
    try:
        if isinstance(entry, dict):
            signature.bind(**{str(k): v for k, v in entry.items()})
        else:
            signature.bind(entry)
    except TypeError as exc:
        return str(exc)
    return None


def load_suite(
    path: str | Path,
    *,
    env: Mapping[str, str] | None = None,
    judge: JudgeConfig | None = None,
    instantiate: bool = True,
) -> Suite:
    """Read and check a suite file; a :class:`SuiteError` lists every problem found.

    With ``instantiate=False`` nothing is created (``clineval validate``): classes are
    imported and checked against their signatures, and the suite's evaluators are built
    only when it runs.
    """
    file = Path(path)
    environment = os.environ if env is None else env
    doc = load_document(file, env=environment)
    checker = _Checker(doc, file, environment, judge, instantiate)
    suite = checker.run()
    problems = checker.root_problems()
    if suite is None or problems:
        if not problems:
            problems.append(Problem(None, "", "the suite could not be read"))
        raise SuiteError(problems)
    return suite
