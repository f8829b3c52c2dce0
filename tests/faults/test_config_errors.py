"""Bad run files and suites: every message names the file, the line and what was expected.

Metric settings are checked against the metric's typed signature, every bad setting is
reported at once, a suite reports the root of a problem (not what follows from it),
unsafe YAML tags and alias bombs are refused, ``clineval validate`` builds nothing, and
the offline-judge notice appears only on runs that use the judge.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tests.clirun import clineval

from clineval.config import load_run_config
from clineval.errors import ConfigError
from clineval.metrics.registry import build_metric
from clineval.redaction import error_text, mask_message
from clineval.suites.loader import load_suite
from clineval.suites.source import SuiteError

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "prior_auth"
DATA = '{"id": "1", "input": "q", "response": "a b", "reference": "a b"}\n'


def _limit_memory() -> None:
    """At most 3 GB of address space for a child process: a YAML bomb that got through
    fails fast instead of taking the machine's memory."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (3 * 1024**3, 3 * 1024**3))


def _cli(
    *args: str, cwd: Path, limit_memory: bool = False, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    limit = limit_memory and sys.platform != "win32"
    return clineval(*args, cwd=cwd, env=env, preexec_fn=_limit_memory if limit else None)


def _run_file(folder: Path, text: str) -> Path:
    (folder / "cases.jsonl").write_text(DATA, encoding="utf-8")
    path = folder / "run.yaml"
    path.write_text(text, encoding="utf-8")
    return path


# -- metric settings in run files --------------------------------------------------------


def test_bad_list_indentation_points_to_the_line_and_the_yaml_shape(tmp_path: Path) -> None:
    path = _run_file(tmp_path, "data: cases.jsonl\nmetrics:\n  - token_f1\n   - rouge\n")
    with pytest.raises(ConfigError) as info:
        load_run_config(path)
    message = str(info.value)
    assert message.startswith(f"{path}:3: metrics[0]: unknown metric 'token_f1 - rouge'")
    assert "same indentation" in message


def test_every_bad_metric_setting_is_reported_with_its_line(tmp_path: Path) -> None:
    path = _run_file(
        tmp_path,
        "data: cases.jsonl\n"
        "metrics:\n"
        "  - rubric(criteria=5)\n"
        "  - bleu(smooth_method=[1,2])\n"
        "  - tbfact(use_gold_facts=maybe)\n"
        "  - name: rouge\n"
        "    args:\n"
        "      use_stemmer: sometimes\n"
        "      colour: blue\n",
    )
    with pytest.raises(ConfigError) as info:
        load_run_config(path)
    message = str(info.value)
    assert "5 problems" in message
    assert (
        f"{path}:3: metrics[0]: metric 'rubric', setting 'criteria': expected a string or a mapping"
        in message
    )
    assert "got 5" in message
    assert (
        f"{path}:4: metrics[1]: metric 'bleu', setting 'smooth_method': expected a string, got [1, 2]"
        in message
    )
    assert (
        f"{path}:5: metrics[2]: metric 'tbfact', setting 'use_gold_facts': "
        "expected true or false, got 'maybe'" in message
    )
    assert f"{path}:8: metrics[3].args.use_stemmer: metric 'rouge', setting 'use_stemmer'" in message
    assert f"{path}:9: metrics[3].args.colour: metric 'rouge': unknown setting 'colour'" in message


def test_bad_settings_in_python_and_on_the_command_line(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="setting 'use_gold_facts': expected true or false, got 'maybe'"):
        build_metric("tbfact(use_gold_facts=maybe)")
    with pytest.raises(ConfigError, match="setting 'criteria': expected a string or a mapping"):
        build_metric("rubric(criteria=5)")
    (tmp_path / "cases.jsonl").write_text(DATA, encoding="utf-8")
    proc = _cli(
        "run",
        "--data",
        "cases.jsonl",
        "-m",
        "rubric(criteria=5)",
        "-m",
        "bleu(smooth_method=[1,2])",
        "-q",
        "--store",
        "s.db",
        cwd=tmp_path,
    )
    assert proc.returncode == 2
    assert "'criteria'" in proc.stderr and "'smooth_method'" in proc.stderr
    assert "Traceback" not in proc.stderr and "not iterable" not in proc.stderr


def test_good_settings_still_build(tmp_path: Path) -> None:
    for spec in (
        "rubric(criteria='Is it correct?')",
        "bleu(smooth_method=floor)",
        "tbfact(use_gold_facts=false, directions=recall)",
        "rouge(rouge_type=rouge1, use_stemmer=true)",
        "trajectory_single_tool_use(tool_name=get_labs)",
        "faithfulness(partial_credit=0.5)",
    ):
        build_metric(spec)


# -- suites: the root of a problem only ---------------------------------------------------


def _suite(tmp_path: Path, old: str, new: str) -> Path:
    folder = tmp_path / "suite"
    shutil.copytree(EXAMPLE, folder)
    path = folder / "suite.yaml"
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return path


def _problems(path: Path) -> list[str]:
    with pytest.raises(SuiteError) as info:
        load_suite(path, env={})
    return [str(p) for p in info.value.problems]


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("class: pipeline.py:PriorAuthPipeline", "class: ${PIPELINE}", "prior_auth.pipeline.class"),
        ("name: FieldFuzzy", "name: ${FUZZY_NAME}", "prior_auth.evaluators[3].name"),
        (
            "class: clineval.suites.evaluators:FuzzyMatch",
            "class: ${FUZZY_CLASS}",
            "prior_auth.evaluators[3].class",
        ),
        ("threshold: 90", "threshold: ${FUZZY_THRESHOLD}", "prior_auth.evaluators[3].args.threshold"),
    ],
)
def test_an_unset_variable_is_the_only_problem_reported(
    tmp_path: Path, old: str, new: str, field: str
) -> None:
    problems = _problems(_suite(tmp_path, old, new))
    assert len(problems) == 1, problems
    assert f"{field}: environment variable" in problems[0] and "is not set" in problems[0]


def test_a_bad_evaluator_argument_is_the_only_problem_reported(tmp_path: Path) -> None:
    problems = _problems(_suite(tmp_path, "max_seconds: 5", "max_seconds: 5\n        oops: 2"))
    assert len(problems) == 1, problems
    assert "TimeToDecision has no parameter 'oops'" in problems[0]


def test_a_badly_typed_evaluator_argument_names_the_expected_type(tmp_path: Path) -> None:
    problems = _problems(_suite(tmp_path, "threshold: 90", "threshold: [90]"))
    assert len(problems) == 1, problems
    assert "prior_auth.evaluators[3].args.threshold" in problems[0]
    assert "expected a number, got [90]" in problems[0]


# -- unsafe tags and alias bombs ----------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "!!python/object/apply:os.system\n  - echo hacked\n",
        "!!python/object:collections.OrderedDict\n  a: 1\n",
        "!!python/tuple [1, 2]\n",
        "!custom {a: 1}\n",
    ],
)
def test_unsafe_tags_on_lists_and_mappings_are_rejected(tmp_path: Path, value: str) -> None:
    path = _run_file(tmp_path, f"data: cases.jsonl\nmetrics: [token_f1]\ntags: {value}")
    with pytest.raises(ConfigError, match=r"run\.yaml:3: tags: unsupported YAML tag"):
        load_run_config(path)


def test_unsafe_tag_on_a_suite_mapping_is_rejected(tmp_path: Path) -> None:
    path = _suite(
        tmp_path,
        "      args:\n        threshold: 90",
        "      args: !!python/object:x.Y\n        threshold: 90",
    )
    problems = _problems(path)
    assert any("unsupported YAML tag '!!python/object:x.Y'" in p for p in problems), problems


def test_billion_laughs_is_refused_quickly(tmp_path: Path) -> None:
    # five levels: just past the limit, yet small enough not to exhaust memory where the
    # limit is missing (the command-line test below has the full bomb)
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 5):
        refs = ", ".join([f"*a{i - 1}"] * 10)
        lines.append(f"a{i}: &a{i} [{refs}]")
    path = _run_file(tmp_path, "\n".join(lines) + "\ndata: cases.jsonl\nmetrics: [token_f1]\n")
    started = time.monotonic()
    with pytest.raises(ConfigError, match="aliases"):
        load_run_config(path)
    assert time.monotonic() - started < 10


def test_a_recursive_alias_and_deep_nesting_are_refused(tmp_path: Path) -> None:
    path = _run_file(tmp_path, "data: cases.jsonl\nmetrics: [token_f1]\ntags: &t {a: *t}\n")
    with pytest.raises(ConfigError, match="refers to itself"):
        load_run_config(path)
    path.write_text("data: cases.jsonl\nmetrics: [token_f1]\ntags: " + "[" * 20_000 + "\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="nested too deeply"):
        load_run_config(path)


def test_yaml_faults_on_the_command_line_have_no_traceback(tmp_path: Path) -> None:
    lines = ['a0: &a0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    for i in range(1, 10):
        lines.append(f"a{i}: &a{i} [{', '.join([f'*a{i - 1}'] * 10)}]")
    _run_file(tmp_path, "\n".join(lines) + "\n")
    proc = _cli("validate", "run.yaml", cwd=tmp_path, limit_memory=True)
    assert proc.returncode == 2
    assert "aliases" in proc.stderr
    assert "Traceback" not in proc.stderr and "MemoryError" not in proc.stderr


# -- validate builds nothing ---------------------------------------------------------------


def test_validate_does_not_create_evaluators_or_context_objects(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    path = _suite(
        tmp_path,
        "class: clineval.suites.evaluators:FuzzyMatch\n      args:\n        threshold: 90",
        f"class: logging:FileHandler\n      args:\n        filename: '{marker}'",
    )
    proc = _cli("validate", str(path), cwd=tmp_path)
    # a FileHandler creates its file as it is made, before the command ends: nothing to wait for
    assert not marker.exists(), "validate made an evaluator"
    assert proc.returncode == 2
    assert "Traceback" not in proc.stderr
    assert "prior_auth.evaluators[3]" in proc.stderr and "not callable" in proc.stderr


def test_validate_does_not_build_context_classes(tmp_path: Path) -> None:
    marker = tmp_path / "started"
    path = _suite(
        tmp_path,
        "    policy: !include data/policies/001.md\n    notes: !include data/notes/001-a.md\n",
        f"    policy: !include data/policies/001.md\n    notes: !include data/notes/001-a.md\n"
        f"    logging:FileHandler: {{filename: '{marker}'}}\n",
    )
    proc = _cli("validate", str(path), cwd=tmp_path)
    assert not marker.exists(), "validate made a context object"  # it would exist by now, as above
    assert proc.returncode == 0, proc.stderr
    bad = _suite(
        tmp_path / "again",
        "    policy: !include data/policies/001.md\n    notes: !include data/notes/001-a.md\n",
        "    policy: !include data/policies/001.md\n    notes: !include data/notes/001-a.md\n"
        "    subprocess:Popen: {args: [echo], no_such_argument: 1}\n",
    )
    proc = _cli("validate", str(bad), cwd=tmp_path)
    assert proc.returncode == 2
    assert "no_such_argument" in proc.stderr and "Traceback" not in proc.stderr


def test_validate_run_file_does_not_create_user_metric_objects(tmp_path: Path) -> None:
    marker = tmp_path / "created"
    (tmp_path / "mine.py").write_text(
        "from pathlib import Path\n"
        "class Mine:\n"
        "    def __init__(self, level: int = 1):\n"
        f"        Path({str(marker)!r}).write_text('x')\n"
        "    def score(self, case):\n"
        "        return 1.0\n",
        encoding="utf-8",
    )
    _run_file(
        tmp_path, "data: cases.jsonl\nmetrics:\n  - mine.py:Mine(level=2)\n  - mine.py:Mine(level=high)\n"
    )
    proc = _cli("validate", "run.yaml", cwd=tmp_path)
    assert not marker.exists()
    assert proc.returncode == 2
    assert (
        "run.yaml:4: metrics[1]: metric 'mine.py:Mine', setting 'level': expected an integer, got 'high'"
        in (proc.stderr)
    )


# -- the offline-judge notice ---------------------------------------------------------------


def test_offline_notice_only_when_a_metric_uses_the_judge(tmp_path: Path) -> None:
    (tmp_path / "cases.jsonl").write_text(DATA, encoding="utf-8")
    plain = _cli("run", "--data", "cases.jsonl", "-m", "token_f1", "-q", "--store", "s.db", cwd=tmp_path)
    assert plain.returncode == 0, plain.stderr
    assert "offline judge" not in plain.stdout
    shown = _cli("show", "latest", "--store", "s.db", cwd=tmp_path)
    assert "offline judge" not in shown.stdout
    judged = _cli("run", "--data", "cases.jsonl", "-m", "faithfulness", "-q", "--store", "s.db", cwd=tmp_path)
    assert judged.returncode == 0, judged.stderr
    assert "offline judge" in judged.stdout


# -- masking hides values, never the words of the message -------------------------------


def test_a_misplaced_api_key_is_an_unknown_field_and_its_value_is_masked(tmp_path: Path) -> None:
    _run_file(
        tmp_path,
        "data: cases.jsonl\nmetrics: [token_f1]\njudge:\n  api_key: sk-proj-abcdefghijklmnop\n",
    )
    # a secret that equals words of the message does not eat them either
    proc = _cli("run", "run.yaml", "-q", "--store", "s.db", cwd=tmp_path, env={"MY_API_KEY": "unknown field"})
    assert proc.returncode == 2
    assert proc.stderr.strip() == "error: run.yaml:4: judge.api_key: unknown field"


def test_a_secret_quoted_by_a_config_error_is_masked_and_the_words_stay(tmp_path: Path) -> None:
    _run_file(tmp_path, "data: cases.jsonl\nmetrics: [token_f1]\nencoding: ${CODEC_TOKEN}\n")
    proc = _cli(
        "run", "run.yaml", "-q", "--store", "s.db", cwd=tmp_path, env={"CODEC_TOKEN": "sk-abcdefghijklmnop"}
    )
    assert proc.returncode == 2
    assert proc.stderr.strip() == (
        "error: run.yaml:3: encoding: unknown encoding '***'; "
        "use a Python codec name such as utf-8, cp1252 or latin-1"
    )
    assert "abcdefgh" not in proc.stderr


def test_a_metric_setting_named_like_a_key_keeps_its_message(tmp_path: Path) -> None:
    path = _run_file(
        tmp_path,
        "data: cases.jsonl\nmetrics:\n  - name: rouge\n    args: {api_key: ghp_abcdefghijklmnopqrstuvwx}\n",
    )
    with pytest.raises(ConfigError) as info:
        load_run_config(path)
    assert error_text(info.value) == (
        f"{path}:4: metrics[0].args.api_key: metric 'rouge': unknown setting 'api_key' "
        "(its settings: rouge_type, use_stemmer)"
    )


def test_mask_message_masks_the_values_and_keeps_the_words() -> None:
    env = {"MY_API_KEY": "required", "OTHER_TOKEN": "hunter2-hunter2"}
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        # the word 'required' stays; the quoted value and the bare secret go
        assert mask_message("required: got 'required'", "required") == "required: got '***'"
        assert mask_message("got hunter2-hunter2 here") == "got *** here"
        assert (
            mask_message("setting 'password': expected a string") == "setting 'password': expected a string"
        )
        # credential shapes are still masked anywhere
        assert mask_message("server said Bearer abcdef123456") == "server said Bearer ***"
        # a plain error is masked whole, as before
        assert error_text(ConfigError("password: hunter2")) == "password: ***"


# -- every error from a run file names FILE:LINE and the field ----------------------------

AGENT = "def run(case):\n    return case\nNOT_A_FUNCTION = 3\n"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "name: x\nmetrics: [token_f1]\n",
            "run.yaml:1: data: no dataset: give --data FILE or 'data:' in the run file",
        ),
        ('metrics: [token_f1]\ndata: ""\n', "run.yaml:2: data: expected the name of a dataset file"),
        ("metrics: [token_f1]\ndata: missing.jsonl\n", "run.yaml:2: data: dataset file not found: "),
        ("metrics: [token_f1]\ndata: notes.txt\n", "notes.txt: unknown dataset format 'txt'; use .jsonl"),
        (
            "data: cases.jsonl\nmetrics: [token_f1]\nmapping:\n  question: query\n",
            "run.yaml:3: mapping: column mapping 'question' -> 'query': 'query' is not a case field",
        ),
        (
            "data: cases.jsonl\nmetrics: [token_f1]\nagent: missing.py:run\n",
            "run.yaml:3: agent: agent 'missing.py:run': file ",
        ),
        (
            "data: cases.jsonl\nmetrics: [token_f1]\nagent: agent.py\n",
            "run.yaml:3: agent: agent 'agent.py': expected",
        ),
        (
            "data: cases.jsonl\nmetrics: [token_f1]\nagent: agent.py:nope\n",
            "run.yaml:3: agent: agent 'agent.py:nope': 'agent.py' has no attribute 'nope'",
        ),
        (
            "data: cases.jsonl\nmetrics: [token_f1]\nagent:\n  target: agent.py:NOT_A_FUNCTION\n",
            "run.yaml:3: agent: agent 'agent.py:NOT_A_FUNCTION' is not callable",
        ),
        (
            "data: cases.jsonl\nmetrics: [faithfulness]\njudge: scripted:answers.yaml\n",
            "run.yaml:3: judge: scripted judge file not found: ",
        ),
        (
            "data: cases.jsonl\nmetrics: [token_f1]\nstore: not-a-folder/s.db\n",
            "run.yaml:3: store: ",
        ),
    ],
    ids=[
        "no-dataset",
        "empty-data",
        "data-not-found",
        "data-format",
        "mapping",
        "agent-file",
        "agent-shape",
        "agent-attribute",
        "agent-not-callable",
        "judge-file",
        "store",
    ],
)
def test_a_run_file_error_names_the_file_the_line_and_the_field(
    tmp_path: Path, text: str, expected: str
) -> None:
    _run_file(tmp_path, text)
    (tmp_path / "agent.py").write_text(AGENT, encoding="utf-8")
    (tmp_path / "notes.txt").write_text("not a dataset\n", encoding="utf-8")
    (tmp_path / "not-a-folder").write_text("a file where the store's folder would be\n", encoding="utf-8")
    store = [] if "store:" in text else ["--store", "s.db"]
    proc = _cli("run", "run.yaml", "-q", *store, cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("error: run.yaml:"), lines[0]
    assert expected in lines[0]
    assert "Traceback" not in proc.stderr


def test_an_option_that_replaces_a_bad_setting_is_used_and_its_own_error_is_not_located(
    tmp_path: Path,
) -> None:
    _run_file(tmp_path, "data: missing.jsonl\nmetrics: [token_f1]\n")
    fixed = _cli("run", "run.yaml", "--data", "cases.jsonl", "-q", "--store", "s.db", cwd=tmp_path)
    assert fixed.returncode == 0, fixed.stderr
    assert "1 cases" in fixed.stdout
    other = _cli("run", "run.yaml", "--data", "other.jsonl", "-q", "--store", "s.db", cwd=tmp_path)
    assert other.returncode == 2
    assert other.stderr.strip() == f"error: dataset file not found: {tmp_path / 'other.jsonl'}"
