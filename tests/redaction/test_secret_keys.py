"""A value under a key that names a secret is masked in data as it is in text.

Before: ``redact('{"password": 12345678}')`` gave ``{"password": ***}`` but the data path
(exports, trace attributes, and ``redact_json`` when masking the text would break the JSON)
left ``{"password": 12345678}`` and ``{"api_key": "abcdefgh12345"}`` as they were, since
the values alone look like nothing. A name at the end of a longer one
(``openai_api_key``, ``db_password``) was not recognised in either."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

import pytest

from clineval.redaction import MASK, Masker, redact, redact_data, redact_json

SECRET_KEYED = {
    "password": 12345678,
    "api_key": "abcdefgh12345",
    "x-api-key": "abcd",  # four characters: masked (as in text)
    "openai_api_key": "abcdefgh12345",
    "db_password": "hunter22",
    "Client_Secret": 3.14159,
}
LEFT = {
    "passwd": True,  # not a secret value: a flag
    "access_token": None,
    "refresh_token": "abc",  # three characters: left (as in text)
    "client_secret": "${CLIENT_SECRET}",  # a placeholder
    "api_key_2": "abcdefgh12345",  # the name does not end there
    "monkey": "banana",
    "is_password_valid": "true",
}


def _masked(data: dict[str, Any]) -> dict[str, Any]:
    return dict.fromkeys(data, MASK)


@pytest.mark.parametrize(
    "mask",
    [redact_data, Masker().data, lambda d: Masker().data(MappingProxyType(d))],
    ids=["redact_data", "Masker.data", "Masker.data(Mapping)"],
)
def test_values_under_secret_names_are_masked_and_the_others_kept(mask: Any) -> None:
    assert mask({**SECRET_KEYED, **LEFT}) == {**_masked(SECRET_KEYED), **LEFT}


def test_nested_and_listed_records_are_masked_at_any_depth() -> None:
    data = {"judge": {"api_key": "abcdefgh12345", "model": "m"}, "rows": [{"password": 1234}]}
    expected = {"judge": {"api_key": MASK, "model": "m"}, "rows": [{"password": MASK}]}
    assert redact_data(data) == expected
    assert Masker().data(data) == expected


def test_an_export_line_hides_the_value_its_text_would_hide() -> None:
    record = {"metadata": {"password": 12345678, "api_key": "abcdefgh12345"}}
    assert Masker().dumps(record) == '{"metadata": {"password": "***", "api_key": "***"}}'
    assert redact('{"metadata": {"password": 12345678, "api_key": "abcdefgh12345"}}') == (
        '{"metadata": {"password": ***, "api_key": "***"}}'
    )


def test_redact_json_falls_back_to_the_data_and_still_masks_a_number() -> None:
    # masking the text gives {"password": ***, ...}, not JSON: the data is masked instead
    assert redact_json('{"password": 12345678, "note": "ok"}') == '{"password": "***", "note": "ok"}'


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("OPENAI_API_KEY=abcdefgh12345", "OPENAI_API_KEY=***"),
        ("db_password: hunter22", "db_password: ***"),
        ("is_password_valid=true", "is_password_valid=true"),
        ("monkey: banana", "monkey: banana"),
    ],
)
def test_a_secret_name_at_the_end_of_a_longer_name_is_read_in_text_too(text: str, expected: str) -> None:
    assert redact(text) == expected
