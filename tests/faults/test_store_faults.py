"""Fault injection on the run store: read-only, full and damaged stores, through the real CLI.

* **Read-only**: a store file that cannot be written, in a folder that cannot be written
  (with and without ``-wal``/``-shm`` files left over, one of them holding committed runs
  not yet copied into the main file), is read by ``runs``, ``show``, ``export`` and
  ``compare``. A working folder, store or output file that cannot be written gives one
  line naming the path and "permission denied", never a traceback.
  Permissions are enforced for root too: the commands then run under ``setpriv`` without
  the capabilities that let root ignore file modes.
* **Disk full**: a store that fills up mid-run (a size-limited store through the
  ``CLINEVAL_TEST_STORE_MAX_PAGES`` hook, and, when the tests run as root, a real tmpfs)
  says "disk full" with the store's path, keeps every committed result, marks the run
  ``failed``, prints the resume command and exits 2; the resume then completes the run
  with every (case, metric) exactly once and the aggregates of an uninterrupted run.
* **Damaged**: a store with overwritten pages is refused by every command with
  "the run store is damaged", and ``run`` leaves the file byte for byte as it was; a store
  from a newer clineval (a newer ``schema_version``) is refused, with "upgrade".
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from tests.clirun import clineval

from clineval.errors import StoreAccessError, StoreDamagedError, StoreFullError, StoreVersionError
from clineval.model import ResultRecord, Score
from clineval.store import sqlite as store_module
from clineval.store.sqlite import SCHEMA_VERSION, RunStore

METRICS = ("exact_match", "token_f1")
_DROP_ROOT = ["--inh-caps=-dac_override,-dac_read_search", "--bounding-set=-dac_override,-dac_read_search"]


# helpers ----------------------------------------------------------------------------------


def _rows(n: int) -> list[dict[str, object]]:
    return [
        {
            "id": f"case-{i:04d}",
            "input": f"Question {i}: what dose?",
            "response": f"the answer is {i % 7} and the dose is {i % 3} mg",
            "reference": "the answer is 1 and the dose is 2 mg",
            "metadata": {"ward": "a" if i % 2 else "b"},
        }
        for i in range(n)
    ]


def _write_data(path: Path, n: int) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in _rows(n)), encoding="utf-8")
    return path


def _env(**extra: str) -> dict[str, str]:
    return {"PYTHONUNBUFFERED": "1", **extra}


def _cli(
    *args: str, cwd: Path, prefix: Sequence[str] = (), env: dict[str, str] | None = None, timeout: float = 180
) -> subprocess.CompletedProcess[str]:
    return clineval(*args, cwd=cwd, env=env or _env(), timeout=timeout, columns=400, prefix=prefix)


def _cli_together(
    calls: Sequence[Sequence[str]], cwd: Path, prefix: Sequence[str] = ()
) -> list[subprocess.CompletedProcess[str]]:
    """Commands that are independent (each is refused; none writes), two at a time: the cores."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        return list(pool.map(lambda args: _cli(*args, cwd=cwd, prefix=prefix), calls))


def _one_line_error(proc: subprocess.CompletedProcess[str], *needles: str, code: int = 2) -> str:
    """Exit ``code``, no traceback, an ``error:`` line holding every needle (case-insensitive)."""
    detail = f"exit {proc.returncode}\nstdout:\n{proc.stdout[-2000:]}\nstderr:\n{proc.stderr[-4000:]}"
    assert "Traceback" not in proc.stderr, detail
    assert "cannot rollback" not in proc.stderr, detail
    assert proc.returncode == code, detail
    lines = [line for line in proc.stderr.splitlines() if line.startswith("error: ")]
    assert lines, detail
    for needle in needles:
        assert needle.lower() in lines[0].lower(), detail
    return proc.stderr


def _ok(proc: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    detail = f"exit {proc.returncode}\nstdout:\n{proc.stdout[-2000:]}\nstderr:\n{proc.stderr[-4000:]}"
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, detail
    return proc


def _make_store(store: Path, n: int, name: str, metrics: Sequence[str] = METRICS) -> str:
    """A run of ``n`` cases stored (in-process, cleanly closed); its id."""
    from clineval.api import evaluate

    with RunStore(store) as run_store:
        result = evaluate(data=_rows(n), metrics=list(metrics), store=run_store, name=name, progress=False)
    return result.run.id


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _pairs(store: Path, run_id: str) -> list[tuple[str, str]]:
    with contextlib.closing(sqlite3.connect(store)) as conn:
        return conn.execute(
            "SELECT case_id, metric FROM results WHERE run_id = ? ORDER BY case_id, metric", (run_id,)
        ).fetchall()


def _status(store: Path, run_id: str) -> tuple[str, str | None]:
    with contextlib.closing(sqlite3.connect(store)) as conn:
        row = conn.execute(
            "SELECT status, json_extract(record, '$.error') FROM runs WHERE id = ?", (run_id,)
        ).fetchone()
    return row[0], row[1]


def _values(store: Path, run_id: str) -> list[tuple[str, str, str, float | None]]:
    with contextlib.closing(sqlite3.connect(store)) as conn:
        return conn.execute(
            "SELECT case_id, metric, status, value FROM results WHERE run_id = ? ORDER BY case_id, metric",
            (run_id,),
        ).fetchall()


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A folder other users can enter (pytest's tmp_path may sit under a private folder)."""
    base = Path(os.environ.get("TMPDIR", "/tmp")) / f"clineval-store-faults-{uuid.uuid4().hex[:8]}"
    base.mkdir(mode=0o755)
    yield base
    for folder, dirs, _ in os.walk(base):
        for name in dirs:
            os.chmod(Path(folder) / name, 0o755)
    os.chmod(base, 0o755)
    shutil.rmtree(base, ignore_errors=True)


@pytest.fixture(scope="module")
def restricted() -> list[str]:
    """The command prefix under which file modes are enforced (empty when not root)."""
    if os.geteuid() != 0:
        return []
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        pytest.skip("running as root without setpriv: file modes cannot be enforced")
    probe = Path(os.environ.get("TMPDIR", "/tmp")) / f"clineval-probe-{uuid.uuid4().hex[:8]}"
    probe.mkdir(mode=0o555)
    try:
        touched = subprocess.run([setpriv, *_DROP_ROOT, "touch", str(probe / "x")], capture_output=True)
    finally:
        shutil.rmtree(probe, ignore_errors=True)
    if touched.returncode == 0:
        pytest.skip("setpriv cannot drop root's file-mode override here")
    return [setpriv, *_DROP_ROOT]


def _read_only(*paths: Path) -> None:
    for path in paths:
        os.chmod(path, 0o555 if path.is_dir() else 0o444)


# read-only stores and folders -------------------------------------------------------------

_LEAVE_WAL = """
import os, sqlite3, sys
from clineval.api import evaluate
rows = [{"id": f"late-{i}", "input": "q", "response": "the answer is 1", "reference": "the answer is 1"}
        for i in range(5)]
result = evaluate(data=rows, metrics=["exact_match"], store=sys.argv[1], name="in-wal", progress=False)
print(result.run.id, flush=True)
os._exit(0)  # no close, no checkpoint: the second run is only in the -wal file
"""

_LEAVE_EMPTY_WAL = """
import os, sqlite3, sys
conn = sqlite3.connect(sys.argv[1])
conn.execute("SELECT COUNT(*) FROM runs").fetchone()
os._exit(0)  # an empty -wal and a -shm left beside the store
"""


@pytest.mark.parametrize("leftover", ["none", "empty-wal", "wal-with-runs"])
def test_read_only_store_in_read_only_folder_is_readable(
    open_dir: Path, restricted: list[str], leftover: str
) -> None:
    store = open_dir / "runs.db"
    run_a = _make_store(store, 12, "first")
    run_ids = [run_a]
    if leftover == "wal-with-runs":
        made = subprocess.run(
            [sys.executable, "-c", _LEAVE_WAL, str(store)],
            check=True,
            timeout=120,
            capture_output=True,
            text=True,
        )
        run_ids.append(made.stdout.split()[-1])
        assert Path(f"{store}-wal").stat().st_size > 0
        with contextlib.closing(sqlite3.connect(f"file:{store}?mode=ro&immutable=1", uri=True)) as conn:
            assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 1, "not only in the WAL"
    elif leftover == "empty-wal":
        subprocess.run([sys.executable, "-c", _LEAVE_EMPTY_WAL, str(store)], check=True, timeout=60)
        assert Path(f"{store}-shm").exists() and Path(f"{store}-wal").stat().st_size == 0
    else:
        assert not Path(f"{store}-wal").exists()
    before = {p.name: _sha(p) for p in open_dir.iterdir()}
    _read_only(*open_dir.iterdir(), open_dir)

    # The newest run (with runs left in the -wal file: one found only there) is shown.
    shown = _ok(_cli("show", run_ids[-1], "--store", str(store), cwd=open_dir, prefix=restricted))
    assert "exact_match" in shown.stdout and run_ids[-1] in shown.stdout
    if leftover != "empty-wal":
        listed = _ok(_cli("runs", "--store", str(store), cwd=open_dir, prefix=restricted))
        assert all(run_id in listed.stdout for run_id in run_ids)
    if leftover == "none":
        exported = _ok(
            _cli("export", run_a, "-o", "-", "--store", str(store), cwd=open_dir, prefix=restricted)
        )
        assert len(exported.stdout.strip().splitlines()) == 12
        _ok(_cli("compare", run_a, run_a, "--store", str(store), cwd=open_dir, prefix=restricted))
    # Reading wrote nothing: no new file, every file's bytes unchanged.
    assert {p.name: _sha(p) for p in open_dir.iterdir()} == before


def test_wal_without_shm_in_read_only_folder_says_why(open_dir: Path, restricted: list[str]) -> None:
    """The one case SQLite cannot read: committed runs in a -wal file with no -shm file."""
    store = open_dir / "runs.db"
    _make_store(store, 3, "first")
    subprocess.run(
        [sys.executable, "-c", _LEAVE_WAL, str(store)], check=True, timeout=120, capture_output=True
    )
    Path(f"{store}-shm").unlink()
    _read_only(*open_dir.iterdir(), open_dir)
    proc = _cli("runs", "--store", str(store), cwd=open_dir, prefix=restricted)
    _one_line_error(proc, str(store), "cannot read the run store", "-shm", "permission denied")


def test_unwritable_places_give_one_line_errors(open_dir: Path, restricted: list[str]) -> None:
    data = _write_data(open_dir / "cases.jsonl", 6)
    store = open_dir / "runs.db"
    run_id = _make_store(store, 6, "ro")
    out_dir = open_dir / "reports"
    out_dir.mkdir()
    _read_only(data, store, out_dir, open_dir)

    store_ = str(store)
    # each command, and what its one-line error names
    cases: list[tuple[tuple[str, ...], tuple[str, ...]]] = [
        # The default store .clineval/ cannot be created in a read-only working folder.
        (
            ("run", "--data", str(data), "-m", "exact_match", "-q"),
            (".clineval", "permission denied", "--store"),
        ),
        # A read-only store file.
        (
            ("run", "--data", str(data), "-m", "exact_match", "-q", "--store", str(store)),
            (str(store), "permission denied", "--store"),
        ),
        # Outputs that cannot be written: the export's default file, --json, --junit.
        (("export", run_id, "--store", str(store)), (f"{run_id}.jsonl", "permission denied", "-o")),
        (
            ("compare", run_id, run_id, "--json", str(out_dir / "c.json"), "--store", str(store)),
            ("c.json", "permission denied"),
        ),
        (
            (
                "show",
                run_id,
                "--fail-under",
                "exact_match=0",
                "--junit",
                str(out_dir / "j.xml"),
                "--store",
                store_,
            ),
            ("j.xml", "permission denied"),
        ),
        # Other commands' output files: the reference facts of a run, generated radiology records.
        (
            ("facts", run_id, "--metric", "token_f1", "-o", str(out_dir / "f.jsonl"), "--store", str(store)),
            ("f.jsonl", "permission denied"),
        ),
        (
            ("radbench", "generate", "-n", "2", "-o", str(out_dir / "r.jsonl")),
            ("r.jsonl", "permission denied"),
        ),
    ]
    done = _cli_together([args for args, _ in cases], cwd=open_dir, prefix=restricted)
    for (_, needles), proc in zip(cases, done, strict=True):
        _one_line_error(proc, *needles)
    assert sorted(p.name for p in out_dir.iterdir()) == []


def test_readonly_store_refuses_writes_in_process(tmp_path: Path) -> None:
    store = tmp_path / "s.db"
    _make_store(store, 3, "x")
    record = ResultRecord(run_id="r", case_id="c", metric="m", score=Score(value=1.0), duration_s=0.0)
    with RunStore(store, readonly=True) as run_store, pytest.raises(StoreAccessError, match="reading only"):
        run_store.save_result(record)


# disk full ---------------------------------------------------------------------------------


# A metric that takes a few milliseconds, so that results reach the store in many small
# transactions (as with real metrics) and the disk fills up in the middle of the run.
PACED = """
import time


def paced_match(response: str, reference: str) -> float:
    time.sleep(0.001)
    return float(response.split()[3] == reference.split()[3])
"""
FULL_METRICS = ("exact_match", "token_f1", "paced_match")


def _full_metrics(tmp: Path) -> list[str]:
    (tmp / "pace.py").write_text(PACED, encoding="utf-8")
    return ["exact_match", "token_f1", f"{tmp / 'pace.py'}:paced_match"]


def _full_run(tmp: Path, store: Path, n: int, env: dict[str, str]) -> tuple[str, str]:
    """A CLI run that fills its store; the run id and stderr (after the common checks)."""
    data = _write_data(tmp / "cases.jsonl", n)
    proc = _cli(
        "run",
        "--data",
        str(data),
        *(f"-m{m}" for m in _full_metrics(tmp)),
        "-q",
        "--store",
        str(store),
        cwd=tmp,
        env=env,
    )
    stderr = _one_line_error(proc, "disk full", str(store))
    assert "--resume" in stderr and "run is marked failed" in stderr, stderr
    run_id = stderr.split("clineval run --resume ", 1)[1].split()[0]
    assert f"clineval run --resume {run_id} --store {store}" in " ".join(stderr.split())
    return run_id, stderr


def _check_resumed(tmp: Path, store: Path, run_id: str, n: int) -> None:
    status, error = _status(store, run_id)
    assert status == "failed" and error and "disk full" in error
    kept = _pairs(store, run_id)
    assert 0 < len(kept) < n * len(FULL_METRICS), "some results kept, not all"
    _ok(_cli("run", "--resume", run_id, "-q", "--store", str(store), cwd=tmp))
    pairs = _pairs(store, run_id)
    assert pairs == sorted({(f"case-{i:04d}", m) for i in range(n) for m in FULL_METRICS})  # each once
    assert set(kept) <= set(pairs)
    assert _status(store, run_id)[0] == "completed"
    reference = tmp / "reference.db"
    reference_id = _make_store(reference, n, "uninterrupted", _full_metrics(tmp))
    assert _values(store, run_id) == _values(reference, reference_id)


def _mount_tmpfs(mount: Path) -> bool:
    """A 900 KiB tmpfs at ``mount`` (root only); False when it cannot be made here."""
    if os.geteuid() != 0 or shutil.which("mount") is None:
        return False
    mount.mkdir()
    made = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=900k", "tmpfs", str(mount)], capture_output=True
    )
    return made.returncode == 0


def _disk_full_then_resume(base: Path, *, tmpfs: bool) -> None:
    if tmpfs:  # a real file system that fills up
        mount = base / "disk"
        n, store, env = 600, mount / "runs.db", _env()
    else:  # a store limited to 150 pages (the test hook)
        n, store, env = 400, base / "small.db", _env(CLINEVAL_TEST_STORE_MAX_PAGES="150")
    try:
        run_id, _ = _full_run(base, store, n, env)
        assert not Path(f"{store}-reserve").exists()
        if tmpfs:  # free space: a larger disk for the same files
            subprocess.run(["mount", "-o", "remount,size=64m", str(mount)], check=True)
        _check_resumed(base, store, run_id, n)  # without the page limit
    finally:
        if tmpfs:
            subprocess.run(["umount", "-l", str(mount)], check=False)


def test_disk_full_then_resume(open_dir: Path) -> None:
    """On a real tmpfs when the tests run as root and can mount one, else on a size-limited store."""
    _disk_full_then_resume(open_dir, tmpfs=_mount_tmpfs(open_dir / "disk"))


@pytest.mark.slow
def test_disk_full_size_limited_store(open_dir: Path) -> None:
    """The size-limited variant, also where a tmpfs is used by default."""
    _disk_full_then_resume(open_dir, tmpfs=False)


def test_disk_full_before_the_run_starts(tmp_path: Path) -> None:
    store = tmp_path / "tiny.db"
    data = _write_data(tmp_path / "cases.jsonl", 300)
    proc = _cli(
        "run",
        "--data",
        str(data),
        "-m",
        "exact_match",
        "-q",
        "--store",
        str(store),
        cwd=tmp_path,
        env=_env(CLINEVAL_TEST_STORE_MAX_PAGES="12"),
    )
    _one_line_error(proc, "disk full", str(store))
    with contextlib.closing(sqlite3.connect(store)) as conn:
        assert conn.execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0  # no half-made run


def test_write_batch_reports_full_not_rollback(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    RunStore(tmp_path / "s.db").close()
    with contextlib.closing(sqlite3.connect(tmp_path / "s.db")) as conn:
        pages = conn.execute("PRAGMA page_count").fetchone()[0]
    monkeypatch.setenv("CLINEVAL_TEST_STORE_MAX_PAGES", str(pages + 2))
    store = RunStore(tmp_path / "s.db")
    store._conn.execute("PRAGMA foreign_keys=OFF")  # results without a run: only the size matters here
    results = [
        ResultRecord(
            run_id="r",
            case_id=f"c{i}",
            metric="m",
            score=Score(value=1.0, explanation="x" * 400),
            duration_s=0.0,
        )
        for i in range(200)
    ]
    with pytest.raises(StoreFullError, match="disk full"):
        store.write_batch([], results)
    assert store.count_results("r") == 0
    store.close()


# damaged and newer stores -----------------------------------------------------------------


def _damage(store: Path) -> None:
    """Overwrite the middle of the file and the root page of the cases table (a store also
    holds a search index and other tables, so the middle alone may miss what a command reads)."""
    with contextlib.closing(sqlite3.connect(store)) as conn:
        page_size = conn.execute("PRAGMA page_size").fetchone()[0]
        root = conn.execute(
            "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = 'cases'"
        ).fetchone()[0]
    size = store.stat().st_size
    with store.open("r+b") as handle:
        for offset in (size // 2, (root - 1) * page_size):
            handle.seek(offset)
            handle.write(b"\xde\xad\xbe\xef" * (page_size // 4))


def test_damaged_store_is_refused_by_every_command(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    run_id = _make_store(store, 300, "big")
    _damage(store)
    digest = _sha(store)
    data = _write_data(tmp_path / "cases.jsonl", 3)
    commands = (
        ("runs",),
        ("show", run_id),
        ("export", run_id, "-o", str(tmp_path / "x.jsonl")),
        ("compare", run_id, run_id),
        ("run", "--data", str(data), "-m", "exact_match", "-q"),
    )
    for proc in _cli_together([(*args, "--store", str(store)) for args in commands], cwd=tmp_path):
        _one_line_error(proc, f"{store}: the run store is damaged (")
    assert _sha(store) == digest, "run wrote into the damaged store"
    assert not (tmp_path / "x.jsonl").exists()


def test_store_from_a_newer_clineval_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "runs.db"
    _make_store(store, 3, "x")
    with contextlib.closing(sqlite3.connect(store)) as conn, conn:
        conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", (str(SCHEMA_VERSION + 1),))
    digest = _sha(store)
    data = _write_data(tmp_path / "cases.jsonl", 3)
    for args in (("runs",), ("run", "--data", str(data), "-m", "exact_match", "-q")):
        proc = _cli(*args, "--store", str(store), cwd=tmp_path)
        _one_line_error(proc, "newer clineval", "upgrade")
    assert _sha(store) == digest


def test_older_schema_versions_are_upgraded_or_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = tmp_path / "runs.db"
    _make_store(store, 3, "x")
    with contextlib.closing(sqlite3.connect(store)) as conn, conn:
        conn.execute("UPDATE meta SET value = '0' WHERE key = 'schema_version'")
    with pytest.raises(StoreVersionError, match="unknown store schema version 0"):
        RunStore(store)
    monkeypatch.setattr(store_module, "_UPGRADES", {0: "CREATE TABLE upgraded (x INTEGER);"})
    with pytest.raises(StoreVersionError, match="older layout"):
        RunStore(store, readonly=True)
    RunStore(store).close()
    with contextlib.closing(sqlite3.connect(store)) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == "1"
        assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'upgraded'").fetchone()
    RunStore(store, readonly=True).close()


def test_damage_found_after_the_quick_check_is_still_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The integrity check has a time budget; damage it did not reach is reported when read."""
    store = tmp_path / "runs.db"
    run_id = _make_store(store, 300, "big")
    _damage(store)
    monkeypatch.setattr(store_module, "_quick_check", lambda conn, path: None)
    with RunStore(store, readonly=True) as run_store, pytest.raises(StoreDamagedError, match="damaged"):
        run_store.list_runs()
        run_store.load_cases(run_id)
        run_store.load_outputs(run_id)
        run_store.load_results(run_id)


def test_simulation_out_folder_that_cannot_be_written_is_refused_before_any_trial(tmp_path: Path) -> None:
    """Conversations could not be saved: one line naming the folder, before a trial runs
    (before, every trial failed with 'the case holds no conversation')."""
    example = Path(__file__).resolve().parents[2] / "examples" / "tumor_board"
    work = tmp_path / "tb"
    shutil.copytree(example, work)
    (work / "afile").write_text("not a folder", encoding="utf-8")
    settings = (work / "simulate.yaml").read_text(encoding="utf-8")
    assert "\nout: saved\n" in settings
    (work / "simulate.yaml").write_text(
        settings.replace("\nout: saved\n", "\nout: afile/sub\n"), encoding="utf-8"
    )
    store = tmp_path / "s.db"
    proc = _cli("conversations", "simulate", "simulate.yaml", "--store", str(store), "-q", cwd=work)
    _one_line_error(proc, "simulation out folder", "afile", "cannot write")
    assert not store.exists() or not sqlite3.connect(store).execute("SELECT COUNT(*) FROM runs").fetchone()[0]
