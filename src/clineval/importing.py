"""Import an object named ``package.module:attr`` or ``path/to/file.py:attr``."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path
from typing import Any

from clineval.errors import ConfigError


def import_object(target: str, *, base_dir: Path | None = None, what: str = "object") -> Any:
    """The object ``target`` names; a :class:`ConfigError` says what went wrong otherwise.

    ``target`` is ``module.path:attr.sub`` or ``some/file.py:attr``; a relative file path is
    taken from ``base_dir`` (the folder of the config file that names it) when given.
    """
    module_part, sep, attr_path = target.rpartition(":")
    if not sep or not module_part or not attr_path:
        raise ConfigError(f"{what} {target!r}: expected 'module.path:name' or 'file.py:name'")
    if module_part.endswith(".py"):
        module = _import_file(module_part, base_dir, what, target)
    else:
        try:
            module = _import_module(module_part, base_dir)
        except ModuleNotFoundError as exc:
            raise ConfigError(
                f"{what} {target!r}: module {module_part!r} cannot be imported ({exc}); "
                "is it installed or on PYTHONPATH?"
            ) from None
        except Exception as exc:
            raise ConfigError(
                f"{what} {target!r}: importing {module_part!r} failed: {type(exc).__name__}: {exc}"
            ) from exc
    obj: Any = module
    for part in attr_path.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ConfigError(f"{what} {target!r}: {module_part!r} has no attribute {attr_path!r}") from None
    return obj


def _import_module(name: str, base_dir: Path | None) -> Any:
    """``importlib.import_module``; a module not found is looked for again from the config
    file's folder and the working directory (as ``python -m`` would find it)."""
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:
        if exc.name is None or not name.startswith(exc.name):
            raise  # the module exists but something it imports does not
        folders = [str(p) for p in (base_dir, Path.cwd()) if p is not None and str(p) not in sys.path]
        if not folders:
            raise
        sys.path[:0] = folders
        try:
            return importlib.import_module(name)
        finally:
            for folder in folders:
                if folder in sys.path:
                    sys.path.remove(folder)


def _import_file(path_text: str, base_dir: Path | None, what: str, target: str) -> Any:
    path = Path(path_text)
    if not path.is_absolute() and base_dir is not None and (base_dir / path).exists():
        path = base_dir / path
    path = path.resolve()
    if not path.exists():
        raise ConfigError(f"{what} {target!r}: file {path} does not exist")
    name = f"clineval_user_{path.stem}_{abs(hash(str(path))):x}"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{what} {target!r}: {path} is not a Python file")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    # Let the file import its siblings, as it would when run as a script.
    folder = str(path.parent)
    added = folder not in sys.path
    if added:
        sys.path.insert(0, folder)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise ConfigError(f"{what} {target!r}: running {path} failed: {type(exc).__name__}: {exc}") from exc
    finally:
        if added:
            sys.path.remove(folder)
    return module


def build_object(
    target: str, args: dict[str, Any], *, base_dir: Path | None = None, what: str = "object"
) -> Any:
    """The object ``target`` names, created with ``args`` when it is a class, or with ``args``
    bound (``functools.partial``) when it is a function; a :class:`ConfigError` otherwise."""
    import inspect
    from functools import partial

    obj = import_object(target, base_dir=base_dir, what=what)
    if inspect.isclass(obj):
        try:
            return obj(**args)
        except TypeError as exc:
            raise ConfigError(f"{what} {target!r}: cannot be created with {args}: {exc}") from None
    if args:
        return partial(obj, **args)
    return obj
