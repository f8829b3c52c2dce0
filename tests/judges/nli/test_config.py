"""``nli:PATH`` as a judge setting: parsing, its errors, and the judge it builds."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from clineval.errors import ConfigError
from clineval.judges import JudgeConfig, build_judge, parse_judge_spec
from clineval.judges.base import JudgeError
from clineval.judges.nli import NliJudge


def test_spec_and_label() -> None:
    assert parse_judge_spec("nli:models/deberta-v3-nli") == {
        "provider": "nli",
        "model_path": "models/deberta-v3-nli",
    }
    config = JudgeConfig.model_validate("nli:models/deberta-v3-nli/")
    assert config.provider == "nli" and config.label == "nli:deberta-v3-nli"
    # the run-file form
    assert JudgeConfig.model_validate({"provider": "nli", "model_path": "m"}).label == "nli:m"
    with pytest.raises(ValidationError, match="an nli judge needs a model folder"):
        JudgeConfig.model_validate("nli:")
    with pytest.raises(ConfigError, match=r"'scripted:FILE' or 'nli:PATH'"):
        parse_judge_spec("mnli:models/x")


def test_a_missing_folder_is_one_line_naming_it(tmp_path: Path) -> None:
    with pytest.raises(
        ConfigError, match=r"^judge nli:no-such-model: no such model folder \(.*no-such-model\)$"
    ):
        build_judge(JudgeConfig.model_validate("nli:no-such-model"), base_dir=tmp_path)
    absent = str(tmp_path / "absent")
    with pytest.raises(ConfigError, match=rf"^judge nli:{absent}: no such model folder$"):
        build_judge(JudgeConfig.model_validate(f"nli:{absent}"))


def test_build_from_a_run_files_folder(tiny_model: Path) -> None:
    """A relative folder is taken from the run file's folder (``base_dir``)."""
    judge = build_judge(JudgeConfig.model_validate("nli:tiny-nli"), base_dir=tiny_model.parent)
    assert isinstance(judge, NliJudge)
    assert judge.name == "nli:tiny-nli"
    described = judge.describe()
    assert described["provider"] == "nli" and described["name"] == "nli:tiny-nli"
    assert described["verifier_model"]["path"] == str(tiny_model.resolve())
    assert described["verifier_model"]["labels"] == ["ENTAILMENT", "NEUTRAL", "CONTRADICTION"]
    assert described["offline"]["heuristic_version"].startswith("offline-heuristic/")


class Anything(BaseModel):
    text: str


async def test_free_form_prompts_need_an_llm_judge(tiny_model: Path) -> None:
    judge = NliJudge(tiny_model)
    with pytest.raises(JudgeError, match="needs an LLM judge"):
        await judge.ask([{"role": "user", "content": "rate this"}], Anything)
    await judge.aclose()


async def test_the_judges_primitives_check_facts_end_to_end(tiny_model: Path) -> None:
    """The real tiny model (random weights, so its probabilities mean nothing) with the offline
    check: a dose swap stays incorrect; every verdict says what the model gave."""
    judge = NliJudge(tiny_model)
    verdicts = await judge.primitives.check_facts(
        ["The patient was started on lisinopril 5 mg daily.", "She has a cough."],
        "The patient was started on lisinopril 50 mg daily. She has a dry cough.",
    )
    assert (verdicts[0].label, verdicts[0].reason) == ("not_entailed", "incorrect")
    assert all("P(entailment)" in v.explanation for v in verdicts)
    assert verdicts[1].support is not None
    assert (verdicts[1].label == "entailed") == (verdicts[1].support >= 0.5)
