"""clineval.redaction pinned on hand-worked values where the mutation run found the tests
thin: masking the messages of configuration errors (mask_message, error_text), secrets
longer than the minimum, JSON spellings, the 32-hex pattern's context, the values
remembered per state of the environment (also where ``os.environ`` is not CPython's), and
the exact text of the JSON helpers."""

from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from clineval import redaction
from clineval.redaction import (
    Masker,
    error_text,
    mask_message,
    redact,
    redact_json,
    register_secret,
    secret_values,
)


@pytest.fixture(autouse=True)
def _no_registered_secrets(monkeypatch: pytest.MonkeyPatch) -> None:
    """Secrets registered here stay here (the registry is process-wide)."""
    monkeypatch.setattr(redaction, "_registered", set())
    monkeypatch.setattr(redaction, "_cache", None)


# --- which values are masked ----------------------------------------------------------------


def test_a_registered_secret_longer_than_the_minimum_is_masked() -> None:
    register_secret("Mq4Rt8Zx-2025-prod")  # 18 characters: well over the 8 needed
    assert secret_values({}) == ("Mq4Rt8Zx-2025-prod",)
    assert redact("key Mq4Rt8Zx-2025-prod used", env={}) == "key *** used"


def test_a_secret_is_masked_in_both_json_spellings_of_a_quote_backslash_and_accents() -> None:
    # q"wärt\yü1 (10 characters) is written q\"wärt\\yü1 by json.dumps(ensure_ascii=False)
    # (12: the accents kept) and q\"w\u00e4rt\\y\u00fc1 with ensure_ascii (22)
    value = 'q"wärt\\yü1'
    env = {"DB_PASSWORD": value}
    assert secret_values(env) == ('q\\"w\\u00e4rt\\\\y\\u00fc1', 'q\\"wärt\\\\yü1', value)
    for ensure_ascii in (False, True):
        document = json.dumps({"a": value}, ensure_ascii=ensure_ascii)
        assert redact(document, env=env) == '{"a": "***"}'


def test_32_hex_digits_are_masked_only_in_a_text_that_speaks_of_a_key() -> None:
    digest = "d41d8cd98f00b204e9800998ecf8427e"  # the MD5 of nothing: a file's hash, no secret
    assert redact(f"file md5 {digest}", env={}) == f"file md5 {digest}"
    assert redact(f"azure key {digest}", env={}) == "azure key ***"


def test_every_credential_pattern_names_a_lower_case_hint() -> None:
    # a pattern is tried only when one of its hints occurs in the lower-cased text: a
    # pattern without a hint, or with an upper-case one, would never be tried
    for _, _, hints in redaction._PATTERNS:
        assert hints
        assert all(hint == hint.lower() for hint in hints)


def test_the_environment_values_are_computed_once_per_state(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CLINEVAL_TEST_SECRET_TOKEN", "Fz6Yq1Lc")
    first = secret_values()
    assert secret_values() is first  # the same environment: the values remembered, not recomputed
    assert secret_values({"A_TOKEN": "Jd8Wq2Xn"}) == ("Jd8Wq2Xn",)  # an explicit env: its own values
    assert secret_values() is first
    register_secret("Lp3Vk9Cs")  # a registered secret changes the state
    assert secret_values() is not first and "Lp3Vk9Cs" in secret_values()


def test_a_variable_set_back_to_its_earlier_value_is_read_again(monkeypatch: pytest.MonkeyPatch) -> None:
    # each change of the environment is seen, whichever way it goes
    for value in ("Fz6Yq1Lc", "Nv2Ux8Je", "Fz6Yq1Lc"):
        monkeypatch.setenv("CLINEVAL_TEST_SECRET_TOKEN", value)
        assert value in secret_values()
        assert redact(f"[{value}]") == "[***]"


def test_the_environment_is_read_again_when_it_has_no_cpython_data(monkeypatch: pytest.MonkeyPatch) -> None:
    # a platform whose os.environ is a plain mapping (no ``_data``): the snapshot is its items
    environ = {"SERVICE_TOKEN": "Fz6Yq1Lc", "HOME": "/home/x"}
    monkeypatch.setattr(redaction, "os", SimpleNamespace(environ=environ))
    assert secret_values() == ("Fz6Yq1Lc",)
    environ["SERVICE_TOKEN"] = "Nv2Ux8Je"
    assert secret_values() == ("Nv2Ux8Je",)
    environ["OTHER_KEY"] = "Hb5Tr3Wq-2"
    assert secret_values() == ("Hb5Tr3Wq-2", "Nv2Ux8Je")


# --- mask_message: values masked where the message quotes them, words kept -----------------


def test_an_empty_message_stays_empty() -> None:
    assert mask_message("", "Qz7-secret", also=["Qz7-secret"]) == ""


@pytest.mark.parametrize("quote", ["'", '"'])
def test_a_value_that_is_a_word_is_masked_in_quotes_only(quote: str) -> None:
    # 'unknown' is one of the ${NAME} values: its quoted spelling is the value, the bare
    # words are the message's own
    text = f"field {quote}unknown{quote}: unknown value"
    assert mask_message(text, "unknown", also=["unknown"]) == f"field {quote}***{quote}: unknown value"


def test_a_value_of_several_words_is_masked_in_quotes_only() -> None:
    assert mask_message("two words: 'two words'", "two words", also=["two words"]) == "two words: '***'"


def test_a_value_that_is_not_plain_words_is_masked_bare_too() -> None:
    text = "bad value hunter2-x, expected 'hunter2-x' to be a number"
    expected = "bad value ***, expected '***' to be a number"
    assert mask_message(text, "hunter2-x", also=["hunter2-x"]) == expected


def test_an_also_secret_needs_four_characters() -> None:
    # 'xyz1' (4) is masked; 'pq9' (3) is too short to be told from a word and stays
    text = "got 'xyz1' and 'pq9'"
    assert mask_message(text, ["xyz1", "pq9"], also=["xyz1", "pq9"]) == "got '***' and 'pq9'"


def test_also_secrets_inside_longer_ones_are_masked_longest_first() -> None:
    # masking 'Qw12' first would leave '***-long' of the longer secret
    text = "unknown codec 'Qw12-long'"
    assert mask_message(text, "Qw12-long", also=["Qw12", "Qw12-long"]) == "unknown codec '***'"


def test_a_value_only_part_secret_keeps_its_other_part() -> None:
    # the value 'utf-8+Sd4k' holds the ${NAME} secret 'Sd4k': the message quotes its masked form
    text = "unknown encoding 'utf-8+Sd4k'"
    assert mask_message(text, "utf-8+Sd4k", also=["Sd4k"]) == "unknown encoding 'utf-8+***'"


@pytest.mark.parametrize(
    ("value", "quoted", "masked"),
    [
        # a newline is written backslash-n by !r
        ("hunter22\nutf-8", "'hunter22\\nutf-8'", "'***\\nutf-8'"),
        # a Windows path: each backslash doubled by !r
        ("C:\\keys\\hunter22", "'C:\\\\keys\\\\hunter22'", "'C:\\\\keys\\\\***'"),
    ],
)
def test_a_value_is_found_in_its_repr_spelling(value: str, quoted: str, masked: str) -> None:
    text = f"unknown encoding {value!r}"
    assert text == f"unknown encoding {quoted}"
    assert mask_message(text, value, also=["hunter22"]) == f"unknown encoding {masked}"


def test_a_value_that_starts_with_punctuation_is_masked() -> None:
    # a password that starts with punctuation ('!' comes before the mask's '*' in code order)
    text = "unknown codec '!Pw8-hunter2'"
    assert mask_message(text, "!Pw8-hunter2", also=["!Pw8-hunter2"]) == "unknown codec '***'"


def test_values_are_looked_for_in_mappings_keys_lists_tuples_and_sets() -> None:
    values = {
        "k-Secret4": ["x-Secret1", ("y-Secret2", 7), {"z-Secret3"}],
        "n": None,
    }
    also = ["Secret1", "Secret2", "Secret3", "Secret4"]
    text = "key 'k-Secret4': items 'x-Secret1', 'y-Secret2', 'z-Secret3'"
    expected = "key 'k-***': items 'x-***', 'y-***', 'z-***'"
    assert mask_message(text, values, also=also) == expected


def test_a_credential_shaped_value_is_masked_by_its_shape() -> None:
    # no ${NAME} secret: redact() masks the value itself (the sk- shape and the setting)
    assert mask_message("unknown codec 'sk-abcdefgh12'", "sk-abcdefgh12") == "unknown codec 'sk-***'"
    text = "bad line 'password=hunter22'"
    assert mask_message(text, "password=hunter22") == "bad line 'password=***'"


def test_environment_secrets_are_masked_quoted_and_bare_but_not_as_words(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("CLINEVAL_TEST_API_KEY", "required")  # a secret that is a word
    monkeypatch.setenv("CLINEVAL_TEST_TOKEN", "Vb3Nm7Kq")
    monkeypatch.setenv("CLINEVAL_TEST_PASSWORD", "Vb3Nm7Kq-2024")  # holds the other one
    assert mask_message("required: got 'required'") == "required: got '***'"
    assert mask_message("got Vb3Nm7Kq-2024 and Vb3Nm7Kq") == "got *** and ***"
    # the value quoted is the shorter one: the longer secret is still masked first, whole
    assert mask_message("got Vb3Nm7Kq-2024 and 'Vb3Nm7Kq'", "Vb3Nm7Kq") == "got *** and '***'"


def test_the_setting_pattern_is_not_applied_to_the_words_of_a_message() -> None:
    # 'api_key: unknown' names a field; redact() would take 'unknown' for the key's value
    assert redact("judge.api_key: unknown field", env={}) == "judge.api_key: *** field"
    assert mask_message("judge.api_key: unknown field") == "judge.api_key: unknown field"


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # the patterns listed before the setting one and after it are all still applied
        ("fetch https://user:pa55word@host/ failed", "fetch https://***@host/ failed"),
        ("server said Bearer abcdef123456", "server said Bearer ***"),
        ("key sk-abcdefgh12 refused", "key sk-*** refused"),
        ("token ghp_abcdefghijklmnopqrstuvwx refused", "token *** refused"),
        ("token hf_abcdefghijklmnopqrstuvwx refused", "token *** refused"),
        ("auth 0123456789abcdef0123456789ABCDEF refused", "auth *** refused"),
    ],
)
def test_credential_shapes_are_masked_anywhere_in_a_message(text: str, expected: str) -> None:
    assert mask_message(text) == expected


# --- error_text: an error composed with its values masked is shown as it is ----------------


class _Composed(ValueError):
    masked = True


def test_error_text_masks_a_plain_error_and_shows_a_composed_one_as_it_is() -> None:
    assert error_text(ValueError("judge.api_key: unknown field")) == "judge.api_key: *** field"
    assert error_text(_Composed("judge.api_key: unknown field")) == "judge.api_key: unknown field"


@pytest.mark.parametrize("flag", ["yes", 1])
def test_error_text_shows_as_it_is_only_when_masked_is_true(flag: object) -> None:
    # a ``masked`` that is merely truthy (a string, the number 1) is no promise: masked again
    error = ValueError("password: hunter22")
    error.masked = flag  # type: ignore[attr-defined]
    assert error_text(error) == "password: ***"


# --- the JSON helpers: exact text ------------------------------------------------------------

SECRET = "Tg5Hs9Mw-live"


def test_redact_json_masks_a_secret_that_starts_with_punctuation(monkeypatch: pytest.MonkeyPatch) -> None:
    # a password that starts with punctuation ('!' comes before the mask's '*' in code order)
    monkeypatch.setenv("SERVICE_PASSWORD", "!Pw8-hunter2")
    document = '{"error": "login as bob with !Pw8-hunter2 refused"}'
    assert redact_json(document) == '{"error": "login as bob with *** refused"}'


def test_redact_json_masks_the_data_when_masking_the_text_would_break_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the setting pattern takes 'null' for a password ('"password": ***' is no JSON): the
    # decoded data is masked instead, the null kept and the accents written as they are
    monkeypatch.setenv("CLINEVAL_TEST_SECRET_TOKEN", SECRET)
    document = json.dumps({"password": None, "note": SECRET, "é": "ü"})
    assert redact(document) == '{"password": ***, "note": "***", "\\u00e9": "\\u00fc"}'
    assert redact_json(document) == '{"password": null, "note": "***", "é": "ü"}'


def test_the_masker_writes_accents_as_they_are_and_masks_keys_of_any_mapping(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from types import MappingProxyType

    monkeypatch.setenv("CLINEVAL_TEST_SECRET_TOKEN", SECRET)
    masker = Masker()
    assert masker.dumps({"é": "ü"}) == '{"é": "ü"}'  # nothing to mask: written as it is
    assert masker.dumps({"a": SECRET, "é": "ü"}) == '{"a": "***", "é": "ü"}'
    assert masker.data(MappingProxyType({SECRET: 1, 2: SECRET})) == {"***": 1, 2: "***"}
