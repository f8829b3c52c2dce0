"""Repeated trials of the radiology benchmark (``--trials N``) and the one definition of what
its tables average (completion over the solvable conditions, UAR/UGR over the insufficient
ones) shared by ``radbench summary`` and ``radbench compare``.

Hand-worked rows: episode E1 (r1/012/baseline) has three trials with completion 1, 0, 1 and
OTS 1.0, 0.5, - ; episode E2 (r2/012/baseline) completion 0, 0, 1 and OTS 0.5, 0.5, 0.5.
"""

from __future__ import annotations

import json
import math
import sqlite3
import statistics
from pathlib import Path
from typing import Any

import pytest
from tests.clirun import clineval

from clineval import api
from clineval.environments.radbench.runner import BenchSettings, metric_rows, run_bench
from clineval.environments.radbench.stats import (
    Row,
    compare_cores,
    compare_runs,
    episode_means,
    reporting_rows,
    summarise,
    trial_spread,
)


def _trial(record: str, trial: int | None, completion: float, ots: float | None) -> Row:
    meta: dict[str, object] = {"record_id": record, "task": "012", "condition": "baseline"}
    if trial is not None:
        meta["trial"] = str(trial)  # as metric_rows gives it: metadata as text
    return meta, {"completion": completion, "ots": ots}


TRIALS: list[Row] = [
    _trial("r1", 1, 1.0, 1.0),
    _trial("r1", 2, 0.0, 0.5),
    _trial("r1", 3, 1.0, None),
    _trial("r2", 1, 0.0, 0.5),
    _trial("r2", 2, 0.0, 0.5),
    _trial("r2", 3, 1.0, 0.5),
]


def test_episode_means_hand_worked() -> None:
    means = episode_means(TRIALS)
    assert [(m["record_id"], m["trials"], "trial" in m) for m, _ in means] == [
        ("r1", 3, False),
        ("r2", 3, False),
    ]
    # E1: completion (1 + 0 + 1) / 3, OTS (1.0 + 0.5) / 2 (the third trial: not applicable)
    assert means[0][1] == {"completion": pytest.approx(2 / 3), "ots": pytest.approx(0.75)}
    assert means[1][1] == {"completion": pytest.approx(1 / 3), "ots": pytest.approx(0.5)}
    # rows without a trial (a one-trial run) are kept as they are
    single = [_trial("r1", None, 1.0, 1.0)]
    assert episode_means(single) == single


def test_summary_over_trials_hand_worked() -> None:
    rows = {r.metric: r for r in summarise(TRIALS, by=("condition",), metrics=["completion", "ots"])}
    done, ots = rows["completion"], rows["ots"]
    # two episodes, each the mean of its trials: (2/3 + 1/3) / 2
    assert (done.n, done.n_episodes, done.trials) == (2, 2, 3)
    assert done.mean == pytest.approx(0.5)
    # trial means 0.5, 0, 1: sample SD 0.5; each episode's trials (1, 0, 1) and (0, 0, 1): SD sqrt(1/3)
    assert done.trial_sd == pytest.approx(0.5)
    assert done.episode_sd == pytest.approx(math.sqrt(1 / 3))
    # OTS: (0.75 + 0.5) / 2; trial means 0.75, 0.5, 0.5 -> SD sqrt(1/48); E1 (1, 0.5) SD sqrt(1/8), E2 0
    assert ots.mean == pytest.approx(0.625)
    assert ots.trial_sd == pytest.approx(math.sqrt(1 / 48))
    assert ots.episode_sd == pytest.approx(math.sqrt(1 / 8) / 2)
    # one trial: no spread
    once = summarise([_trial("r1", None, 1.0, 1.0)], metrics=["completion"])[0]
    assert (once.trials, once.trial_sd, once.episode_sd) == (1, None, None)
    assert trial_spread(TRIALS, "completion").trials == 3


def test_paired_tests_run_on_episode_means() -> None:
    # B ran once and completed both: per record A 2/3 and 1/3 against B 1 and 1 -> two pairs
    # (not six), differences 1/3 and 2/3, both wins; exact two-sided p with 2 pairs = 2 / 2^2
    b = [_trial("r1", None, 1.0, 1.0), _trial("r2", None, 1.0, 1.0)]
    c = compare_cores(TRIALS, b, "completion")
    assert (c.n_records, c.wins, c.ties, c.losses) == (2, 2, 0, 0)
    assert c.mean_a == pytest.approx(0.5) and c.mean_b == 1.0
    assert c.mean_difference == pytest.approx(0.5)
    assert c.p_value == pytest.approx(0.5)
    assert [(r.n_a, r.n_b) for r in c.records] == [(1, 1), (1, 1)]  # one episode mean per record
    assert (c.trials_a, c.trials_b, c.sd_b) == (3, 1, None)
    assert c.sd_a == pytest.approx(0.5)  # trial means 0.5, 0, 1
    # several runs side by side pair episodes (case ids), each the mean of its trials
    both = compare_runs([("A", reporting_rows(TRIALS)), ("B", reporting_rows(b))], metrics=["completion"])
    assert both.common_cases == 2
    test = both.families[0].tests[0]
    assert (test.n_pairs, test.wins, test.mean_difference) == (2, 2, pytest.approx(0.5))
    cell = both.families[0].rows[0].runs[0]
    assert (cell.n, cell.trials, cell.trial_sd) == (2, 3, pytest.approx(0.5))


# through the command line ----------------------------------------------------------------

GRID = ("-n", "1", "--task", "012", "--condition", "baseline", "--condition", "insufficient_1")


SETTINGS: dict[str, Any] = {"n_records": 1, "tasks": ["012"], "conditions": ["baseline", "insufficient_1"]}


@pytest.fixture(scope="module")
def stored(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """The random core (seeded) once, and in three trials through the command line, on one
    record, one task, a solvable and an insufficient condition; the oracle once on one
    record, every task and condition (run_bench is what 'clineval radbench run' calls)."""
    folder = tmp_path_factory.mktemp("radbench-trials")
    store = str(folder / "runs.db")
    made: dict[str, Any] = {"store": store, "folder": folder}
    made["once"] = run_bench(BenchSettings(core="random", **SETTINGS), store=store, progress=False).run.id
    ran = clineval(
        "radbench", "run", "--core", "random", *GRID, "--trials", "3", "--store", store, cwd=folder
    )
    assert ran.returncode == 0, ran.stderr
    assert "each episode the mean of its 3 trials" in ran.stdout
    made["trials"] = api.load_run("latest", store=store).run.id
    made["oracle"] = run_bench(BenchSettings(core="oracle", n_records=1), store=store, progress=False).run.id
    return made


def _values(store: str, run: str) -> dict[str, dict[str, float | None]]:
    result = api.load_run(run, store=store)
    case_ids = [c.id for c in result.cases]
    return dict(zip(case_ids, (v for _, v in metric_rows(result)), strict=True))


def test_compare_of_the_oracle_shows_completion_over_the_solvable_conditions(
    stored: dict[str, Any], tmp_path: Path
) -> None:
    store, oracle = stored["store"], stored["oracle"]
    shown = clineval("radbench", "compare", oracle, oracle, "--store", store, cwd=tmp_path)
    assert shown.returncode == 0, shown.stderr
    lines = {
        cells[0]: cells
        for cells in (line.replace("│", " ").split() for line in shown.stdout.splitlines() if "│" in line)
    }
    # metric, over (2 words), records, A, B, ...: completion 1.000 over the 5 solvable conditions
    # (before, the insufficient ones were mixed in: 5/8 = 0.625); UAR and UGR over the 3 others
    assert lines["completion"][1:6] == ["5", "solvable", "1", "1.000", "1.000"]
    assert lines["uar"][1:6] == ["3", "insufficient", "1", "1.000", "1.000"]
    assert lines["ugr"][1:6] == ["3", "insufficient", "1", "1.000", "1.000"]
    # the same figure as summary's
    summary = json.loads(
        clineval(
            "radbench", "summary", oracle, "--store", store, "--by", "complexity", "--json", "-", cwd=tmp_path
        ).stdout
    )
    done = {
        tuple(r["group"]): r["mean"] for r in summary["complexity"] if r["metric"] == "completion" and r["n"]
    }
    assert set(done.values()) == {1.0} and all(group[1] == "solvable" for group in done)


def test_trials_are_cases_of_their_own_and_trial_one_is_the_single_run(stored: dict[str, Any]) -> None:
    store = stored["store"]
    once, trials = _values(store, stored["once"]), _values(store, stored["trials"])
    # one trial: the case ids stay record/task/condition, as in runs made before trials existed
    assert sorted(once) == ["rb-0001/012/baseline", "rb-0001/012/insufficient_1"]
    assert sorted(trials) == [
        f"rb-0001/012/{c}/t{k}" for c in ("baseline", "insufficient_1") for k in (1, 2, 3)
    ]
    for case_id, values in once.items():
        assert trials[f"{case_id}/t1"] == values  # trial 1 is the one-trial run
    # the seeded random core differs between trials (its own seed per trial)
    plans = {trials[f"rb-0001/012/baseline/t{k}"]["ld_plan_gt"] for k in (1, 2, 3)}
    assert len(plans) > 1
    record = api.load_run(stored["trials"], store=store).run
    assert record.tags["trials"] == "3"
    assert BenchSettings.model_validate(record.config["environment"]).trials == 3


def test_summary_and_compare_of_trials_from_the_cli(stored: dict[str, Any], tmp_path: Path) -> None:
    store = stored["store"]
    trials = _values(store, stored["trials"])
    payload = json.loads(
        clineval(
            "radbench", "summary", stored["trials"], "--store", store, "--json", "-", cwd=tmp_path
        ).stdout
    )
    rows = {(r["group"][0], r["metric"]): r for r in payload["condition"]}
    plan = [trials[f"rb-0001/012/baseline/t{k}"]["ld_plan_gt"] for k in (1, 2, 3)]
    cell = rows["baseline", "ld_plan_gt"]
    # one episode: n 1, its mean the mean of its three trials, the spread their SD
    assert (cell["n"], cell["n_episodes"], cell["trials"]) == (1, 1, 3)
    assert cell["mean"] == pytest.approx(statistics.mean(plan))
    assert cell["trial_sd"] == pytest.approx(statistics.stdev(plan))
    assert rows["insufficient_1", "completion"]["n"] == 0  # not over the insufficient set
    shown = clineval("radbench", "summary", stored["trials"], "--store", store, cwd=tmp_path)
    assert "each episode the mean of its 3 trials" in shown.stdout
    assert "standard deviation over 3 trials of each mean" in shown.stdout
    # side by side with the one-trial run: one episode paired (the mean of its trials)
    side = json.loads(
        clineval(
            "radbench", "summary", stored["once"], stored["trials"], "--store", store,
            "-m", "ld_plan_gt", "--json", "-", cwd=tmp_path,
        ).stdout
    )  # fmt: skip
    family = side["families"][0]
    once_cell, trials_cell = family["rows"][0]["runs"]
    assert (once_cell["trials"], once_cell["trial_sd"], once_cell["mean"]) == (1, None, plan[0])
    assert trials_cell["trials"] == 3 and trials_cell["trial_sd"] == pytest.approx(statistics.stdev(plan))
    assert family["tests"][0]["n_pairs"] == 1
    assert family["tests"][0]["mean_difference"] == pytest.approx(statistics.mean(plan) - plan[0])

    compared = clineval(
        "radbench", "compare", stored["once"], stored["trials"], "--store", store, "-m", "ld_plan_gt",
        cwd=tmp_path,
    )  # fmt: skip
    assert compared.returncode == 0, compared.stderr
    line = next(line for line in compared.stdout.splitlines() if line.strip("│ ").startswith("ld_plan_gt"))
    cells = line.replace("│", " ").split()
    # metric, over, records (one record, paired once), A, B (mean ±SD over the trials), ...
    assert cells[1:4] == ["1", "solvable", "1"]
    assert cells[4] == f"{plan[0]:.3f}"
    assert cells[5:7] == [f"{statistics.mean(plan):.3f}", f"±{statistics.stdev(plan):.3f}"]
    assert "A ran 1 trial(s), B 3" in compared.stdout.replace("\n", " ")


def test_a_run_of_trials_resumes(stored: dict[str, Any], tmp_path: Path) -> None:
    store = str(tmp_path / "runs.db")
    run_id = run_bench(BenchSettings(core="random", trials=2, **SETTINGS), store=store, progress=False).run.id
    before = _values(store, run_id)
    with sqlite3.connect(store) as conn:  # lose the second trials, as a crash would
        conn.execute("DELETE FROM results WHERE case_id LIKE '%/t2'")
        conn.execute("DELETE FROM outputs WHERE case_id LIKE '%/t2'")
        conn.execute("UPDATE runs SET status = 'interrupted'")
    resumed = clineval("radbench", "run", "--resume", run_id, "--store", store, "-q", cwd=tmp_path)
    assert resumed.returncode == 0, resumed.stderr
    assert _values(store, run_id) == before  # the same trials again, seeded


def test_a_run_stored_before_trials_still_shows_and_compares(stored: dict[str, Any], tmp_path: Path) -> None:
    store = str(tmp_path / "old.db")
    old = run_bench(BenchSettings(core="greedy", **SETTINGS), store=store, progress=False).run.id
    with sqlite3.connect(store) as conn:  # settings as stored before trials existed
        conn.execute("UPDATE runs SET record = json_remove(record, '$.config.environment.trials')")
        assert "trials" not in conn.execute("SELECT record FROM runs").fetchone()[0]
    run_bench(BenchSettings(core="random", trials=2, **SETTINGS), store=store, progress=False)
    shown = clineval("radbench", "summary", old, "--store", store, cwd=tmp_path)
    assert shown.returncode == 0 and "By condition" in shown.stdout and "trials" not in shown.stdout
    compared = clineval("radbench", "compare", old, "latest", "--store", store, "-m", "uar", cwd=tmp_path)
    assert compared.returncode == 0, compared.stderr
    line = next(line for line in compared.stdout.splitlines() if line.strip("│ ").startswith("uar"))
    assert line.replace("│", " ").split()[1:4] == ["1", "insufficient", "1"]


def test_bad_trial_options_are_one_line(tmp_path: Path) -> None:
    store = str(tmp_path / "r.db")
    zero = clineval("radbench", "run", "--trials", "0", "--store", store, cwd=tmp_path)
    assert zero.returncode == 2 and "--trials" in zero.stderr and "Traceback" not in zero.stderr
    hot = clineval("radbench", "run", "--temperature", "0.7", "--store", store, cwd=tmp_path)
    assert hot.returncode == 2 and "apply to --core llm only" in hot.stderr
    assert not Path(store).exists()


def test_compare_errors_and_notes_are_one_line(stored: dict[str, Any], tmp_path: Path) -> None:
    store, once = stored["store"], stored["once"]
    bad = clineval("radbench", "compare", once, once, "--store", store, "-m", "nope", cwd=tmp_path)
    assert bad.returncode == 2 and "--metric 'nope'" in bad.stderr and "Traceback" not in bad.stderr
    plain = api.evaluate([{"id": "c1", "response": "a", "reference": "a"}], ["exact_match"], store=store)
    refused = clineval("radbench", "compare", once, plain.run.id, "--store", store, cwd=tmp_path)
    assert refused.returncode == 2 and "is not a radbench run" in refused.stderr
    other = run_bench(BenchSettings(core="random", seed=1, **SETTINGS), store=store, progress=False).run.id
    noted = clineval("radbench", "compare", once, other, "--store", store, "-m", "uar", cwd=tmp_path)
    assert noted.returncode == 0, noted.stderr
    assert "made with a different --seed or records file" in noted.stderr
