"""CI gates on ``clineval run``: ``--fail-under``, ``--fail-over``, ``--no-regression-vs``,
``--fail-on-case-regression`` (with a baseline), ``--junit``.

A command that ends with an :class:`~clineval.results.result.EvalResult` takes the gates
in three steps::

    @cli.command()
    @gate_options                      # adds the options; the command gets `gates: GateOptions`
    @friendly
    def run(..., gates: GateOptions) -> None:
        gates.check_before_run(store, metrics=...)   # typos fail here, before any work
        result = api.evaluate(...)
        _show(result, ...)
        apply_gates(result, gates)     # prints the outcomes, writes --junit, exits 1 if a gate failed

Option syntax (``METRIC=VALUE`` with a number) is checked while click parses the command
line; the baseline run of ``--no-regression-vs`` is looked up, and the gates' metric names
checked against the metrics the run will have, by :meth:`GateOptions.check_before_run`.
A user error exits with status 2; a failed gate with status 1.

Gates judge complete runs only. :func:`apply_gates` refuses (exit 2, :class:`IncompleteRunError`)
a run that is not ``completed``, is still being run by a live process, or lacks some of the
(case, metric) results it should have (counted in the store, so a ``completed`` record with
results missing is caught too); with ``--junit`` the report is still written, with a failed
``complete run`` gate. A ``--no-regression-vs`` baseline that is not complete is refused
before the run starts. :func:`warn_if_incomplete` is the loud flag ``show`` and ``compare``
print instead when no gate is asked for.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import wraps
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click
from rich.console import Console
from rich.text import Text

from clineval.cli.common import err, out
from clineval.errors import ClinevalError, ConfigError, IncompleteRunError

if TYPE_CHECKING:
    from clineval.compare.case_gate import CaseGate
    from clineval.compare.gates import Bound, GateResult, ThresholdGate
    from clineval.config import RunConfig
    from clineval.results.result import EvalResult
    from clineval.store.sqlite import RunCompleteness

F = TypeVar("F", bound=Callable[..., Any])

#: Exit status of a command whose gate failed (2 stays for user errors).
GATE_FAILED = 1


@dataclass
class GateOptions:
    """The gate options of one command invocation."""

    thresholds: list[ThresholdGate] = field(default_factory=list)
    baseline: str | None = None
    """``--no-regression-vs`` as given (an id, a prefix, ``latest``, ``latest~N``)."""
    alpha: float = 0.05
    junit: str | None = None
    baseline_id: str | None = None
    """The baseline's id, resolved by :meth:`check_before_run` (``latest``: the latest before the run)."""
    store: str | None = None
    """The store the baseline was found in."""
    case_gates: list[CaseGate] = field(default_factory=list)
    """``--fail-on-case-regression``: per-case gates against the ``--no-regression-vs`` baseline."""

    @property
    def active(self) -> bool:
        """True when there is anything to do after the run."""
        return bool(self.thresholds or self.baseline or self.junit or self.case_gates)

    def check_before_run(
        self, store: str | Path, *, metrics: Sequence[str] | None = None, resume: str | None = None
    ) -> None:
        """Fail now, before a run starts, on what would fail after it.

        Resolves the baseline run in ``store``; checks the gates' metric names against
        ``metrics`` (the names the run will have, when known) or, with ``resume``, against
        the metrics of the run being resumed.
        """
        from clineval.compare.gates import check_metric_names
        from clineval.store.sqlite import RunStore

        if self.junit and Path(self.junit).is_dir():
            raise ConfigError(f"--junit {self.junit}: is a folder; give a file name, e.g. reports/junit.xml")
        if self.case_gates and not self.baseline:
            raise ConfigError(
                "--fail-on-case-regression compares with a baseline: add --no-regression-vs RUN"
            )
        if self.baseline or (resume and self.thresholds):
            if not Path(store).exists():
                what = f"--no-regression-vs {self.baseline}" if self.baseline else f"--resume {resume}"
                raise ConfigError(f"{what}: no run store at {store} (pass --store)")
            with RunStore(store, readonly=True) as run_store:
                if self.baseline:
                    try:
                        self.baseline_id = run_store.get_run(self.baseline).id
                    except ClinevalError as exc:
                        raise ConfigError(f"--no-regression-vs {self.baseline}: {exc}") from None
                    self.store = str(store)
                    baseline = run_store.completeness(self.baseline_id)
                    if not baseline.complete:
                        raise IncompleteRunError(
                            f"--no-regression-vs {self.baseline}: {incomplete_message(baseline, store)}"
                        )
                if resume and self.thresholds:
                    metrics = run_store.get_run(resume).metrics
        if metrics is not None:
            check_metric_names(self.thresholds, metrics)
            for gate in self.case_gates:
                if gate.metric is not None and gate.metric not in metrics:
                    raise ConfigError(
                        f"--fail-on-case-regression {gate.metric}: the run has no metric {gate.metric!r}; "
                        f"the run's metrics: {', '.join(metrics) or 'none'}"
                    )


def expected_metrics(config: RunConfig) -> list[str] | None:
    """The metric names a run of ``config`` will have, or ``None`` when it has no metrics yet."""
    from clineval.api import AGENT_METRICS

    names = [spec.result_name for spec in config.metrics]
    if not names:
        return None
    if config.agent is not None:
        names += [name for name in AGENT_METRICS if name not in names]
    return names


def _threshold_callback(bound: Bound) -> Callable[[click.Context, click.Parameter, tuple[str, ...]], Any]:
    def parse(ctx: click.Context, param: click.Parameter, values: tuple[str, ...]) -> list[ThresholdGate]:
        from clineval.compare.gates import parse_threshold

        try:
            return [parse_threshold(value, bound) for value in values]
        except ConfigError as exc:
            message = str(exc).removeprefix(f"{param.opts[0] if param.opts else ''} ")
            raise click.BadParameter(message, ctx=ctx, param=param) from None

    return parse


def _case_gate_callback(
    ctx: click.Context, param: click.Parameter, values: tuple[str, ...]
) -> list[CaseGate]:
    from clineval.compare.case_gate import OPTION, parse_case_gate

    try:
        return [parse_case_gate(value) for value in values]
    except ConfigError as exc:
        raise click.BadParameter(str(exc).removeprefix(f"{OPTION} "), ctx=ctx, param=param) from None


def gate_options(fn: F) -> F:
    """Add the gate options to a command; it receives them as one ``gates: GateOptions`` argument."""

    @wraps(fn)
    def wrapper(
        *args: Any,
        fail_under: list[ThresholdGate],
        fail_over: list[ThresholdGate],
        no_regression_vs: str | None,
        fail_on_case_regression: list[CaseGate],
        alpha: float,
        junit: str | None,
        **kwargs: Any,
    ) -> Any:
        gates = GateOptions(
            thresholds=[*fail_under, *fail_over],
            baseline=no_regression_vs,
            alpha=alpha,
            junit=junit,
            case_gates=list(fail_on_case_regression),
        )
        return fn(*args, gates=gates, **kwargs)

    options = [
        click.option(
            "--fail-under",
            multiple=True,
            metavar="METRIC=VALUE",
            callback=_threshold_callback("min"),
            help="Exit 1 unless the mean of METRIC (or metric.sub) over scored cases is ≥ VALUE "
            "(repeatable).",
        ),
        click.option(
            "--fail-over",
            multiple=True,
            metavar="METRIC=VALUE",
            callback=_threshold_callback("max"),
            help="Exit 1 unless the mean of METRIC is ≤ VALUE, for lower-is-better metrics such as latency "
            "(repeatable).",
        ),
        click.option(
            "--no-regression-vs",
            metavar="RUN",
            help="Exit 1 if any metric regressed against this stored run (id, prefix, 'latest', resolved "
            "before the run starts).",
        ),
        click.option(
            "--fail-on-case-regression",
            multiple=True,
            is_flag=False,
            flag_value="",
            metavar="[METRIC[=VALUE]]",
            callback=_case_gate_callback,
            help="With --no-regression-vs: exit 1 if any case right in the baseline (pass, 1 of a 0/1 "
            "metric, or ≥ VALUE) is wrong or unscored now; lists the cases (repeatable).",
        ),
        click.option(
            "--alpha",
            type=click.FloatRange(0, 1, min_open=True, max_open=True),
            default=0.05,
            show_default=True,
            help="Significance level of --no-regression-vs (Holm-adjusted across metrics).",
        ),
        click.option(
            "--junit",
            type=click.Path(dir_okay=False),
            metavar="FILE",
            help="Write the per-case results and the gates as JUnit XML.",
        ),
    ]
    decorated: Any = wrapper
    for option in reversed(options):
        decorated = option(decorated)
    return decorated  # type: ignore[no-any-return]


def print_outcomes(outcomes: Sequence[GateResult], console: Console) -> None:
    """Each gate's outcome, one line each: ``pass``/``FAIL``, its name and message."""
    console.print(Text("Gates", style="bold"))
    for outcome in outcomes:
        mark = ("pass", "bold green") if outcome.passed else ("FAIL", "bold red")
        console.print(Text.assemble("  ", mark, f"  {outcome.name}: ", outcome.message), highlight=False)


def _regression_outcomes(result: EvalResult, gates: GateOptions, console: Console) -> list[GateResult]:
    """The ``--no-regression-vs`` gate, then each ``--fail-on-case-regression`` gate."""
    from clineval import api
    from clineval.compare.case_gate import check_case_regressions
    from clineval.compare.comparison import compare_runs
    from clineval.compare.gates import check_no_regression
    from clineval.compare.render import print_comparison

    assert gates.baseline is not None
    if gates.baseline_id is None:  # check_before_run was not called: resolve it now
        gates.check_before_run(gates.store or result.store_path or ".clineval/clineval.db")
    assert gates.baseline_id is not None
    # read from the store a metric at a time (bounded memory at any number of cases)
    baseline = api.load_run(gates.baseline_id, store=gates.store or result.store_path or "", lazy=True)
    comparison = compare_runs(baseline, result, alpha=gates.alpha)
    console.print(Text(f"Compared with baseline run {baseline.run_id}", style="bold"))
    print_comparison(comparison, console)
    outcomes = [check_no_regression(comparison)]
    return outcomes + [check_case_regressions(baseline, result, gate) for gate in gates.case_gates]


def apply_gates(
    result: EvalResult,
    gates: GateOptions,
    *,
    console: Console | None = None,
    exit_on_failure: bool = True,
) -> list[GateResult]:
    """Check the gates on a finished run, print each outcome, write ``--junit``.

    Exits with status 1 (:data:`GATE_FAILED`) when a gate failed and ``exit_on_failure``;
    returns the outcomes otherwise. A gate naming a metric the run does not have is a
    :class:`ConfigError` (status 2 under the CLI's ``friendly`` wrapper).
    """
    from clineval.compare.gates import evaluate_gates
    from clineval.compare.junit import write_junit

    if not gates.active:
        return []
    console = console or out
    completeness = run_completeness(result.store_path, result.run_id)
    if completeness is not None and not completeness.complete:
        message = incomplete_message(completeness, result.store_path or "")
        if gates.junit:
            from clineval.compare.gates import GateResult

            write_junit(gates.junit, result, [GateResult(name="complete run", passed=False, message=message)])
            err.print(f"wrote {gates.junit}", highlight=False)
        raise IncompleteRunError(message)
    outcomes = evaluate_gates(result, gates.thresholds)
    if gates.baseline:
        outcomes += _regression_outcomes(result, gates, console)
    if outcomes:
        print_outcomes(outcomes, console)
    if gates.junit:
        write_junit(gates.junit, result, outcomes)
        err.print(f"wrote {gates.junit}", highlight=False)
    failed = [o for o in outcomes if not o.passed]
    if failed:
        console.print(Text(f"{len(failed)} of {len(outcomes)} gate(s) failed", style="bold red"))
        if exit_on_failure:
            sys.exit(GATE_FAILED)
    return outcomes


# --------------------------------------------------------------------------- incomplete runs


def run_completeness(store: str | Path | None, run_id: str) -> RunCompleteness | None:
    """The stored run's completeness (``None`` when there is no store file to ask)."""
    from clineval.store.sqlite import RunStore

    if not store or str(store) == ":memory:" or not Path(store).exists():
        return None
    with RunStore(store, readonly=True) as run_store:
        return run_store.completeness(run_id)


def resume_command(store: str | Path, run_id: str) -> str:
    from clineval.store.sqlite import DEFAULT_STORE

    where = "" if str(store).endswith(DEFAULT_STORE) else f" --store {store}"
    return f"clineval run --resume {run_id}{where}"


def _next_step(completeness: RunCompleteness, store: str | Path) -> str:
    if completeness.holder is not None:
        return "wait for it to finish, then check again"
    return f"resume with: {resume_command(store, completeness.run_id)}"


def incomplete_message(completeness: RunCompleteness, store: str | Path) -> str:
    """Why a gate refuses the run, and what to do: ``run X is interrupted: ...; gates need ...``."""
    return f"{completeness.describe()}; gates need a completed run; {_next_step(completeness, store)}"


def incomplete_warning(store: str | Path | None, run_id: str) -> str | None:
    """The warning for a run that is not complete (``None`` for a complete one)."""
    completeness = run_completeness(store, run_id)
    if completeness is None or completeness.complete:
        return None
    return (
        f"{completeness.describe()}; the figures cover only the results it has; "
        f"{_next_step(completeness, store or '')}"
    )


def warn_if_incomplete(store: str | Path | None, run_id: str, console: Console | None = None) -> str | None:
    """Print a loud warning on standard error when the run is not complete; return its text."""
    text = incomplete_warning(store, run_id)
    if text is not None:
        (console or err).print(
            Text.assemble(("warning: ", "bold yellow"), text), highlight=False, soft_wrap=True
        )
    return text
