"""Reading suite and run files: safe YAML with line numbers, includes and environment variables.

A file is read with PyYAML's safe composer, so no tag can build a Python object: a tag
other than plain YAML's and ``!include``, on a scalar, a list or a mapping, is a
problem. Aliases may expand to at most :data:`MAX_ALIAS_NODES` values in all (a
"billion laughs" file is refused, not expanded), an alias inside its own anchor is a
problem, and so is nesting too deep to read. On top of plain YAML, three things:

``include: [base.yaml, ...]`` (top level)
    the listed files are read first and merged in order; this file's own keys are then
    merged over them (mappings merge key by key, anything else is replaced). Paths are
    relative to the including file.
``!include path``
    a value read from another file: YAML for ``.yaml``/``.yml``, the text otherwise
    (handy for a policy document or clinical notes that a case uses as context).
``${NAME}`` and ``${NAME:-default}``
    environment variables in any string, for secrets and machine-specific settings.
    ``$${`` writes a literal ``${``. What a run stores is the text as written, with the
    ``${NAME}`` references, never the values; the values are also masked in any message
    that reaches the store or the terminal.

Every value remembers the file and line it came from, so that a problem anywhere in a
suite is reported as ``file:line: field: what is wrong`` -- all problems at once.
"""

from __future__ import annotations

import datetime as _dt
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from clineval.errors import ConfigError
from clineval.redaction import mask_message, redact

PathKey = tuple[str | int, ...]
INCLUDE_KEY = "include"
INCLUDE_TAG = "!include"
_ENV = re.compile(r"\$\$\{|\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}")
_MIN_SECRET = 4
#: Values that aliases (``*name``) may expand to, in all, in one file and its includes.
MAX_ALIAS_NODES = 100_000
_PLAIN_TAGS = {
    "mapping": ("tag:yaml.org,2002:map",),
    "sequence": ("tag:yaml.org,2002:seq",),
}


def _tag_text(tag: str) -> str:
    """A tag as written: ``!!python/object:x`` rather than ``tag:yaml.org,2002:python/object:x``."""
    return "!!" + tag.removeprefix("tag:yaml.org,2002:") if tag.startswith("tag:yaml.org,2002:") else tag


class _Refused(Exception):
    """A file that is not read further (an alias bomb, nesting too deep)."""

    def __init__(self, message: str, location: Location | None):
        super().__init__(message)
        self.message = message
        self.location = location


_MISSING: Any = object()


@dataclass(frozen=True)
class Location:
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a file: where, which field, what was expected."""

    location: Location | None
    field: str
    message: str
    masked: bool = False
    """Whether ``message`` was composed with its values masked (:meth:`Document.problem`);
    otherwise it is masked when shown. The field and the message are masked apart, so that
    a field name followed by a colon is never taken for a secret setting."""

    def __str__(self) -> str:
        where = f"{self.location}: " if self.location else ""
        what = f"{redact(self.field)}: " if self.field else ""
        return f"{where}{what}{self.message if self.masked else redact(self.message)}"


class SuiteError(ConfigError):
    """A file with one or more problems; the message lists every one of them, masked
    (:attr:`Problem.masked`): it is shown as it is."""

    masked = True

    def __init__(self, problems: Iterable[Problem], source: str | None = None):
        self.problems = sorted(
            problems,
            key=lambda p: (p.location.file if p.location else "", p.location.line if p.location else 0),
        )
        count = len(self.problems)
        head = f"{source}: " if source else ""
        if count == 1:
            super().__init__(f"{head}{self.problems[0]}")
            return
        lines = [f"{head}{count} problems:"]
        lines += [f"  {p}" for p in self.problems]
        super().__init__("\n".join(lines))


def field_name(path: PathKey) -> str:
    """``('suite', 'evaluators', 1, 'class')`` as ``suite.evaluators[1].class``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            text += f".{part}" if text else str(part)
    return text


@dataclass
class Document:
    """A file's data (environment resolved), its text as written, and where each value is."""

    data: Any
    raw: Any
    locations: dict[PathKey, Location] = field(default_factory=dict)
    secrets: set[str] = field(default_factory=set)
    files: list[str] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    unset: set[PathKey] = field(default_factory=set)
    """Paths of values that name an environment variable that is not set (already a problem:
    what follows from their empty value is not reported again)."""

    def tainted(self, path: PathKey) -> bool:
        """Whether ``path``, or a value inside it, uses an unset environment variable."""
        key = tuple(path)
        return any(p[: len(key)] == key for p in self.unset)

    def where(self, path: PathKey) -> Location | None:
        """The location of ``path``, or of its nearest ancestor that has one."""
        key = tuple(path)
        while True:
            if key in self.locations:
                return self.locations[key]
            if not key:
                return None
            key = key[:-1]

    def value(self, path: PathKey) -> Any:
        """The data at ``path`` (None where there is none)."""
        node = self.data
        for part in path:
            node = _child(node, part)
            if node is _MISSING:
                return None
        return node

    def problem(self, path: PathKey, message: str, value: Any = _MISSING) -> Problem:
        """A problem at ``path``; the message is masked by the values it is about (``value``,
        by default the data at ``path``), its words kept (:func:`mask_message`)."""
        about = self.value(path) if value is _MISSING else value
        return Problem(self.where(path), field_name(path), mask_message(message, about, self.secrets), True)

    def validation_problems(self, exc: ValidationError, base: PathKey = ()) -> list[Problem]:
        """A pydantic error as located problems (``base`` is where the validated value sits)."""
        found = []
        for err in exc.errors():
            loc = tuple(p for p in err.get("loc", ()) if isinstance(p, str | int))
            # pydantic names union members and validators in loc; keep real keys only
            path = base + _real_path(self.data, base, loc)
            if err.get("type") == "extra_forbidden":
                message = "unknown field"
            elif err.get("type") == "missing":
                message = "required field is missing"
            else:
                message = str(err.get("msg", "invalid")).removeprefix("Value error, ")
            found.append(self.problem(path, message, [err.get("input"), self.value(path)]))
        return found


def _real_path(data: Any, base: PathKey, loc: tuple[str | int, ...]) -> PathKey:
    """The keys of a pydantic error location that exist in the data.

    pydantic puts the names of union members and validators into locations; those are
    skipped. A last key that is not in the data is a missing field and is kept.
    """
    node = data
    for part in base:
        node = _child(node, part)
    path: list[str | int] = []
    for i, part in enumerate(loc):
        child = _child(node, part)
        if child is _MISSING:
            if i == len(loc) - 1 and isinstance(part, str) and isinstance(node, Mapping):
                path.append(part)
            continue
        path.append(part)
        node = child
    return tuple(path)


def _child(node: Any, part: str | int) -> Any:
    if isinstance(node, Mapping):
        return node.get(part, _MISSING) if part in node else _MISSING
    if isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
        return node[part]
    return _MISSING


def one_line(exc: BaseException) -> str:
    """An exception raised by a user's class as one line: its type and first line; a
    pydantic error as ``field: message`` for each of its errors."""
    if isinstance(exc, ValidationError):
        parts = []
        for err in exc.errors():
            where = ".".join(str(p) for p in err.get("loc", ()))
            parts.append(f"{where}: {err.get('msg', 'invalid')}" if where else str(err.get("msg", "invalid")))
        return f"{exc.title}: " + "; ".join(parts)
    text = str(exc).strip()
    first = text.splitlines()[0] if text else ""
    return f"{type(exc).__name__}: {first}" if first else type(exc).__name__


def mask(text: str, secrets: Iterable[str]) -> str:
    """``text`` with every secret value replaced by ``***``."""
    for secret in sorted(set(secrets), key=len, reverse=True):
        if len(secret) >= _MIN_SECRET:
            text = text.replace(secret, "***")
    return text


class _Reader:
    def __init__(self, env: Mapping[str, str]):
        self.env = env
        self.secrets: set[str] = set()
        self.files: list[str] = []
        self.problems: list[Problem] = []
        self.unset: set[PathKey] = set()
        self._constructor = yaml.SafeLoader("")
        self._seen: dict[int, yaml.Node] = {}  # the nodes themselves keep their ids unique
        self._active: set[int] = set()
        self._alias_nodes = 0

    def read(self, file: Path, stack: tuple[Path, ...] = ()) -> tuple[Any, Any, dict[PathKey, Location]]:
        name = str(file)
        resolved = file.resolve()
        if resolved in stack:
            chain = " -> ".join(str(p) for p in (*stack, resolved))
            self.problems.append(Problem(None, "include", f"files include each other: {chain}"))
            return None, None, {}
        try:
            text = file.read_text(encoding="utf-8")
        except FileNotFoundError:
            self.problems.append(Problem(None, "", f"file not found: {file}"))
            return None, None, {}
        except (OSError, UnicodeDecodeError) as exc:
            self.problems.append(Problem(None, "", f"cannot read {file}: {exc}"))
            return None, None, {}
        self.files.append(name)
        try:
            nodes = list(yaml.compose_all(text, Loader=yaml.SafeLoader))
        except RecursionError:
            self.problems.append(Problem(Location(name, 1), "", "not valid YAML: nested too deeply to read"))
            return None, None, {}
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = Location(name, mark.line + 1) if mark is not None else None
            problem = getattr(exc, "problem", None) or str(exc)
            self.problems.append(Problem(where, "", f"not valid YAML: {problem}"))
            return None, None, {}
        if len(nodes) > 1:
            self.problems.append(
                Problem(Location(name, 1), "", "one YAML document per file, found several ('---')")
            )
        if not nodes or nodes[0] is None:
            return None, None, {}
        locations: dict[PathKey, Location] = {}
        try:
            data, raw = self._node(nodes[0], (), name, file.parent, locations, (*stack, resolved))
        except _Refused as exc:
            self.problems.append(Problem(exc.location or Location(name, 1), "", exc.message))
            return None, None, {}
        except RecursionError:
            self.problems.append(Problem(Location(name, 1), "", "not valid YAML: nested too deeply to read"))
            return None, None, {}
        if isinstance(data, dict) and INCLUDE_KEY in data:
            data, raw, locations = self._includes(data, raw, locations, name, file.parent, (*stack, resolved))
        return data, raw, locations

    def _includes(
        self,
        data: dict[str, Any],
        raw: dict[str, Any],
        locations: dict[PathKey, Location],
        name: str,
        folder: Path,
        stack: tuple[Path, ...],
    ) -> tuple[Any, Any, dict[PathKey, Location]]:
        listed = data.pop(INCLUDE_KEY)
        raw.pop(INCLUDE_KEY, None)
        where = locations.get((INCLUDE_KEY,))
        if isinstance(listed, str):
            listed = [listed]
        if not isinstance(listed, list) or not all(isinstance(x, str) for x in listed):
            self.problems.append(Problem(where, INCLUDE_KEY, "expected a file name or a list of file names"))
            return data, raw, locations
        merged_data: Any = {}
        merged_raw: Any = {}
        merged_loc: dict[PathKey, Location] = {}
        for item in listed:
            before = len(self.problems)
            sub_data, sub_raw, sub_loc = self.read(folder / item, stack)
            for i in range(before, len(self.problems)):
                if self.problems[i].location is None:
                    self.problems[i] = Problem(where, INCLUDE_KEY, self.problems[i].message)
            if sub_data is None:
                continue
            if not isinstance(sub_data, dict):
                self.problems.append(
                    Problem(where, INCLUDE_KEY, f"{item}: an included file must be a mapping")
                )
                continue
            merged_data, merged_raw = _merge(merged_data, sub_data), _merge(merged_raw, sub_raw)
            _merge_locations(merged_loc, sub_loc, merged_data)
        merged_data, merged_raw = _merge(merged_data, data), _merge(merged_raw, raw)
        _merge_locations(merged_loc, locations, data)
        return merged_data, merged_raw, merged_loc

    def _node(
        self,
        node: yaml.Node,
        path: PathKey,
        name: str,
        folder: Path,
        locations: dict[PathKey, Location],
        stack: tuple[Path, ...],
    ) -> tuple[Any, Any]:
        here = Location(name, node.start_mark.line + 1)
        locations[path] = here
        if node.tag == INCLUDE_TAG:
            return self._include_value(node, path, folder, locations, stack, here)
        if isinstance(node, yaml.MappingNode | yaml.SequenceNode):
            kind = "mapping" if isinstance(node, yaml.MappingNode) else "sequence"
            if node.tag not in _PLAIN_TAGS[kind]:
                self.problems.append(
                    Problem(
                        here,
                        field_name(path),
                        f"unsupported YAML tag {_tag_text(node.tag)!r} (only plain YAML and !include)",
                    )
                )
                return None, None
            key = id(node)
            if key in self._active:
                self.problems.append(
                    Problem(here, field_name(path), "a YAML alias refers to itself (its anchor is around it)")
                )
                return None, None
            if key in self._seen:
                self._alias_nodes += len(node.value)
                if self._alias_nodes > MAX_ALIAS_NODES:
                    raise _Refused(
                        f"YAML aliases expand to more than {MAX_ALIAS_NODES} values "
                        "(an alias bomb?); write the values out or use fewer aliases",
                        here,
                    )
            self._seen[key] = node
            self._active.add(key)
            try:
                return self._collection(node, path, name, folder, locations, stack, here)
            finally:
                self._active.discard(key)
        assert isinstance(node, yaml.ScalarNode)
        value = self._scalar(node, path, here)
        if isinstance(value, str):
            return self._interpolate(value, path, here), value
        return value, value

    def _collection(
        self,
        node: yaml.MappingNode | yaml.SequenceNode,
        path: PathKey,
        name: str,
        folder: Path,
        locations: dict[PathKey, Location],
        stack: tuple[Path, ...],
        here: Location,
    ) -> tuple[Any, Any]:
        if isinstance(node, yaml.MappingNode):
            try:
                self._constructor.flatten_mapping(node)  # YAML merge keys (<<)
            except yaml.YAMLError as exc:
                self.problems.append(Problem(here, field_name(path), f"bad merge key: {exc}"))
            data: dict[str, Any] = {}
            raw: dict[str, Any] = {}
            for key_node, value_node in node.value:
                key_loc = Location(name, key_node.start_mark.line + 1)
                if not isinstance(key_node, yaml.ScalarNode):
                    self.problems.append(Problem(key_loc, field_name(path), "keys must be plain text"))
                    continue
                key = self._scalar(key_node, path, key_loc)
                key = str(key) if key is not None else "null"
                if key in data:
                    first = locations.get((*path, key))
                    self.problems.append(
                        Problem(
                            key_loc,
                            field_name((*path, key)),
                            f"duplicate key (first defined at line {first.line if first else '?'})",
                        )
                    )
                value, value_raw = self._node(value_node, (*path, key), name, folder, locations, stack)
                locations[(*path, key)] = key_loc
                data[key], raw[key] = value, value_raw
            return data, raw
        items = [
            self._node(child, (*path, i), name, folder, locations, stack)
            for i, child in enumerate(node.value)
        ]
        return [d for d, _ in items], [r for _, r in items]

    def _scalar(self, node: yaml.ScalarNode, path: PathKey, here: Location) -> Any:
        try:
            value = self._constructor.construct_object(node, deep=True)
        except yaml.YAMLError:
            self.problems.append(
                Problem(
                    here,
                    field_name(path),
                    f"unsupported YAML tag {_tag_text(node.tag)!r} (only plain YAML and !include)",
                )
            )
            return None
        if isinstance(value, _dt.date | _dt.datetime):
            return value.isoformat()  # dates stay text, as written
        if isinstance(value, bytes):
            return value.decode("utf-8", "replace")
        return value

    def _include_value(
        self,
        node: yaml.Node,
        path: PathKey,
        folder: Path,
        locations: dict[PathKey, Location],
        stack: tuple[Path, ...],
        here: Location,
    ) -> tuple[Any, Any]:
        if not isinstance(node, yaml.ScalarNode) or not str(node.value).strip():
            self.problems.append(Problem(here, field_name(path), "!include takes a file name"))
            return None, None
        target = folder / str(node.value).strip()
        if target.suffix.lower() in (".yaml", ".yml"):
            before = len(self.problems)
            unset_before = set(self.unset)
            data, raw, sub = self.read(target, stack)
            found = self.unset - unset_before  # paths inside the included file: put them under ``path``
            self.unset = unset_before | {(*path, *p) for p in found}
            for i in range(before, len(self.problems)):
                if self.problems[i].location is None:
                    self.problems[i] = Problem(here, field_name(path), self.problems[i].message)
            for sub_path, loc in sub.items():
                locations[(*path, *sub_path)] = loc
            locations[path] = here
            return data, raw
        try:
            text = target.read_text(encoding="utf-8")
        except FileNotFoundError:
            self.problems.append(Problem(here, field_name(path), f"!include: file not found: {target}"))
            return None, None
        except (OSError, UnicodeDecodeError) as exc:
            self.problems.append(Problem(here, field_name(path), f"!include: cannot read {target}: {exc}"))
            return None, None
        self.files.append(str(target))
        return text, text

    def _interpolate(self, value: str, path: PathKey, here: Location) -> str:
        if "$" not in value:
            return value

        def replace(match: re.Match[str]) -> str:
            if match.group(0) == "$${":
                return "${"
            name, default = match.group(1), match.group(2)
            found = self.env.get(name)
            if found is None or (found == "" and default is not None):
                if default is None:
                    self.unset.add(path)
                    self.problems.append(
                        Problem(
                            here,
                            field_name(path),
                            f"environment variable {name} is not set "
                            f"(write ${{{name}:-default}} for a default)",
                        )
                    )
                    return ""
                return default
            if len(found) >= _MIN_SECRET:
                self.secrets.add(found)
            return found

        return _ENV.sub(replace, value)


def _merge(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        merged = dict(base)
        for key, value in over.items():
            merged[key] = _merge(base[key], value) if key in base else value
        return merged
    return over


def _merge_locations(target: dict[PathKey, Location], new: dict[PathKey, Location], new_data: Any) -> None:
    """Locations of merged data: a replaced (non-mapping) value takes all of its locations anew."""
    for path, loc in sorted(new.items(), key=lambda kv: len(kv[0])):
        node = new_data
        replaced = False
        for part in path:
            node = _child(node, part)
            if node is _MISSING:
                break
        if node is not _MISSING and not isinstance(node, dict):
            replaced = True
        if replaced:
            for old in [p for p in target if p[: len(path)] == path and len(p) > len(path)]:
                del target[old]
        target[path] = loc


def load_document(file: str | Path, *, env: Mapping[str, str] | None = None) -> Document:
    """Read ``file`` (with its includes); problems are collected, not raised."""
    reader = _Reader(os.environ if env is None else env)
    data, raw, locations = reader.read(Path(file))
    return Document(
        data=data,
        raw=raw,
        locations=locations,
        secrets=reader.secrets,
        files=reader.files,
        problems=reader.problems,
        unset=reader.unset,
    )


def read_document(path: str | Path, what: str) -> Document:
    """A file read with :func:`load_document`; ``what`` names it in the not-found error
    (``"run file"``); a :class:`SuiteError` lists its YAML problems."""
    file = Path(path)
    if not file.exists():
        raise ConfigError(f"{what} not found: {file}")
    doc = load_document(file)
    if doc.problems:
        raise SuiteError(doc.problems)
    return doc


M = TypeVar("M", bound=BaseModel)


def load_settings(path: str | Path, model: type[M], *, what: str, expected: str) -> tuple[M, Document]:
    """A settings file (a YAML mapping) validated as ``model``, with ``base_dir`` set to its
    folder; every problem is reported with its line. ``expected`` lists the main settings
    for the error about a file that is not a mapping."""
    file = Path(path)
    doc = read_document(file, what)
    data = doc.data
    if not isinstance(data, dict):
        raise ConfigError(f"{file}: expected a mapping of settings ({expected})")
    data.setdefault("base_dir", str(file.resolve().parent))
    try:
        return model.model_validate(data), doc
    except ValidationError as exc:
        raise SuiteError(doc.validation_problems(exc)) from None
    except ConfigError as exc:
        raise ConfigError(f"{file}: {exc}") from None
