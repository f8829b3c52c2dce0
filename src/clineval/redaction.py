"""Masking secrets in everything clineval stores, prints or exports.

One function, :func:`redact`, replaces with ``***``:

* the value of every environment variable whose name looks secret (it contains ``KEY``,
  ``TOKEN``, ``SECRET``, ``PASSWORD``, ``PASSWD`` or ``CREDENTIAL``, in any
  case) and whose value has at least 8 characters, wherever it appears;
* values registered with :func:`register_secret` (the key a judge was built with, read
  from whatever variable ``api_key_env`` names);
* anything shaped like a credential: ``Bearer <token>``, OpenAI-style keys (``sk-...``),
  32-hex-digit keys (Azure OpenAI; in a text that mentions a key, auth, credentials or a
  secret), ``api-key: ...`` / ``api_key=...`` /
  ``password=...`` settings, user:password in URLs, GitHub, Hugging Face, AWS, Google
  and Slack tokens, and JSON web tokens.

It is applied where data leaves the process: the run store's writes (run records,
agent errors, scores), the CLI's error messages, the per-case and unscored-reason
tables (their results are masked before they are stored), and the JSONL/CSV/JUnit
exports. Masking is idempotent, so text masked twice is unchanged.
"""

from __future__ import annotations

import json
import os
import re
import threading
from collections.abc import Iterable, Mapping
from typing import Any

MASK = "***"
SECRET_NAME_WORDS = ("KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL")
MIN_SECRET_LENGTH = 8
_HARMLESS = frozenset({"true", "false", "none", "null", "disabled", "enabled"})

# (pattern, replacement, lower-case texts one of which must occur in the lower-cased text
# for the pattern to be tried: a cheap test that spares most texts the regular expression;
# every pattern has at least one)
_PATTERNS: tuple[tuple[re.Pattern[str], str, tuple[str, ...]], ...] = (
    # user:password@ in a URL
    (re.compile(r"(?<=://)[^/\s:@\"'\\]+:[^/\s@\"'\\]+(?=@)"), MASK, ("://",)),
    # Authorization: Bearer <token>
    (re.compile(r"(?i)\b(bearer)\s+[A-Za-z0-9._~+/=*-]{6,}"), r"\1 " + MASK, ("bearer",)),
    # OpenAI-style keys: sk-..., sk-proj-..., sk-ant-...
    (re.compile(r"\bsk-[A-Za-z0-9_*-]{6,}"), "sk-" + MASK, ("sk-",)),
    # api-key: VALUE, api_key=VALUE, "password": "VALUE", access_token=VALUE, ... (_SETTING;
    # also at the end of a longer name: openai_api_key=VALUE, db_password: VALUE)
    (
        re.compile(
            r"(?i)(?:\b|(?<=_))((?:x-)?api[-_ ]?key|access[-_]?token|refresh[-_]?token|client[-_]?secret"
            r"|password|passwd)([\"']?\s*[:=]\s*[\"']?)(?!\*\*\*|\$\{)([^\s\"',;&}\\]{4,})"
        ),
        r"\1\2" + MASK,
        ("key", "token", "secret", "passw"),
    ),
    # GitHub, Hugging Face, AWS access key ids, Google API keys, Slack tokens
    (
        re.compile(r"\b(?:gh[pousr]_[A-Za-z0-9]{20,}|github_pat_[A-Za-z0-9_]{20,})"),
        MASK,
        ("gh",),
    ),
    (re.compile(r"\bhf_[A-Za-z0-9]{20,}"), MASK, ("hf_",)),
    (re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"), MASK, ("akia", "asia")),
    (re.compile(r"\bAIza[0-9A-Za-z_-]{30,}"), MASK, ("aiza",)),
    (re.compile(r"\bxox[abposr]-[A-Za-z0-9-]{10,}"), MASK, ("xox",)),
    # JSON web tokens
    (re.compile(r"\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"), MASK, ("eyj",)),
    # Azure OpenAI keys and similar: 32 hexadecimal digits standing alone, in a text that
    # speaks of a key or credentials (a bare hash such as a file's MD5 is left alone)
    (
        re.compile(r"(?<![0-9A-Za-z])[0-9a-fA-F]{32}(?![0-9A-Za-z])"),
        MASK,
        ("key", "auth", "credential", "secret"),
    ),
)
_SETTING = 3
"""The pattern for ``name: value`` settings: not applied to the words of a message that
clineval composed (``judge.api_key: unknown field`` names a field, it holds no value)."""
_SETTING_KEY = re.compile(
    r"(?i)(?:\b|(?<=_))(?:(?:x-)?api[-_ ]?key|access[-_]?token|refresh[-_]?token|client[-_]?secret"
    r"|password|passwd)$"
)
"""A mapping key that the setting pattern reads as a secret's name: its value is masked in
data as in text (``{"password": 12345678}`` is ``{"password": ***}`` in text)."""
_MESSAGE_PATTERNS = _PATTERNS[:_SETTING] + _PATTERNS[_SETTING + 1 :]
_HINTS = frozenset(hint for _, _, hints in _PATTERNS for hint in hints)
# One search for any hint at all: most texts have none, and then no pattern is tried.
_ANY_HINT = re.compile("|".join(re.escape(hint) for hint in sorted(_HINTS)))
_SECRET_NAME = re.compile("|".join(SECRET_NAME_WORDS), re.IGNORECASE)

_registered: set[str] = set()
_lock = threading.Lock()
_cache: tuple[object, tuple[str, ...]] | None = None
"""(what the values were computed from, the values): recomputed when the environment or
the registered secrets change."""


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name looks like it holds a secret."""
    return _SECRET_NAME.search(name) is not None


def register_secret(value: str | None) -> None:
    """Mask ``value`` from now on in this process (e.g. a key read from a custom variable)."""
    if value and len(value) >= MIN_SECRET_LENGTH:
        with _lock:
            _registered.add(value)


def _environment_state() -> object:
    """A cheap snapshot of ``os.environ`` that changes whenever a variable does."""
    raw = getattr(os.environ, "_data", None)  # CPython: the undecoded dict, fast to copy
    if isinstance(raw, dict):
        return tuple(raw.items())
    return tuple(os.environ.items())


def secret_values(env: Mapping[str, str] | None = None) -> tuple[str, ...]:
    """The values to mask, longest first: secret-looking environment variables and
    registered secrets, each also in its JSON-escaped spelling when that differs."""
    global _cache
    with _lock:
        registered = frozenset(_registered)
        cached = _cache
    state: object = None
    if env is None:
        state = (_environment_state(), registered)
        if cached is not None and cached[0] == state:
            return cached[1]
    source = os.environ if env is None else env
    values: set[str] = {
        value
        for name, value in source.items()
        if is_secret_name(name) and len(value) >= MIN_SECRET_LENGTH and value.strip().lower() not in _HARMLESS
    } | registered
    for value in list(values):  # a spelling equal to the value adds nothing to the set
        values.add(json.dumps(value, ensure_ascii=False)[1:-1])
        values.add(json.dumps(value)[1:-1])
    ordered = tuple(sorted(values, key=len, reverse=True))
    if env is None:
        with _lock:
            _cache = (state, ordered)
    return ordered


def redact(text: str, env: Mapping[str, str] | None = None) -> str:
    """``text`` with secret values and credential-shaped strings replaced by ``***``."""
    if not text:
        return text
    return _redact(text, secret_values(env))


def _redact(
    text: str,
    values: tuple[str, ...],
    patterns: tuple[tuple[re.Pattern[str], str, tuple[str, ...]], ...] = _PATTERNS,
) -> str:
    for value in values:
        if value in text:
            text = text.replace(value, MASK)
    lowered = text.lower()
    if _ANY_HINT.search(lowered) is None:
        return text
    present = {hint for hint in _HINTS if hint in lowered}
    for pattern, replacement, hints in patterns:
        if not present.isdisjoint(hints):
            text = pattern.sub(replacement, text)
    return text


_WORDS = re.compile(r"[A-Za-z]+(?: [A-Za-z]+)*")


def mask_message(text: str, values: Any = (), also: Iterable[str] = ()) -> str:
    """A message clineval composed around values (a configuration error), with the values
    masked and its own words kept.

    ``values`` are what the message is about (a value read from a file: a string, or
    mappings and lists of them) and ``also`` other secrets (values read from ``${NAME}``).
    Each string among ``values`` that :func:`redact` would change, or that holds one of
    ``also``, is replaced by its masked form where the message quotes it (and where it
    stands bare, unless it is plain words). Secret values of the environment are masked
    the same way, and credential-shaped strings (``sk-...``, ``Bearer ...``, tokens) wherever
    they are. The ``name: value`` setting pattern is not applied: in such a message a name
    followed by a colon is a field (``judge.api_key: unknown field``), and a secret that
    equals a word (``unknown``) does not eat that word."""
    if not text:
        return text
    extra = sorted({s for s in also if len(s) >= _MIN_ALSO}, key=len, reverse=True)
    found: dict[str, str] = {}
    for value in _strings(values):
        masked = redact(value)
        for secret in extra:
            masked = masked.replace(secret, MASK)
        if masked != value:
            found[value] = masked
    for value in secret_values():
        found.setdefault(value, MASK)
    for value in sorted(found, key=len, reverse=True):
        masked = found[value]
        for quote in ("'", '"'):
            text = text.replace(f"{quote}{value}{quote}", f"{quote}{masked}{quote}")
        if _WORDS.fullmatch(value) is None:
            text = text.replace(value, masked)
    return _redact(text, (), _MESSAGE_PATTERNS)


_MIN_ALSO = 4


def _strings(value: Any) -> list[str]:
    """The strings in a JSON-like value (keys too), each also in its ``repr`` spelling."""
    if isinstance(value, str):
        spelled = repr(value)[1:-1]
        return [value, spelled] if spelled != value else [value]
    if isinstance(value, Mapping):
        return [s for k, v in value.items() for s in _strings(k) + _strings(v)]
    if isinstance(value, list | tuple | set):
        return [s for v in value for s in _strings(v)]
    return []


def error_text(exc: BaseException) -> str:
    """A user error's message as it is shown: masked by :func:`redact`, unless the error
    was composed with its values masked already (``exc.masked``, see :func:`mask_message`:
    masking it again would take words for values)."""
    text = str(exc)
    return text if getattr(exc, "masked", False) is True else redact(text)


def redact_json(text: str) -> str:
    """A JSON document's text with secrets masked; still valid JSON (when masking the text
    would break it, the decoded data is masked and encoded again)."""
    masked = redact(text)
    if masked == text:
        return text
    try:
        json.loads(masked)
    except ValueError:
        return json.dumps(redact_data(json.loads(text)), ensure_ascii=False)
    return masked


_PLAIN = (int, float, bool, type(None))


class Masker:
    """:func:`redact` and :func:`redact_data` for many records in a row (an export): the
    values to mask are looked up once, when the masker is made, and each short string (keys,
    metric names, labels: the same in every record) is masked once and remembered."""

    SHORT = 80  # pragma: no mutate (which strings are remembered: the same output)
    REMEMBERED = 50_000  # pragma: no mutate (a memo's size)

    def __init__(self) -> None:
        self._values = secret_values()
        self._memo: dict[str, str] = {}

    def text(self, text: str) -> str:
        if not text:
            return text
        if len(text) > self.SHORT:  # pragma: no mutate (either path gives the same output)
            return _redact(text, self._values)
        masked = self._memo.get(text)
        if masked is None:
            if len(self._memo) >= self.REMEMBERED:  # pragma: no mutate (when the memo is cleared)
                self._memo.clear()
            masked = self._memo[text] = _redact(text, self._values)
        return masked

    def data(self, value: Any) -> Any:
        """``redact_data(value)``."""
        kind = type(value)
        if kind is dict:  # the usual types first, without the abstract-class checks
            return {self.text(k) if type(k) is str else k: self._item(k, v) for k, v in value.items()}
        if kind is str:
            return self.text(value)
        if kind in _PLAIN:
            return value
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, Mapping):
            return {self.text(k) if isinstance(k, str) else k: self._item(k, v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.data(v) for v in value]
        return value

    def _item(self, key: Any, value: Any) -> Any:
        return MASK if _setting_value(key, value) else self.data(value)

    def nothing_to_mask(self, text: str) -> bool:
        """True when masking leaves ``text``, and every piece of it, unchanged: no value to
        mask and no hint of a credential pattern occurs in it (a cheap test of a whole record).

        Exact for the JSON of a record: JSON escapes only quotes, backslashes and control
        characters, none of which is part of a hint or lower-cases to one, so a string that
        holds a value to mask (in its raw or escaped spelling, both masked) or a hint leaves
        it in the encoded text too."""
        if any(v in text for v in self._values):
            return False
        return _ANY_HINT.search(text.lower()) is None

    def dumps(self, value: Any) -> str:
        """``json.dumps(redact_data(value), ensure_ascii=False)``."""
        text = json.dumps(value, ensure_ascii=False)
        if self.nothing_to_mask(text):
            return text
        return json.dumps(self.data(value), ensure_ascii=False)


def redact_data(value: Any) -> Any:
    """A JSON-like value (dicts, lists, strings) with every string masked by :func:`redact`;
    mapping keys are masked too."""
    return _redact_data(value, secret_values())  # the values to mask looked up once, not per string


def _redact_data(value: Any, values: tuple[str, ...]) -> Any:
    if isinstance(value, str):
        return _redact(value, values) if value else value
    if isinstance(value, Mapping):
        return {
            (_redact(k, values) if k else k) if isinstance(k, str) else k: (
                MASK if _setting_value(k, v) else _redact_data(v, values)
            )
            for k, v in value.items()
        }
    if isinstance(value, list | tuple):
        return [_redact_data(v, values) for v in value]
    return value


def _setting_value(key: Any, value: Any) -> bool:
    """Whether ``value`` is a secret by its key, as the setting pattern masks it in text: a
    key that names a secret (``password``, ``api_key``, ``x-api-key``, ``client_secret``, ...)
    and a string or number of at least four characters (not a placeholder such as ``${KEY}``,
    not already masked). Booleans, ``null`` and containers are left to the other rules."""
    if not isinstance(key, str) or _SETTING_KEY.search(key) is None:
        return False
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return False
    text = str(value)
    return len(text) >= 4 and not text.startswith(("***", "${"))
