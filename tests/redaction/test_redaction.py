"""clineval.redaction with hand-worked values: which values are masked (length, name,
harmless words), in which order, in which spellings, and the structured helpers."""

from __future__ import annotations

import json

import pytest

from clineval import redaction
from clineval.redaction import Masker, redact, redact_data, redact_json, register_secret, secret_values


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


# --- which variables, which spellings ----------------------------------------------------


def test_only_secret_named_long_and_not_harmless_values_are_masked() -> None:
    env = {
        "DB_PASSWORD": "Disabled",  # a harmless word (any case, spaces aside) is no secret
        "SERVICE_CREDENTIAL": "  enabled ",
        "HOME": "/home/abcdefgh",  # not a secret name
        "my_token": "Rb7Ws3Kd",  # names are matched in any case
    }
    assert secret_values(env) == ("Rb7Ws3Kd",)
    assert redact("Disabled /home/abcdefgh Rb7Ws3Kd", env=env) == "Disabled /home/abcdefgh ***"
    assert redact("", env=env) == ""


def test_json_escaped_spellings_are_masked_too() -> None:
    # 'ab"cd\efgh' is written 'ab\"cd\\efgh' in JSON; 'pässwörd1' is 'p\u00e4ssw\u00f6rd1'
    # with ensure_ascii (and unchanged without it).
    env = {"A_KEY": 'ab"cd\\efgh', "B_KEY": "pässwörd1"}
    assert secret_values(env) == (
        "p\\u00e4ssw\\u00f6rd1",
        'ab\\"cd\\\\efgh',
        'ab"cd\\efgh',
        "pässwörd1",
    )
    assert redact(json.dumps({"a": 'ab"cd\\efgh', "b": "pässwörd1"}), env=env) == '{"a": "***", "b": "***"}'


def test_the_environment_is_read_again_when_it_changes(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLINEVAL_TEST_SECRET_TOKEN", "Fz6Yq1Lc")
    first = secret_values()
    assert "Fz6Yq1Lc" in first
    assert secret_values() == first  # the same state: the remembered values
    monkeypatch.setenv("CLINEVAL_TEST_SECRET_TOKEN", "Nv2Ux8Je")
    again = secret_values()
    assert "Nv2Ux8Je" in again and "Fz6Yq1Lc" not in again
    assert redact("Fz6Yq1Lc Nv2Ux8Je") == "Fz6Yq1Lc ***"


def test_credential_patterns_apply_when_their_hint_is_present() -> None:
    assert redact("auth: Bearer abcdef123456", env={}) == "auth: Bearer ***"
    assert redact("key sk-abcdef123456 and ghp_" + "a" * 24, env={}) == "key sk-*** and ***"
    assert redact("nothing to see in this note", env={}) == "nothing to see in this note"


# --- structured values -------------------------------------------------------------------

SECRET = "Tg5Hs9Mw-live"


def test_redact_data_masks_strings_keys_lists_and_tuples(monkeypatch: pytest.MonkeyPatch) -> None:
    from types import MappingProxyType

    monkeypatch.setenv("CLINEVAL_TEST_SECRET_TOKEN", SECRET)
    value = {
        SECRET: [f"a {SECRET}", (SECRET, 3)],
        "n": 1.5,
        2: None,
        "": "",
        "view": MappingProxyType({"k": SECRET}),
        "set": {1},
    }
    expected = {"***": ["a ***", ["***", 3]], "n": 1.5, 2: None, "": "", "view": {"k": "***"}, "set": {1}}
    assert redact_data(value) == expected
    assert Masker().data(value) == expected


def test_the_masker_masks_short_and_long_texts_and_dumps_valid_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLINEVAL_TEST_SECRET_TOKEN", SECRET)
    masker = Masker()
    long_text = "x" * 100 + SECRET
    assert masker.text(SECRET) == "***" and masker.text(SECRET) == "***"  # remembered
    assert masker.text(long_text) == "x" * 100 + "***"
    assert masker.text("") == ""

    class Label(str):
        pass

    assert masker.data(Label(SECRET)) == "***"
    assert masker.nothing_to_mask('{"a": "plain"}') is True
    assert masker.nothing_to_mask(f'{{"a": "{SECRET}"}}') is False
    assert masker.nothing_to_mask('{"a": "Bearer x"}') is False  # a credential hint
    plain = {"a": "plain", "b": [1, 2]}
    assert masker.dumps(plain) == json.dumps(plain, ensure_ascii=False)
    assert json.loads(masker.dumps({"a": SECRET, "é": "ü"})) == {"a": "***", "é": "ü"}


def test_redact_json_keeps_the_document_valid(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLINEVAL_TEST_SECRET_TOKEN", SECRET)
    plain = '{"a": 1}'
    assert redact_json(plain) is plain
    assert json.loads(redact_json(json.dumps({"error": f"refused {SECRET}"}))) == {"error": "refused ***"}
