"""Patient data out of spans before they are stored (``clineval collect --redact FILE``,
``clineval traces import --redact FILE``).

A :class:`SpanRedactor` is built from a small YAML file (:class:`RedactConfig`)::

    builtins: [mrn, phone, email, date, nhs_number, ssn]   # any of these, switched on by name
    dates: {mode: shift, shift_days: -113, day_first: false}  # or mode: mask
    patterns:                                              # your own, applied after the built-ins
      - {name: bed, regex: 'Bed \\d+[A-Z]?', replacement: '[BED]'}
    hook: scrub.py:scrub_names                             # or my_package.module:function

Every span is redacted in this order:

1. the **hook**, when set, is called with the :class:`~clineval.model.trace.SpanRecord` and
   returns one (names, and anything else a regular expression cannot catch);
2. every **pattern** (built-ins first, then yours, each in the order given) is applied to every
   string value: span attributes, event attributes, resource attributes and the status
   message. A string that holds a JSON object or array (``gen_ai.input.messages``,
   ``gen_ai.output.messages``, ``gen_ai.system_instructions``, tool call arguments and
   results, the older event bodies) is decoded and each string inside it redacted, also when
   it is itself JSON, so the value stays valid JSON. An integer whose digits a pattern
   changes becomes the redacted string.

Dates found by the ``date`` built-in are **shifted** by ``shift_days`` (the same date always
gives the same shifted date, keeping intervals between dates) or **masked**. Span timestamps
are not shifted (they place traffic in time). Credentials are masked by the decoder already
(:mod:`clineval.redaction`), with or without a redactor.

A hook that raises, or returns something else than a ``SpanRecord``, is a
:class:`RedactionError`: the request (or the file) that carried the span stores nothing.
"""

from __future__ import annotations

import datetime as dt
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    ValidationError,
    field_validator,
    model_validator,
)

from clineval.errors import ClinevalError, ConfigError, field_errors
from clineval.importing import import_object
from clineval.model.trace import SpanEvent, SpanRecord

__all__ = [
    "BUILTIN_PATTERNS",
    "DateOptions",
    "PatternConfig",
    "RedactConfig",
    "RedactionError",
    "SpanRedactor",
    "load_redactor",
]

Hook = Callable[[SpanRecord], SpanRecord]
_Replacement = str | Callable[[re.Match[str]], str]


class RedactionError(ClinevalError):
    """The redaction hook failed on a span: that span (and its request or file) is not stored."""


class PatternConfig(BaseModel):
    """One regular expression and what replaces its matches (``\\1`` refers to a group)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    regex: str = Field(min_length=1)
    replacement: str = "[REDACTED]"

    @model_validator(mode="after")
    def _compiles(self) -> PatternConfig:
        try:
            compiled = re.compile(self.regex)
        except re.error as exc:
            raise ValueError(
                f"pattern {self.name!r}: regex {self.regex!r} does not compile ({exc})"
            ) from None
        try:
            compiled.sub(self.replacement, "")  # the template is checked even without a match
        except re.error as exc:
            raise ValueError(f"pattern {self.name!r}: replacement {self.replacement!r}: {exc}") from None
        return self


class DateOptions(BaseModel):
    """What the ``date`` built-in does with the dates it finds."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    mode: Literal["shift", "mask"] = "shift"
    shift_days: int = 0
    """Days added to every date (negative: earlier). Keep it the same for a store, and secret."""
    day_first: bool = False
    """Read ``01/02/2024`` as 1 February (true) or January 2 (false)."""
    mask: str = "[DATE]"

    @model_validator(mode="after")
    def _shift_set(self) -> DateOptions:
        if self.mode == "shift" and self.shift_days == 0:
            raise ValueError("mode 'shift' needs a non-zero shift_days (or use mode: mask)")
        return self


BuiltinName = Literal["mrn", "phone", "email", "date", "nhs_number", "ssn"]


class RedactConfig(BaseModel):
    """The ``--redact`` file."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    builtins: tuple[BuiltinName, ...] = ()
    dates: DateOptions | None = None
    patterns: tuple[PatternConfig, ...] = ()
    hook: str | None = None
    """``module.path:function`` or ``file.py:function`` (relative to the config file's folder)."""

    @field_validator("builtins")
    @classmethod
    def _unique(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(dict.fromkeys(value))

    @model_validator(mode="after")
    def _dates_need_date(self) -> RedactConfig:
        if "date" in self.builtins and self.dates is None:
            raise ValueError("builtin 'date' needs 'dates: {mode: shift, shift_days: N}' or '{mode: mask}'")
        return self


# -- built-in patterns ---------------------------------------------------------------------

_MONTHS = ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec")
_MONTH = (
    r"(Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?"
    r"|Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)"
)

BUILTIN_PATTERNS: dict[str, tuple[str, str]] = {
    "email": (r"(?i)\b[A-Z0-9._%+-]+@[A-Z0-9.-]+\.[A-Z]{2,}\b", "[EMAIL]"),
    "mrn": (
        r"(?i)\b((?:MRN|medical[ _-]record(?:[ _-](?:number|no\.?))?|hospital[ _-](?:number|no\.?)"
        r"|patient[ _-]?(?:id|number|no\.?))[\"']?\s*[:#=]?\s*[\"']?)[A-Z]{0,3}\d{4,12}\b",
        r"\1[MRN]",
    ),
    "ssn": (r"\b\d{3}-\d{2}-\d{4}\b", "[SSN]"),
    "nhs_number": (r"\b\d{3}[ -]?\d{3}[ -]?\d{4}\b", "[NHS]"),
    "phone": (
        r"(?<![\w+])(?:\+\d{1,3}[\s.-]?)?(?:\(\d{2,5}\)\s?|\d{2,5}[\s.-])\d{3,4}[\s.-]?\d{3,4}(?!\w)",
        "[PHONE]",
    ),
}
"""Name -> (regex, replacement); ``date`` is handled by :class:`_Dates`. Applied in the order
email, mrn, ssn, nhs_number, date, phone (identifiers before the looser phone pattern)."""
_MRN_KEY = re.compile(
    r"(?i)(?:^|[._-])(?:mrn|medical[._-]?record(?:[._-]?(?:number|no))?|hospital[._-]?(?:number|no)"
    r"|patient[._-]?(?:id|number|no))$"
)
"""With the ``mrn`` built-in, an attribute or JSON key like this (``patient.mrn``, ``mrn``,
``patient_id``, ``medical_record_number``) has its whole value (a string or a number) replaced."""
_ORDER = ("email", "mrn", "ssn", "nhs_number", "date", "phone")


def _nhs_checksum_ok(digits: str) -> bool:
    """The NHS number's modulus-11 check digit (a 10-digit number failing it is left alone)."""
    total = sum(int(d) * w for d, w in zip(digits[:9], range(10, 1, -1), strict=True))
    check = 11 - total % 11
    check = 0 if check == 11 else check
    return check != 10 and check == int(digits[9])


def _nhs(match: re.Match[str]) -> str:
    digits = re.sub(r"\D", "", match.group(0))
    return "[NHS]" if _nhs_checksum_ok(digits) else match.group(0)


class _Dates:
    """ISO (2024-03-05, also the date of an ISO timestamp), slashed (05/03/2024) and written
    (5 March 2024, March 5, 2024) dates, shifted keeping their spelling, or masked."""

    def __init__(self, options: DateOptions):
        self.options = options
        self.delta = dt.timedelta(days=options.shift_days)
        self.rules: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
            (re.compile(r"(?<!\d)(\d{4})-(\d{2})-(\d{2})(?!\d)"), self._iso),
            (re.compile(r"\b(\d{1,2})([/.])(\d{1,2})\2(\d{4})\b"), self._slashed),
            (re.compile(r"(?i)\b(\d{1,2}) " + _MONTH + r",? (\d{4})\b"), self._day_month),
            (re.compile(r"(?i)\b" + _MONTH + r" (\d{1,2}),? (\d{4})\b"), self._month_day),
        )

    def apply(self, text: str) -> str:
        for pattern, replace in self.rules:
            text = pattern.sub(replace, text)
        return text

    def _shifted(self, year: int, month: int, day: int) -> dt.date | None:
        """The shifted date, or None to mask (mask mode, or not a real date)."""
        if self.options.mode == "mask":
            return None
        try:
            return dt.date(year, month, day) + self.delta
        except (ValueError, OverflowError):
            return None

    def _iso(self, m: re.Match[str]) -> str:
        new = self._shifted(int(m[1]), int(m[2]), int(m[3]))
        return self.options.mask if new is None else new.isoformat()

    def _slashed(self, m: re.Match[str]) -> str:
        first, sep, second, year = int(m[1]), m[2], int(m[3]), int(m[4])
        day, month = (first, second) if self.options.day_first else (second, first)
        new = self._shifted(year, month, day)
        if new is None:
            return self.options.mask
        a, b = (new.day, new.month) if self.options.day_first else (new.month, new.day)
        return f"{a:02d}{sep}{b:02d}{sep}{new.year}" if len(m[1]) == 2 else f"{a}{sep}{b}{sep}{new.year}"

    def _month_name(self, spelled: str, month: int) -> str:
        full = dt.date(2000, month, 1).strftime("%B")
        return full if len(spelled) > 3 else full[:3]

    def _day_month(self, m: re.Match[str]) -> str:
        month = _MONTHS.index(m[2][:3].lower()) + 1
        new = self._shifted(int(m[3]), month, int(m[1]))
        if new is None:
            return self.options.mask
        comma = "," if "," in m[0] else ""
        return f"{new.day} {self._month_name(m[2], new.month)}{comma} {new.year}"

    def _month_day(self, m: re.Match[str]) -> str:
        month = _MONTHS.index(m[1][:3].lower()) + 1
        new = self._shifted(int(m[3]), month, int(m[2]))
        if new is None:
            return self.options.mask
        comma = "," if "," in m[0] else ""
        return f"{self._month_name(m[1], new.month)} {new.day}{comma} {new.year}"


# -- the redactor ----------------------------------------------------------------------------


class SpanRedactor:
    """Applies a :class:`RedactConfig` to spans (:meth:`span`, :meth:`spans`)."""

    def __init__(self, config: RedactConfig, *, hook: Hook | None = None, hook_name: str = ""):
        self.config = config
        self.hook = hook
        self.hook_name = hook_name or (config.hook or "")
        steps: list[Callable[[str], str]] = []
        for name in _ORDER:
            if name not in config.builtins:
                continue
            if name == "date":
                assert config.dates is not None  # the config's validator makes sure
                steps.append(_Dates(config.dates).apply)
            elif name == "nhs_number":
                steps.append(_sub(re.compile(BUILTIN_PATTERNS[name][0]), _nhs))
            else:
                regex, replacement = BUILTIN_PATTERNS[name]
                steps.append(_sub(re.compile(regex), replacement))
        for pattern in config.patterns:
            steps.append(_sub(re.compile(pattern.regex), pattern.replacement))
        self._steps = tuple(steps)
        self._mrn_keys = "mrn" in config.builtins

    def text(self, text: str) -> str:
        """A string redacted: JSON objects and arrays inside it stay valid JSON."""
        if not text:
            return text
        stripped = text.lstrip()
        if stripped[:1] in ("{", "["):
            try:
                data = json.loads(text)
            except ValueError:
                pass
            else:
                if isinstance(data, dict | list):
                    redacted = self.value(data)
                    return text if redacted == data else json.dumps(redacted, ensure_ascii=False)
        for step in self._steps:
            text = step(text)
        return text

    def value(self, value: Any) -> Any:
        """A JSON-like value with every string (and every integer a pattern changes) redacted."""
        if isinstance(value, str):
            return self.text(value)
        if isinstance(value, bool) or value is None or isinstance(value, float):
            return value
        if isinstance(value, int):
            digits = str(value)
            redacted = self.text(digits)
            return value if redacted == digits else redacted
        if isinstance(value, dict):
            return {k: self._keyed(k, v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value

    def _keyed(self, key: object, value: Any) -> Any:
        """A value under a key: a record number's key masks its whole (scalar) value."""
        if (
            self._mrn_keys
            and isinstance(key, str)
            and isinstance(value, str | int)
            and not isinstance(value, bool)
            and _MRN_KEY.search(key)
        ):
            return "[MRN]"
        return self.value(value)

    def _attributes(self, attributes: dict[str, JsonValue]) -> dict[str, JsonValue]:
        return {key: self._keyed(key, v) for key, v in attributes.items()}

    def span(self, span: SpanRecord) -> SpanRecord:
        """The span redacted: the hook first, then the patterns."""
        if self.hook is not None:
            try:
                hooked = self.hook(span)
            except Exception as exc:
                raise RedactionError(
                    f"redaction hook {self.hook_name!r} failed on span {span.span_id} of trace "
                    f"{span.trace_id}: {type(exc).__name__}: {_one_line(str(exc))}"
                ) from None
            if not isinstance(hooked, SpanRecord):
                raise RedactionError(
                    f"redaction hook {self.hook_name!r} returned {type(hooked).__name__}, not a SpanRecord "
                    f"(span {span.span_id} of trace {span.trace_id})"
                )
            span = hooked
        if not self._steps:
            return span
        return span.model_copy(
            update={
                "attributes": self._attributes(span.attributes),
                "events": tuple(
                    SpanEvent(
                        name=e.name,
                        time_unix_nano=e.time_unix_nano,
                        attributes=self._attributes(e.attributes),
                    )
                    for e in span.events
                ),
                "resource": self._attributes(span.resource),
                "status_message": self.text(span.status_message),
            }
        )

    def spans(self, spans: list[SpanRecord]) -> list[SpanRecord]:
        """All spans redacted, or a :class:`RedactionError` (then none is to be stored)."""
        return [self.span(s) for s in spans]


def _sub(pattern: re.Pattern[str], replacement: _Replacement) -> Callable[[str], str]:
    def apply(text: str) -> str:
        return pattern.sub(replacement, text)

    return apply


def _one_line(text: str) -> str:
    return " ".join(text.split())


def load_redactor(path: str | Path) -> SpanRedactor:
    """The redactor a ``--redact`` YAML file describes; a one-line :class:`ConfigError` naming
    the file and field when it is not usable."""
    file = Path(path)
    try:
        data = yaml.safe_load(file.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"{file}: no such redaction file") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{file}: cannot be read ({exc})") from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"{file}: not valid YAML ({_one_line(str(exc))})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{file}: expected a mapping (builtins, dates, patterns, hook), not {type(data).__name__}"
        )
    try:
        config = RedactConfig.model_validate(data)
    except ValidationError as exc:
        problems = [line.removeprefix("field '': ") for line in field_errors(exc)]  # whole-file checks
        raise ConfigError(f"{file}: " + "; ".join(problems)) from None
    hook: Hook | None = None
    if config.hook is not None:
        found = import_object(config.hook, base_dir=file.parent.resolve(), what=f"{file}: field 'hook'")
        if not callable(found):
            raise ConfigError(f"{file}: field 'hook' {config.hook!r} is not a function")
        hook = found
    return SpanRedactor(config, hook=hook, hook_name=config.hook or "")
