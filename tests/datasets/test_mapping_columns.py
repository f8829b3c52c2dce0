"""A column mapping that names a column no row has is an error naming the mapping, the
source and the columns there are (it left the field empty in every case, silently); through
the loaders (through ``clineval run`` and ``validate``: tests/cli/test_validate_run_file.py)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from clineval.datasets import load_dataset
from clineval.datasets.loaders import check_mapped_columns, stream_dataset
from clineval.errors import ColumnMappingError, DatasetError

ROWS = (
    '{"id": "a", "question": "q1", "answer": "x", "gold": "x"}\n{"id": "b", "question": "q2", "gold": "z"}\n'
)


def test_check_names_every_unknown_column_and_the_columns_there_are() -> None:
    columns = dict.fromkeys(["id", "question", "gold"])
    with pytest.raises(ColumnMappingError) as caught:
        check_mapped_columns(
            {"question": "input", "golden": "reference", "anser": "response"}, columns, "f.csv", "line"
        )
    assert str(caught.value) == (
        "column mapping 'golden' -> 'reference', 'anser' -> 'response': no line of f.csv has the column "
        "'golden' or 'anser' (its columns: id, question, gold)"
    )
    check_mapped_columns({"question": "input", "gold": "reference"}, columns, "f.csv", "line")  # all there
    check_mapped_columns({"golden": "reference"}, {}, "f.csv", "line")  # no rows: said otherwise


@pytest.mark.parametrize("reader", [load_dataset, stream_dataset], ids=["load", "stream"])
def test_a_file_whose_lines_lack_a_mapped_column_is_refused(tmp_path: Path, reader: object) -> None:
    data = tmp_path / "cases.jsonl"
    data.write_text(ROWS)
    with pytest.raises(ColumnMappingError) as caught:
        reader(data, mapping={"question": "input", "golden": "reference"})  # type: ignore[operator]
    assert str(caught.value) == (
        f"column mapping 'golden' -> 'reference': no line of {data} has the column 'golden' "
        "(its columns: id, question, answer, gold)"
    )


def test_a_column_some_rows_have_is_mapped_where_it_is() -> None:
    # 'answer' is only in the first row: the mapping holds, the second case has no response
    rows = [{"id": "a", "q": "q1", "answer": "x"}, {"id": "b", "q": "q2"}]
    cases = load_dataset(rows, mapping={"q": "input", "answer": "response"}).cases
    assert [(c.input, c.response) for c in cases] == [("q1", "x"), ("q2", None)]


def test_the_item_of_a_json_file_and_a_list_of_rows_are_named(tmp_path: Path) -> None:
    data = tmp_path / "cases.json"
    data.write_text('[{"id": "a", "question": "q1"}]')
    with pytest.raises(
        ColumnMappingError, match=r"^column mapping 'qu' -> 'input': no item of .*cases\.json "
    ):
        load_dataset(data, mapping={"qu": "input"})
    with pytest.raises(ColumnMappingError, match=r"^column mapping 'qu' -> 'input': no row of DataFrame "):
        load_dataset(pd.DataFrame([{"id": "a", "question": "q1"}]), mapping={"qu": "input"})


def test_an_empty_file_is_reported_as_empty_not_as_a_mapping_problem(tmp_path: Path) -> None:
    data = tmp_path / "cases.jsonl"
    data.write_text("")
    with pytest.raises(DatasetError) as caught:
        load_dataset(data, mapping={"golden": "reference"})
    assert not isinstance(caught.value, ColumnMappingError)
    assert str(caught.value) == f"{data}: the dataset has no cases"
