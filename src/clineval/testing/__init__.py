"""Test helpers: a scripted OpenAI-compatible server (needs ``pip install 'clineval[test]'``).

The server module is imported on first use, so that ``python -m clineval.testing.server``
does not find it already imported, and so that ``import clineval.testing`` works without
the test extra (``from clineval.testing import ScriptedServer`` then raises ImportError).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from clineval.testing.server import ScriptedServer, ScriptError

__all__ = ["ScriptError", "ScriptedServer"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from clineval.testing import server

        return getattr(server, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
