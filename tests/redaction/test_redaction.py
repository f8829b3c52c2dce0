"""clineval.redaction with hand-worked values: which values are masked (length, name,
harmless words), in which order, in which spellings, and the structured helpers."""

from __future__ import annotations

import pytest

from clineval import redaction
from clineval.redaction import redact, register_secret, secret_values


@pytest.fixture(autouse=True)
def _no_registered_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Secrets registered here stay here (the registry is process-wide)."""
    monkeypatch.setattr(redaction, "_registered", set())
    monkeypatch.setattr(redaction, "_cache", None)


# --- how long a secret must be: 8 characters (MIN_SECRET_LENGTH) ------------------------


def test_an_eight_character_secret_is_masked_and_a_seven_character_one_is_not() -> None:
    env = {"MY_API_KEY": "q7Lm2Xw9", "OTHER_TOKEN": "r4Tz8Kp"}  # 8 and 7 characters
    assert redact("sent q7Lm2Xw9 then r4Tz8Kp.", env=env) == "sent *** then r4Tz8Kp."
    assert secret_values(env) == ("q7Lm2Xw9",)


def test_an_eight_character_registered_secret_is_masked_and_a_seven_character_one_is_not() -> None:
    register_secret("Gw3nB8vQ")  # 8
    register_secret("Hx5rC1y")  # 7: ignored
    register_secret(None)
    register_secret("")
    assert redact("gateway Gw3nB8vQ, Hx5rC1y", env={}) == "gateway ***, Hx5rC1y"
    assert secret_values({}) == ("Gw3nB8vQ",)


# --- a secret inside a longer one: longest first ------------------------------------------

# Each one the start of the next: masking a shorter one first would leave the rest of a
# longer one visible ("***9" or "***-tail"). Six nested values: any order but the longest
# first fails (a set's order matches by chance once in 720).
NESTED = ["Pq8sT2vW", "Pq8sT2vW9", "Pq8sT2vW9x", "Pq8sT2vW9xY", "Pq8sT2vW9xY0", "Pq8sT2vW9xY0-tail"]


def test_secrets_are_masked_longest_first() -> None:
    env = {f"SECRET_{i}": value for i, value in enumerate(NESTED)}
    assert secret_values(env) == tuple(reversed(NESTED))
    for value in NESTED:
        assert redact(f"[{value}]", env=env) == "[***]"
    text = " ".join(NESTED)
    assert redact(text, env=env) == " ".join(["***"] * 6)


def test_a_registered_secret_inside_a_longer_environment_secret() -> None:
    register_secret("Zk4mN7pR")
    env = {"SERVICE_TOKEN": "Zk4mN7pR-2024-live"}
    assert secret_values(env) == ("Zk4mN7pR-2024-live", "Zk4mN7pR")
    assert redact("token=Zk4mN7pR-2024-live", env=env) == "token=***"
