"""Plugins: feature packages register their metrics and dataset folder formats themselves.

The registries import no feature package (tests/structure/test_import_graph.py); these
tests check that the registration still happens when it is needed, in a fresh process,
that folder formats are chosen and refused with clear messages, and that an installed
distribution's ``clineval.plugins`` entry point is called (a real ``.dist-info`` folder on
``sys.path``, found by importlib.metadata).
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from clineval import plugins
from clineval.datasets import formats, load_dataset
from clineval.datasets.dataset import Dataset
from clineval.errors import ConfigError, DatasetError
from clineval.model import Case

CONVERSATION = {
    "id": "c1",
    "messages": [
        {"role": "user", "speaker": "user", "text": "Orchestrator: summarise patient_4"},
        {"role": "assistant", "speaker": "PatientHistory", "text": "Timeline: 2019 GBM."},
    ],
}


def marker_folder(path: Path) -> Dataset:
    """A folder format for the tests: one case per file, named after it."""
    return Dataset(cases=[Case(id=p.name, input="x") for p in sorted(path.iterdir())], source=str(path))


def _python(code: str) -> str:
    proc = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_a_fresh_process_finds_conversation_metrics_and_folders(tmp_path: Path) -> None:
    (tmp_path / "a.jsonl").write_text(json.dumps(CONVERSATION) + "\n", encoding="utf-8")
    out = _python(
        f"""
        import sys
        from clineval.datasets import load_dataset
        from clineval.metrics.registry import get_entry
        before = "clineval.conversations" in sys.modules
        ids = [case.id for case in load_dataset({str(tmp_path)!r})]
        print(before, ids, get_entry("agent_selection").name)
        """
    )
    # the loader and the registry did not import the package up front, and still found it
    assert out == "False ['c1'] agent_selection"


def test_registering_a_folder_format_twice(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(formats, "_FOLDER_FORMATS", dict(formats._FOLDER_FORMATS))
    target = f"{__name__}:marker_folder"
    formats.register_folder_format("markers", target, "one case per file")
    formats.register_folder_format("markers", target, "one case per file")  # the same: fine
    with pytest.raises(ConfigError, match="'markers' is already registered"):
        formats.register_folder_format("markers", "elsewhere:load", "another")


def test_choosing_a_folder_format(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(formats, "_FOLDER_FORMATS", dict(formats._FOLDER_FORMATS))
    formats.register_folder_format("markers", f"{__name__}:marker_folder", "one case per file")
    (tmp_path / "one.txt").write_text("1")
    (tmp_path / "two.txt").write_text("2")

    assert [c.id for c in load_dataset(tmp_path, format="markers")] == ["one.txt", "two.txt"]
    with pytest.raises(DatasetError) as two:
        load_dataset(tmp_path)
    assert str(two.value) == (
        f"{tmp_path}: is a folder; say which format reads it (format=...): "
        "conversations (a folder of saved conversations, one case per conversation), "
        "markers (one case per file)"
    )
    with pytest.raises(DatasetError, match=r"cannot be read as 'csv'; folder formats: conversations"):
        load_dataset(tmp_path, format="csv")


def _install_plugin(root: Path, body: str) -> None:
    """A distribution 'demo-plugin' with a 'clineval.plugins' entry point, as pip would leave it."""
    (root / "demo_clineval_plugin.py").write_text(textwrap.dedent(body), encoding="utf-8")
    info = root / "demo_plugin-1.0.dist-info"
    info.mkdir()
    metadata = "Metadata-Version: 2.1\nName: demo-plugin\nVersion: 1.0\n"
    (info / "METADATA").write_text(metadata, encoding="utf-8")
    (info / "entry_points.txt").write_text(
        "[clineval.plugins]\ndemo = demo_clineval_plugin:register\n", encoding="utf-8"
    )


def test_an_installed_entry_point_plugin_is_called(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _install_plugin(
        tmp_path,
        """
        from clineval.datasets.formats import register_folder_format

        def register():
            register_folder_format("demo", "tests.structure.test_plugins:marker_folder", "demo folders")
        """,
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(formats, "_FOLDER_FORMATS", dict(formats._FOLDER_FORMATS))
    monkeypatch.setattr(plugins, "_loaded", False)
    monkeypatch.delitem(sys.modules, "demo_clineval_plugin", raising=False)

    assert [f.name for f in formats.folder_formats()] == ["conversations", "demo"]
    plugins.load_plugins()  # loaded once: calling again registers nothing new and raises nothing
    assert [f.name for f in formats.folder_formats()] == ["conversations", "demo"]


def test_a_broken_plugin_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _install_plugin(tmp_path, "def register():\n    raise RuntimeError('no licence file')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(plugins, "_loaded", False)
    monkeypatch.delitem(sys.modules, "demo_clineval_plugin", raising=False)

    with pytest.raises(ConfigError) as error:
        plugins.load_plugins()
    assert str(error.value) == (
        "plugin 'demo' (demo_clineval_plugin:register, entry point group 'clineval.plugins') "
        "failed to load: RuntimeError: no licence file"
    )
    assert plugins._loaded is False  # tried again next time, not half-loaded for good
