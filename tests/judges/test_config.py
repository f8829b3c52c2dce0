"""Judge specs: one setting picks the judge."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel, ValidationError

from clineval.errors import ConfigError
from clineval.judges import JudgeConfig, ScriptedJudge, build_judge, parse_judge_spec
from clineval.judges.config import default_judge_config


def test_spec_strings() -> None:
    assert parse_judge_spec("none") == {"provider": "none"}
    assert parse_judge_spec("openai:gpt-4o-mini") == {"provider": "openai", "model": "gpt-4o-mini"}
    assert parse_judge_spec("openai:llama3@http://localhost:11434/v1") == {
        "provider": "openai",
        "model": "llama3",
        "base_url": "http://localhost:11434/v1",
    }
    assert parse_judge_spec("azure:gpt-4o") == {"provider": "azure", "model": "gpt-4o"}
    assert JudgeConfig.model_validate("scripted:rules.yaml").script == "rules.yaml"
    with pytest.raises(ConfigError, match="unknown judge"):
        parse_judge_spec("anthropic:claude")
    with pytest.raises(ValidationError, match="needs a model"):
        JudgeConfig.model_validate("openai:")


def test_environment_default(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CLINEVAL_JUDGE", raising=False)
    assert default_judge_config().provider == "offline"
    monkeypatch.setenv("CLINEVAL_JUDGE", "none")
    assert default_judge_config().provider == "none"
    monkeypatch.setenv("CLINEVAL_JUDGE", "openai:gpt-4o-mini")
    assert default_judge_config().model == "gpt-4o-mini"


def test_openai_needs_key_or_local_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ConfigError, match=r"needs an API key in \$OPENAI_API_KEY"):
        build_judge(JudgeConfig.model_validate("openai:gpt-4o-mini"))
    assert build_judge(JudgeConfig.model_validate("none")) is None


async def test_scripted_judge_from_file(tmp_path: Path) -> None:
    class Label(BaseModel):
        label: str

    (tmp_path / "rules.yaml").write_text(
        "rules:\n  - pattern: warfarin\n    answer: {label: interaction}\ndefault: {label: none}\n",
        encoding="utf-8",
    )
    judge = build_judge(JudgeConfig.model_validate("scripted:rules.yaml"), base_dir=tmp_path)
    assert isinstance(judge, ScriptedJudge)
    assert (
        await judge.ask([{"role": "user", "content": "warfarin + aspirin"}], Label)
    ).output.label == "interaction"
    assert (await judge.ask([{"role": "user", "content": "metformin"}], Label)).output.label == "none"
    assert len(judge.requests) == 2
    (tmp_path / "bad.yaml").write_text("- just a list\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="expected a mapping"):
        ScriptedJudge.from_file(tmp_path / "bad.yaml")
