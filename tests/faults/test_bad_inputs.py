"""Bad dataset files: stray quotes, other encodings, deep nesting.

Each test is a fault a user can make by mistake; the loader must report it with the
file and line (no row silently dropped, no traceback), and the command line must exit 2
with one clear line.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from tests.clirun import clineval

from clineval.datasets import load_dataset
from clineval.errors import DatasetError

HEADER = "id,input,reference"


def _rows(n: int = 10) -> list[str]:
    return [HEADER] + [f"{i},question {i},answer {i}" for i in range(1, n + 1)]


# -- item 3: a stray quote in a CSV file ---------------------------------------------------


def test_csv_stray_quote_that_never_closes_is_reported_with_its_line(tmp_path: Path) -> None:
    rows = _rows()
    rows[3] = '3,"question 3,answer 3'  # physical line 4
    path = tmp_path / "stray.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    message = str(info.value)
    assert f"{path}:4: an unmatched quote" in message
    assert "line 11" in message or "end of the file" in message


def test_csv_stray_quote_closed_by_a_later_quoted_cell_is_reported(tmp_path: Path) -> None:
    rows = _rows()
    rows[2] = '2,"question 2,answer 2'  # line 3: opens a quoted cell
    rows[6] = '6,"question 6",answer 6'  # line 7: its quote "closes" the stray one
    path = tmp_path / "stray.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"stray\.csv:3: an unmatched quote"):
        load_dataset(path)


def test_csv_two_stray_quotes_that_balance_are_still_found(tmp_path: Path) -> None:
    rows = _rows()
    rows[2] = '2,"question 2,answer 2'  # line 3 opens ...
    rows[5] = '5,question 5,answer 5"'  # ... line 6 closes: rows 3-5 would vanish into one cell
    path = tmp_path / "stray.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=r"stray\.csv:3: an unmatched quote"):
        load_dataset(path)


def test_csv_legitimate_multi_line_quoted_cells_still_load(tmp_path: Path) -> None:
    text = (
        "id,input,reference\n"
        '1,"Summarise the note:\nPatient is stable, afebrile, eating well.\nPlan: discharge",'
        '"Stable; discharge."\n'
        '2,"Two paragraphs.\n\nSecond, with ""quotes"", and commas, here.",ok\n'
        "3,plain,row\n"
    )
    path = tmp_path / "notes.csv"
    path.write_text(text, encoding="utf-8")
    cases = load_dataset(path).cases
    assert [c.id for c in cases] == ["1", "2", "3"]
    assert cases[0].input == "Summarise the note:\nPatient is stable, afebrile, eating well.\nPlan: discharge"
    assert cases[1].input == 'Two paragraphs.\n\nSecond, with "quotes", and commas, here.'


def test_csv_multi_line_cells_with_comma_rich_lines_are_not_mistaken_for_rows(tmp_path: Path) -> None:
    text = (
        "id,input,reference\n"
        '1,"Vitals:\nafebrile,stable,eating well\nT,HR,BP\n10mg,daily,oral",ok\n'
        "2,plain,row\n"
    )
    path = tmp_path / "notes.csv"
    path.write_text(text, encoding="utf-8")
    cases = load_dataset(path).cases
    assert [c.id for c in cases] == ["1", "2"]
    assert cases[0].input.endswith("10mg,daily,oral")


def test_csv_stray_quote_on_the_command_line_exits_2_without_losing_rows(tmp_path: Path) -> None:
    rows = _rows()
    rows[3] = '3,"question 3,answer 3'
    (tmp_path / "stray.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    proc = clineval("run", "--data", "stray.csv", "-m", "token_f1", "-q", "--store", "s.db", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "stray.csv:4: an unmatched quote" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert "3 cases" not in proc.stdout


# -- item 6: other encodings, a BOM, deep nesting ------------------------------------------


def test_cp1252_csv_reports_line_column_and_byte(tmp_path: Path) -> None:
    path = tmp_path / "excel.csv"
    path.write_bytes("id,input\n1,plain\n2,the patient\u2019s dose\n".encode("cp1252"))
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value) == (
        f"{path}:3:14: not valid UTF-8 (byte 0x92); pass --encoding cp1252 (or latin-1) "
        "if the file uses another encoding"
    )


def test_cp1252_csv_loads_with_the_encoding(tmp_path: Path) -> None:
    path = tmp_path / "excel.csv"
    path.write_bytes("id,input\n1,plain\n2,the patient\u2019s dose\n".encode("cp1252"))
    cases = load_dataset(path, encoding="cp1252").cases
    assert cases[1].input == "the patient\u2019s dose"


def test_evaluate_takes_the_encoding(tmp_path: Path) -> None:
    from clineval import evaluate
    from clineval.errors import ConfigError

    path = tmp_path / "excel.csv"
    path.write_bytes("id,response,reference\n1,caf\u00e9,caf\u00e9\n".encode("cp1252"))
    result = evaluate(path, ["exact_match"], encoding="cp1252", store=None, progress=False)
    assert [r.score.value for r in result.results] == [1.0]
    with pytest.raises(ConfigError, match="encoding"):
        evaluate(path, ["exact_match"], encoding="no-such-codec", store=None, progress=False)


def test_latin1_jsonl_reports_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'{"id": "a", "input": "ok"}\n{"id": "b", "input": "caf\xe9"}\n')
    with pytest.raises(DatasetError, match=r"cases\.jsonl:2:26: not valid UTF-8 \(byte 0xe9\)"):
        load_dataset(path)
    assert load_dataset(path, encoding="latin-1").cases[1].input == "caf\u00e9"


def test_utf8_bom_just_works_in_every_format(tmp_path: Path) -> None:
    bom = "\ufeff"
    (tmp_path / "a.csv").write_text(bom + "id,input\n1,x\n", encoding="utf-8")
    (tmp_path / "a.jsonl").write_text(bom + '{"id": "1", "input": "x"}\n', encoding="utf-8")
    (tmp_path / "a.json").write_text(bom + '[{"id": "1", "input": "x"}]', encoding="utf-8")
    for name in ("a.csv", "a.jsonl", "a.json"):
        assert load_dataset(tmp_path / name).cases[0].input == "x"


def test_unknown_encoding_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "a.csv").write_text("id,input\n1,x\n", encoding="utf-8")
    with pytest.raises(DatasetError, match="unknown encoding 'klingon'"):
        load_dataset(tmp_path / "a.csv", encoding="klingon")


@pytest.mark.parametrize("name", ["deep.json", "deep.jsonl"])
def test_deeply_nested_json_is_a_clear_error(tmp_path: Path, name: str) -> None:
    path = tmp_path / name
    path.write_text("[" * 100_000 + "\n", encoding="utf-8")
    with pytest.raises(DatasetError, match=rf"{name}:1: .*nested too deeply"):
        load_dataset(path)


def test_nested_json_just_under_the_limit_loads(tmp_path: Path) -> None:
    value: object = "x"
    for _ in range(60):
        value = {"k": value}
    path = tmp_path / "ok.jsonl"
    path.write_text(
        json.dumps({"id": "1", "input": "q", "metadata": {"deep": value}}) + "\n", encoding="utf-8"
    )
    assert load_dataset(path).cases[0].metadata["deep"]["k"]["k"]


def test_deeply_nested_csv_cell_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "deep.csv"
    path.write_text('id,input,trajectory\n1,q,"' + "[" * 100_000 + '"\n', encoding="utf-8")
    with pytest.raises(DatasetError, match=r"deep\.csv:2: column 'trajectory': .*nested too deeply"):
        load_dataset(path)


def test_encoding_on_the_command_line_and_in_a_run_file(tmp_path: Path) -> None:
    (tmp_path / "excel.csv").write_bytes("id,input,reference\n1,caf\u00e9,caf\u00e9\n".encode("cp1252"))
    bad = clineval("run", "--data", "excel.csv", "-m", "exact_match", "-q", "--store", "s.db", cwd=tmp_path)
    assert bad.returncode == 2
    assert "excel.csv:2:6: not valid UTF-8 (byte 0xe9); pass --encoding cp1252" in bad.stderr
    assert "Traceback" not in bad.stderr
    good = clineval(
        "run",
        "--data",
        "excel.csv",
        "--encoding",
        "cp1252",
        "-m",
        "exact_match",
        "-q",
        "--store",
        "s.db",
        cwd=tmp_path,
    )
    assert good.returncode == 0, good.stderr
    assert "1 cases" in good.stdout
    (tmp_path / "run.yaml").write_text(
        "data: excel.csv\nencoding: cp1252\nmetrics: [exact_match]\n", encoding="utf-8"
    )
    from_file = clineval("run", "run.yaml", "-q", "--store", "s.db", cwd=tmp_path)
    assert from_file.returncode == 0, from_file.stderr
    assert "1 cases" in from_file.stdout


def test_deeply_nested_jsonl_on_the_command_line(tmp_path: Path) -> None:
    (tmp_path / "deep.jsonl").write_text("[" * 100_000 + "\n", encoding="utf-8")
    proc = clineval("run", "--data", "deep.jsonl", "-m", "token_f1", "-q", "--store", "s.db", cwd=tmp_path)
    assert proc.returncode == 2
    assert "nested too deeply" in proc.stderr
    assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr


# -- a CSV row with fewer cells than the header -------------------------------------------


def test_csv_short_row_is_refused_with_its_line_and_missing_columns(tmp_path: Path) -> None:
    rows = _rows(4)
    rows[2] = "2,question 2"  # physical line 3: no cell for 'reference'
    path = tmp_path / "short.csv"
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")
    with pytest.raises(DatasetError) as info:
        load_dataset(path)
    assert str(info.value) == (
        f"{path}:3: fewer cells than columns: no cell for 'reference' "
        "(end the row with a comma for an empty cell)"
    )


def test_csv_row_with_one_cell_names_every_missing_column(tmp_path: Path) -> None:
    path = tmp_path / "short.csv"
    path.write_text("id,input,reference\n1,q,a\n\n2\n", encoding="utf-8")  # the blank line 3 is skipped
    with pytest.raises(
        DatasetError, match=r"short\.csv:4: fewer cells than columns: no cell for 'input', 'reference'"
    ):
        load_dataset(path)


def test_csv_empty_last_cell_is_a_full_row_without_a_value(tmp_path: Path) -> None:
    path = tmp_path / "empty.csv"
    path.write_text('id,input,reference\n1,q,a\n2,q,\n3,"two\nlines",\n', encoding="utf-8")
    cases = load_dataset(path).cases
    assert [(c.id, c.input, c.reference) for c in cases] == [
        ("1", "q", "a"),
        ("2", "q", None),
        ("3", "two\nlines", None),
    ]


def test_csv_short_row_on_the_command_line_exits_2(tmp_path: Path) -> None:
    (tmp_path / "short.csv").write_text("id,response,reference\n1,a b,a b\n2,a b\n", encoding="utf-8")
    proc = clineval("run", "--data", "short.csv", "-m", "token_f1", "-q", "--store", "s.db", cwd=tmp_path)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "short.csv:3: fewer cells than columns: no cell for 'reference'" in proc.stderr
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "s.db").exists()  # refused before anything is stored
