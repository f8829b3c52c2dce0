"""Dataset loaders, pinned: the exact message a user sees for each kind of bad input
(file, line, field and what was expected) and the exact values of the cases loaded.

Every expected value here is worked out by hand from the file written in the test.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from clineval.datasets import load_dataset
from clineval.datasets.loaders import (
    Dataset,
    StreamedDataset,
    check_encoding,
    check_mapping,
    check_source,
    read_records,
    stream_dataset,
)
from clineval.errors import DatasetError
from clineval.model import Case

QUOTE_ADVICE = (
    'a quote must open and close a whole cell, and a quote inside a quoted cell is written twice ("")'
)


def _error(source: object, **kwargs: object) -> str:
    with pytest.raises(DatasetError) as caught:
        load_dataset(source, **kwargs)  # type: ignore[arg-type]
    return str(caught.value)


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


# --- column mappings, formats and encodings ---------------------------------------------------


def test_a_mapping_target_that_is_not_a_case_field_lists_the_fields() -> None:
    with pytest.raises(DatasetError) as caught:
        check_mapping({"resp": "answer.text"})
    assert str(caught.value) == (
        "column mapping 'resp' -> 'answer.text': 'answer' is not a case field (fields: id, input, "
        "response, trajectory, contexts, reference, reference_trajectory, gold_facts, expected, "
        "metadata, agent_run)"
    )


def test_only_metadata_and_agent_run_take_a_dotted_target() -> None:
    check_mapping({"ward": "metadata.ward", "secs": "agent_run.latency_s", "q": "input"})  # no error
    with pytest.raises(DatasetError) as caught:
        check_mapping({"w": "response.text"})
    assert str(caught.value) == (
        "column mapping 'w' -> 'response.text': only metadata.* and agent_run.* take a dotted target"
    )


def test_the_format_comes_from_the_suffix_or_the_format_given(tmp_path: Path) -> None:
    upper = _write(tmp_path / "CASES.CSV", "id\na\n")
    text = _write(tmp_path / "cases.txt", '{"id": "a"}\n')
    assert check_source(upper) == "csv"
    assert check_source(text, "JSONL") == "jsonl"
    assert check_source(tmp_path) == "folder"
    with pytest.raises(DatasetError) as caught:
        check_source(text)
    assert str(caught.value) == f"{text}: unknown dataset format 'txt'; use .jsonl, .json or .csv"
    with pytest.raises(DatasetError) as caught:
        check_source(tmp_path / "gone.jsonl")
    assert str(caught.value) == f"dataset file not found: {tmp_path / 'gone.jsonl'}"
    # the format given wins over the suffix
    assert [c.id for c in load_dataset(text, format="jsonl").cases] == ["a"]


@pytest.mark.parametrize(
    ("given", "codec"),
    [
        (None, "utf-8-sig"),
        ("  ", "utf-8-sig"),
        ("UTF8", "utf-8-sig"),
        (" utf-8-sig ", "utf-8-sig"),
        ("latin-1", "iso8859-1"),
        ("CP1252", "cp1252"),
    ],
)
def test_encoding_names_are_normalised(given: str | None, codec: str) -> None:
    assert check_encoding(given) == codec


def test_an_unknown_encoding_is_refused() -> None:
    with pytest.raises(DatasetError) as caught:
        check_encoding("klingon")
    assert str(caught.value) == (
        "unknown encoding 'klingon'; use a Python codec name such as utf-8, cp1252 or latin-1"
    )


# --- bytes that do not decode -------------------------------------------------------------------


def test_a_byte_that_is_not_utf8_is_reported_with_line_and_column(tmp_path: Path) -> None:
    # line 2 is 'c1,caf' + 0xe9: six characters before the bad byte, so column 7
    path = tmp_path / "latin.csv"
    path.write_bytes(b"id,input\nc1,caf\xe9\n")
    assert _error(path) == (
        f"{path}:2:7: not valid UTF-8 (byte 0xe9); pass --encoding cp1252 (or latin-1) "
        "if the file uses another encoding"
    )
    # the same file read as the encoding it is in
    (case,) = load_dataset(path, encoding="latin-1").cases
    assert case.input == "café"


def test_the_column_counts_characters_not_bytes(tmp_path: Path) -> None:
    # 'é' is two bytes in UTF-8 but one character: the bad byte after it is column 3 of line 3
    path = tmp_path / "cases.jsonl"
    path.write_bytes(b'{"id": "a"}\n{"id": "b"}\n"\xc3\xa9\xff"\n')
    assert _error(path) == (
        f"{path}:3:3: not valid UTF-8 (byte 0xff); pass --encoding cp1252 (or latin-1) "
        "if the file uses another encoding"
    )


@pytest.mark.parametrize(("data", "where"), [(b"abc\xff\n", "1:4"), (b"\nabc\xff\n", "2:4")])
def test_a_bad_byte_on_the_first_line_or_after_a_blank_first_line(
    tmp_path: Path, data: bytes, where: str
) -> None:
    # 'abc' before the bad byte: column 4, whether or not a newline starts the file
    path = tmp_path / "cases.jsonl"
    path.write_bytes(data)
    assert _error(path) == (
        f"{path}:{where}: not valid UTF-8 (byte 0xff); pass --encoding cp1252 (or latin-1) "
        "if the file uses another encoding"
    )


def test_a_codec_that_is_not_a_text_encoding_is_refused(tmp_path: Path) -> None:
    with pytest.raises(DatasetError) as caught:
        check_encoding("zlib")
    assert str(caught.value) == (
        "unknown encoding 'zlib'; use a Python codec name such as utf-8, cp1252 or latin-1"
    )


def test_a_byte_order_mark_is_not_counted_in_the_column(tmp_path: Path) -> None:
    # cp1252 has no character for 0x81; the UTF-8 byte-order mark before 'ab' is not a column
    path = tmp_path / "cases.json"
    path.write_bytes(b"\xef\xbb\xbfab\x81")
    assert (
        _error(path, encoding="cp1252")
        == f"{path}:1:3: not valid cp1252 (byte 0x81); is it the file's encoding?"
    )


def test_a_byte_order_mark_is_skipped(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    path.write_bytes(b"\xef\xbb\xbfid,input\na,x\n")
    (case,) = load_dataset(path).cases
    assert (case.id, case.input) == ("a", "x")


# --- JSON nested too deeply ---------------------------------------------------------------------


def _lists(levels: int) -> str:
    """A JSON list nested ``levels`` deep: '[[]]' is 2."""
    return "[" * levels + "]" * levels


def _objects(levels: int) -> str:
    """A JSON object nested ``levels`` deep: '{"a": {}}' is 2."""
    return '{"a": ' * (levels - 1) + "{}" + "}" * (levels - 1)


@pytest.mark.parametrize("nested", [_lists, _objects], ids=["lists", "objects"])
def test_json_up_to_100_levels_deep_loads_and_101_is_refused(
    tmp_path: Path, nested: Callable[[int], str]
) -> None:
    # the row's object is level 1 and its metadata level 2: a value 98 deep makes 100 in all
    ok = _write(tmp_path / "ok.jsonl", '{"id": "d", "metadata": {"x": ' + nested(98) + "}}\n")
    (case,) = load_dataset(ok).cases
    assert case.id == "d"
    deep = _write(tmp_path / "deep.jsonl", '{"id": "d", "metadata": {"x": ' + nested(99) + "}}\n")
    assert _error(deep) == f"1 bad row(s):\n{deep}:1: JSON nested too deeply (more than 100 levels)"


def test_json_too_deep_for_the_parser_is_refused_the_same_way(tmp_path: Path) -> None:
    # and the lines after it are still read
    path = _write(tmp_path / "deep.jsonl", '{"id": "a"}\n' + _lists(100_000) + "\n{bad\n")
    assert _error(path) == (
        f"2 bad row(s):\n{path}:2: JSON nested too deeply (more than 100 levels)\n"
        f"{path}:3: not valid JSON (Expecting property name enclosed in double quotes at column 2)"
    )
    whole = _write(tmp_path / "deep.json", _lists(101))
    assert _error(whole) == f"{whole}:1: JSON nested too deeply (more than 100 levels)"


# --- JSONL --------------------------------------------------------------------------------------


def test_jsonl_lines_keep_their_numbers_across_blank_lines(tmp_path: Path) -> None:
    # a case without an id is numbered by its place among the cases (1, 2), not by its line
    path = _write(tmp_path / "cases.jsonl", '\n{"input": "a"}\n   \n{"input": "b"}\n{"id": "1"}\n')
    assert _error(path) == f"1 bad row(s):\n{path}:5: field 'id': case id '1' is already used at line 2"
    path.write_text('\n{"input": "a"}\n   \n{"input": "b"}\n', encoding="utf-8")
    assert [(c.id, c.input) for c in load_dataset(path).cases] == [("1", "a"), ("2", "b")]


def test_a_line_that_is_not_json_names_its_column(tmp_path: Path) -> None:
    path = _write(tmp_path / "cases.jsonl", '{"id": "a"}\n{not json\n')
    assert _error(path) == (
        f"1 bad row(s):\n{path}:2: not valid JSON "
        "(Expecting property name enclosed in double quotes at column 2)"
    )


@pytest.mark.parametrize(
    ("bad", "tail"), [(25, ""), (26, "\n... and 1 more"), (27, "\n... and 2 more"), (60, "\n... and 35 more")]
)
def test_at_most_25_problems_are_listed_then_a_count(tmp_path: Path, bad: int, tail: str) -> None:
    path = _write(tmp_path / "bad.jsonl", "x\n" * bad)
    listed = "\n".join(f"{path}:{n}: not valid JSON (Expecting value at column 1)" for n in range(1, 26))
    assert _error(path) == f"{bad} bad row(s):\n{listed}{tail}"


# --- JSON ---------------------------------------------------------------------------------------


def test_a_json_file_that_does_not_parse_names_its_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "cases.json", '[\n{"id": "a"},\n{oops}\n]\n')
    assert _error(path) == f"{path}:3: not valid JSON (Expecting property name enclosed in double quotes)"


@pytest.mark.parametrize(
    ("document", "ids"),
    [
        ({"data": [{"id": "d"}]}, ["d"]),
        ({"examples": [{"id": "e"}]}, ["e"]),
        ({"cases": [{"id": "c"}], "data": [{"id": "d"}]}, ["c"]),  # 'cases' first
        ({"cases": "see data", "data": [{"id": "d"}]}, ["d"]),  # a key that is not a list is passed over
    ],
)
def test_a_json_object_wraps_its_cases_under_cases_data_or_examples(
    tmp_path: Path, document: dict[str, object], ids: list[str]
) -> None:
    path = _write(tmp_path / "cases.json", json.dumps(document))
    assert [c.id for c in load_dataset(path).cases] == ids


def test_a_json_object_without_a_list_of_cases_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path / "cases.json", json.dumps({"rows": [{"id": "a"}]}))
    assert _error(path) == f"{path}: expected a JSON list of cases (or an object with a 'cases' list)"


def test_json_items_are_named_by_their_place_in_the_list(tmp_path: Path) -> None:
    path = _write(
        tmp_path / "cases.json", json.dumps([{"id": "a"}, "b", {"id": "a"}, {"id": "c", "contexts": 5}])
    )
    assert _error(path) == (
        "3 bad row(s):\n"
        f"{path} item 2: expected an object with case fields, got str\n"
        f"{path} item 3: field 'id': case id 'a' is already used at item 1\n"
        f"{path} item 4: field 'contexts': Input should be a valid list"
    )


# --- CSV ----------------------------------------------------------------------------------------


def test_csv_rows_short_long_and_duplicated_columns(tmp_path: Path) -> None:
    path = tmp_path / "cases.csv"
    _write(path, "id,input,input,note,note\na,b,c,d,e\n")
    assert _error(path) == f"{path}: duplicated column name(s): input, note"
    _write(path, "id,input\na,x\nb,y,z\n")
    assert _error(path) == f"{path}:3: more cells than columns"
    # blank lines (LF or CRLF) are skipped but counted: the short row is line 4
    _write(path, "id,input,reference\r\n\r\n\nc1\r\n")
    assert _error(path) == (
        f"{path}:4: fewer cells than columns: no cell for 'input', 'reference' "
        "(end the row with a comma for an empty cell)"
    )
    # a row over two lines is named by its first line
    _write(path, 'id,input,reference\nc1,"two\nlines"\n')
    assert _error(path) == (
        f"{path}:2: fewer cells than columns: no cell for 'reference' "
        "(end the row with a comma for an empty cell)"
    )
    # a trailing comma is an empty cell: no value
    _write(path, "id,input,reference\nc1,x,\n")
    (case,) = load_dataset(path).cases
    assert (case.id, case.input, case.reference) == ("c1", "x", None)


def test_a_csv_with_no_rows_has_no_cases(tmp_path: Path) -> None:
    for text in ("", "id,input\n"):
        path = _write(tmp_path / "cases.csv", text)
        assert _error(path) == f"{path}: the dataset has no cases"


def test_an_unclosed_quote_that_runs_to_the_end_of_the_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "cases.csv", 'id,input,reference\nc1,"fever,flu\nc2,cough,cold\n')
    assert _error(path) == (
        f"{path}:2: an unmatched quote (the quoted cell opened on this line runs on to the end of the "
        f"file, swallowing the rows after it); {QUOTE_ADVICE}"
    )
    _write(path, '"id,input\na,b\n')  # in the header
    assert _error(path) == (
        f"{path}:1: an unmatched quote (the quoted cell opened on this line runs on to the end of the "
        f"file, swallowing the rows after it); {QUOTE_ADVICE}"
    )


def test_text_after_a_closing_quote_in_the_header_or_after_blank_lines(tmp_path: Path) -> None:
    path = _write(tmp_path / "cases.csv", '"id"x,input\na,b\n')
    assert _error(path) == f"{path}:1: an unmatched quote (text follows a closing quote); {QUOTE_ADVICE}"
    _write(path, 'id,input\na,b\n\n\nc,"x"y\n')
    assert _error(path) == f"{path}:5: an unmatched quote (text follows a closing quote); {QUOTE_ADVICE}"


def test_swallowed_rows_are_found_in_a_two_column_file(tmp_path: Path) -> None:
    path = _write(tmp_path / "cases.csv", 'id,input\nc1,"fever\nc2,cough\nc3,ok"\nc4,x\n')
    assert _error(path) == (
        f"{path}:2: an unmatched quote (the quoted cell opened on this line runs on to line 4, "
        f"swallowing the rows after it); {QUOTE_ADVICE}"
    )


def test_a_cell_longer_than_the_csv_limit_is_named_as_such(tmp_path: Path) -> None:
    # Python's csv reader holds at most 131,072 characters in a cell; it is not a quote problem
    path = _write(tmp_path / "cases.csv", "id,input\na,short\nb," + "x" * 131_073 + "\n")
    assert _error(path) == (
        f"{path}:3: a cell longer than 131,072 characters, the most a CSV cell may hold; "
        "use a .jsonl file for longer text"
    )


def test_a_quote_that_closes_rows_later_is_found_by_the_rows_it_swallowed(tmp_path: Path) -> None:
    # the quote opened on line 2 closes on line 4: the cell holds 'c2,cough,cold', a whole row
    # whose first cell is shaped like the ids of the one-line rows (c4: 'c' and a number)
    path = _write(
        tmp_path / "cases.csv", 'id,input,reference\nc1,"fever,flu\nc2,cough,cold\nc3,ok",fine\nc4,a,b\n'
    )
    assert _error(path) == (
        f"{path}:2: an unmatched quote (the quoted cell opened on this line runs on to line 4, "
        f"swallowing the rows after it); {QUOTE_ADVICE}"
    )


def test_a_note_over_several_lines_is_not_mistaken_for_swallowed_rows(tmp_path: Path) -> None:
    # '5mg,bd,oral' has as many cells as the header and a number in its first cell, but
    # '0mg' is not the shape of the file's ids ('c0'); 'c2' and 'c2,c3,c4,c5' start with an
    # id but are one and four cells, not three: a note, read as written (the empty last
    # cells change nothing)
    note = "Plan as for\nc2\n5mg,bd,oral\nsame as\nc2,c3,c4,c5"
    path = _write(tmp_path / "cases.csv", f'id,input,reference\nc1,"{note}",\nc2,x,\n')
    first, second = load_dataset(path).cases
    assert (first.id, first.input, first.reference) == ("c1", note, None)
    assert (second.id, second.input, second.reference) == ("c2", "x", None)


def test_when_no_row_fits_on_one_line_any_id_like_line_counts_as_swallowed(tmp_path: Path) -> None:
    path = _write(tmp_path / "cases.csv", 'id,input,reference\nc1,"fever,\nc2,cough,cold\nc3",fine\n')
    assert _error(path) == (
        f"{path}:2: an unmatched quote (the quoted cell opened on this line runs on to line 4, "
        f"swallowing the rows after it); {QUOTE_ADVICE}"
    )


def test_a_one_column_csv_keeps_its_cells_over_several_lines(tmp_path: Path) -> None:
    # with one column every line is 'a whole row': nothing can be told apart, nothing refused
    path = _write(tmp_path / "cases.csv", 'input\n"dose\n7"\n')
    (case,) = load_dataset(path).cases
    assert (case.id, case.input) == ("1", "dose\n7")


def test_csv_lines_of_rows_after_a_multi_line_cell(tmp_path: Path) -> None:
    # a row is numbered by the line it ends on: the row 'c1' over lines 2-3 is line 3
    path = _write(tmp_path / "cases.csv", 'id,input\nc1,"a\nb"\n\nc1,z\n')
    assert _error(path) == f"1 bad row(s):\n{path}:5: field 'id': case id 'c1' is already used at line 3"


# --- which column becomes which field -----------------------------------------------------------


@pytest.mark.parametrize(
    ("column", "value", "field", "loaded"),
    [
        ("case_id", "k1", "id", "k1"),
        ("instance_id", 17, "id", "17"),
        ("prompt", "Dose?", "input", "Dose?"),
        ("query", "Dose?", "input", "Dose?"),
        ("question", "Dose?", "input", "Dose?"),
        ("context", "K 5.9", "contexts", ["K 5.9"]),
        ("retrieved_contexts", ["a", "b"], "contexts", ["a", "b"]),
        ("ground_truth", "5 mg", "reference", "5 mg"),
        ("expected_answer", {"dose": 5}, "expected", {"dose": 5}),
    ],
)
def test_well_known_column_names_of_other_tools(
    column: str, value: object, field: str, loaded: object
) -> None:
    (case,) = load_dataset([{"id": "a", column: value} if field != "id" else {column: value}]).cases
    assert getattr(case, field) == loaded


def test_other_well_known_names_messages_trajectory_and_agent_run() -> None:
    (case,) = load_dataset(
        [
            {
                "id": "a",
                "messages": [{"role": "user", "content": "Hi"}],
                "predicted_trajectory": ["get_labs"],
                "latency_in_seconds": 1.5,
                "failure": "error",
            }
        ]
    ).cases
    assert isinstance(case.input, list) and [(t.role, t.content) for t in case.input] == [("user", "Hi")]
    assert case.trajectory is not None and [t.name for t in case.trajectory] == ["get_labs"]
    assert case.agent_run is not None and (case.agent_run.latency_s, case.agent_run.failed) == (1.5, True)


def test_the_mapping_wins_over_field_names_and_other_columns_go_to_metadata() -> None:
    dataset = load_dataset(
        [
            {"id": 1, "input": "ref text", "question": "Q?", "ward": "icu", "bed": 4},
            {"id": 2, "input": "r2", "question": "Q2", "note": "n", "ward": None},
        ],
        mapping={"input": "reference", "bed": "metadata.bed_no"},
    )
    first, second = dataset.cases
    assert (first.input, first.reference, first.metadata) == ("Q?", "ref text", {"ward": "icu", "bed_no": 4})
    # an empty metadata cell is no value, but its column is still listed
    assert (second.input, second.reference, second.metadata) == ("Q2", "r2", {"note": "n"})
    # the columns kept as metadata without being asked for, in the order first seen
    assert dataset.metadata_columns == ["ward", "note"]


def test_a_metadata_column_and_metadata_dot_columns_are_merged(tmp_path: Path) -> None:
    (case,) = load_dataset([{"id": "a", "metadata": {"site": "b"}, "ward": "icu"}]).cases
    assert case.metadata == {"site": "b", "ward": "icu"}
    path = _write(tmp_path / "cases.csv", 'id,ward,metadata\na,icu,"{""site"": ""b""}"\n')
    assert load_dataset(path).cases[0].metadata == {"ward": "icu", "site": "b"}
    assert _error([{"id": "a", "metadata": "icu"}]) == (
        "1 bad row(s):\nlist item 1: column 'metadata': metadata must be an object"
    )


def test_two_columns_for_one_field() -> None:
    # the rows after it are still checked
    assert _error([{"id": "a", "prompt": "x", "question": "y"}, {"id": "b", "contexts": 5}]) == (
        "2 bad row(s):\nlist item 1: column 'question': a second column also gives field 'input'\n"
        "list item 2: field 'contexts': Input should be a valid list"
    )
    # an empty one gives way to the other, in either order
    assert load_dataset([{"id": "a", "prompt": None, "question": "y"}]).cases[0].input == "y"
    assert load_dataset([{"id": "a", "prompt": "x", "question": None}]).cases[0].input == "x"


def test_agent_run_columns_are_merged_over_an_agent_run_object() -> None:
    (case,) = load_dataset(
        [{"id": "a", "agent_run": {"latency_s": 1, "attempts": 2}, "latency_in_seconds": 3}]
    ).cases
    assert case.agent_run is not None
    assert (case.agent_run.latency_s, case.agent_run.attempts, case.agent_run.failed) == (3.0, 2, False)
    # an empty agent_run column is no value
    (case,) = load_dataset([{"id": "a", "latency_in_seconds": None}]).cases
    assert case.agent_run is None


@pytest.mark.parametrize(
    ("given", "failed"),
    [
        ("error", True),
        ("Failed", True),
        (" YES ", True),
        ("ok", False),
        ("", False),
        ("2", True),
        ("0.0", False),
        (2, True),
        (0.5, True),
        (0, False),
        (True, True),
    ],
)
def test_a_failure_column_is_read_as_yes_or_no(given: object, failed: bool) -> None:
    (case,) = load_dataset([{"id": "a", "failure": given}]).cases
    assert case.agent_run is not None and case.agent_run.failed is failed


def test_a_failure_that_is_not_yes_or_no_is_an_error() -> None:
    assert _error([{"id": "a", "failure": "maybe"}]) == (
        "1 bad row(s):\nlist item 1: field 'agent_run.failed': Input should be a valid boolean, "
        "unable to interpret input"
    )


# --- CSV cells that hold JSON -------------------------------------------------------------------


def _csv_case(tmp_path: Path, header: str, row: str, **kwargs: object) -> Case:
    path = _write(tmp_path / "cases.csv", f"{header}\n{row}\n")
    (case,) = load_dataset(path, **kwargs).cases  # type: ignore[arg-type]
    return case


def test_csv_cells_of_list_and_object_fields_are_json(tmp_path: Path) -> None:
    case = _csv_case(
        tmp_path,
        "id,contexts,gold_facts,metadata,agent_run,failure",
        'a,"  [""K 5.9"", ""Na 140""]","[""high K""]","{""site"": ""b""}","{""latency_s"": 2}",yes',
    )
    assert case.contexts == ["K 5.9", "Na 140"]  # spaces around the JSON are allowed
    assert case.gold_facts is not None and [f.text for f in case.gold_facts] == ["high K"]
    assert case.metadata == {"site": "b"}
    assert case.agent_run is not None and (case.agent_run.latency_s, case.agent_run.failed) == (2.0, True)
    # a cell that does not start with [ or { is text (one context)
    assert _csv_case(tmp_path, "id,contexts", "a,K 5.9").contexts == ["K 5.9"]


def test_a_csv_cell_of_a_list_field_that_is_not_json_is_an_error(tmp_path: Path) -> None:
    path = _write(tmp_path / "cases.csv", "id,contexts\na,[bad\n")
    assert (
        _error(path)
        == f"1 bad row(s):\n{path}:2: column 'contexts': not valid JSON (Expecting value at position 1)"
    )
    _write(path, 'id,metadata\na,"[""x""]"\n')
    assert _error(path) == f"1 bad row(s):\n{path}:2: column 'metadata': metadata must be an object"


@pytest.mark.parametrize(
    ("cell", "expected"),
    [
        ('"{""dose"": 5}"', {"dose": 5}),
        ('"[1, 2]"', [1, 2]),
        ("[hold", "[hold"),  # not JSON: text
        ("5 mg", "5 mg"),
    ],
)
def test_a_csv_expected_cell_is_json_when_it_parses(tmp_path: Path, cell: str, expected: object) -> None:
    assert _csv_case(tmp_path, "id,expected", f"a,{cell}").expected == expected


@pytest.mark.parametrize(
    ("cell", "loaded"),
    [
        ('"[{""role"": ""user"", ""content"": ""Hi""}]"', [("user", "Hi")]),
        ('"{""role"": ""user""}"', '{"role": "user"}'),  # JSON, but not a conversation
        ('"[1, 2]"', "[1, 2]"),
        ('"[{""role"": ""user""}, 2]"', '[{"role": "user"}, 2]'),
        ("[URGENT", "[URGENT"),
    ],
)
def test_a_csv_input_cell_is_a_conversation_only_when_it_is_a_list_of_messages(
    tmp_path: Path, cell: str, loaded: object
) -> None:
    case = _csv_case(tmp_path, "id,input", f"a,{cell}")
    if isinstance(case.input, list):
        assert [(t.role, t.content) for t in case.input] == loaded
    else:
        assert case.input == loaded


def test_csv_cells_of_text_fields_and_of_dotted_targets_stay_text(tmp_path: Path) -> None:
    case = _csv_case(
        tmp_path,
        "id,response,reference,plan",
        'a,"[1]","{x}","[""a""]"',
        mapping={"plan": "metadata.plan"},
    )
    assert (case.response, case.reference, case.metadata) == ("[1]", "{x}", {"plan": '["a"]'})


def test_text_in_json_and_list_rows_is_not_parsed_again(tmp_path: Path) -> None:
    # a JSON file's string is a string: one context that reads '["a"]'
    path = _write(tmp_path / "cases.json", json.dumps([{"id": "a", "contexts": '["a"]', "expected": "[1]"}]))
    (case,) = load_dataset(path).cases
    assert (case.contexts, case.expected) == (['["a"]'], "[1]")
    rows = [{"id": "a", "contexts": '["a"]', "expected": "[1]"}]
    for source in (rows, pd.DataFrame(rows)):
        (case,) = load_dataset(source).cases
        assert (case.contexts, case.expected) == (['["a"]'], "[1]")


def test_the_mapping_and_format_are_given_by_name(tmp_path: Path) -> None:
    path = _write(tmp_path / "cases.jsonl", '{"id": "a"}\n')
    with pytest.raises(TypeError):
        load_dataset(path, {"q": "input"})  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        stream_dataset(path, {"q": "input"})  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        read_records(path, "utf-8")  # type: ignore[call-arg]


# --- other sources ------------------------------------------------------------------------------


def test_dataframe_missing_values_and_arrays() -> None:
    frame = pd.DataFrame(
        {
            "id": ["a", "b"],
            "contexts": [np.array(["x", "y"]), None],
            "latency_in_seconds": [1.5, float("nan")],
            "note": [pd.NA, "n"],
            "seen": [pd.NaT, pd.NaT],
        }
    )
    first, second = load_dataset(frame).cases
    assert first.contexts == ["x", "y"] and first.metadata == {}
    assert first.agent_run is not None and first.agent_run.latency_s == 1.5
    assert (second.contexts, second.agent_run, second.metadata) == (None, None, {"note": "n"})
    assert _error(pd.DataFrame({"id": ["a"], "contexts": [5]})) == (
        "1 bad row(s):\nDataFrame row 1: field 'contexts': Input should be a valid list"
    )


def test_a_series_of_rows_is_a_list_not_a_dataframe() -> None:
    (case,) = load_dataset(pd.Series([{"id": "a", "question": "Dose?"}])).cases
    assert (case.id, case.input) == ("a", "Dose?")


def test_a_list_of_cases_a_single_mapping_and_a_folder_with_a_mapping(tmp_path: Path) -> None:
    (case,) = load_dataset([Case(id="a", input="x", metadata={"w": 1})]).cases
    assert (case.id, case.input, case.metadata) == ("a", "x", {"w": 1})
    assert _error({"id": "a"}) == "expected a list of cases, got a single mapping"
    assert (
        _error(tmp_path, mapping={"q": "input"}) == f"{tmp_path}: a column mapping does not apply to a folder"
    )


# --- side files read as strictly as datasets ----------------------------------------------------


def test_read_records_of_each_format(tmp_path: Path) -> None:
    csv_path = _write(tmp_path / "gold.CSV", "case,label\nc1,\n\nc2,yes\n")
    assert read_records(csv_path) == [(2, {"case": "c1", "label": None}), (4, {"case": "c2", "label": "yes"})]
    jsonl = _write(tmp_path / "gold.jsonl", '{"a": 1}\n\n[2]\n')
    assert read_records(jsonl) == [(1, {"a": 1}), (3, [2])]
    whole = _write(tmp_path / "gold.json", '{"cases": [{"a": 1}, 3]}')
    assert read_records(whole) == [(1, {"a": 1}), (2, 3)]
    latin = tmp_path / "gold-latin.csv"
    latin.write_bytes(b"case,label\nc1,caf\xe9\n")
    assert read_records(latin, encoding="cp1252") == [(2, {"case": "c1", "label": "café"})]


def test_read_records_refuses_what_it_cannot_read(tmp_path: Path) -> None:
    cases = [
        (tmp_path / "gone.csv", f"{tmp_path / 'gone.csv'}: no such file"),
        (tmp_path, f"{tmp_path}: not a file"),
        (
            _write(tmp_path / "gold.txt", "x"),
            f"{tmp_path / 'gold.txt'}: expected a .jsonl, .json or .csv file",
        ),
    ]
    for path, message in cases:
        with pytest.raises(DatasetError) as caught:
            read_records(path)
        assert str(caught.value) == message


# --- streamed JSONL -----------------------------------------------------------------------------

STREAMED = '{"id": "a", "q": "Dose?", "ward": "icu"}\n\n{"id": "b", "q": "Rate?", "bed": 3}\n'


def test_a_streamed_jsonl_is_the_loaded_dataset_read_again(tmp_path: Path) -> None:
    path = _write(tmp_path / "cases.JSONL", STREAMED)
    stream = stream_dataset(path, mapping={"q": "input"})
    assert isinstance(stream, StreamedDataset)
    loaded = load_dataset(path, format="jsonl", mapping={"q": "input"})
    assert (stream.n_cases, stream.fingerprint_value) == (2, loaded.fingerprint())
    assert stream.metadata_columns == ["ward", "bed"] and stream.codec == "utf-8-sig"
    assert [(c.id, c.input, c.metadata) for c in stream] == [
        ("a", "Dose?", {"ward": "icu"}),
        ("b", "Rate?", {"bed": 3}),
    ]
    assert list(stream) == loaded.cases  # and again, the same


def test_other_sources_are_loaded_not_streamed(tmp_path: Path) -> None:
    path = _write(tmp_path / "cases.json", '[{"id": "a"}]')
    dataset = stream_dataset(path)
    assert type(dataset) is Dataset and [c.id for c in dataset] == ["a"]
    with pytest.raises(DatasetError) as caught:
        stream_dataset(tmp_path / "gone.jsonl")
    assert str(caught.value) == f"dataset file not found: {tmp_path / 'gone.jsonl'}"
    text = _write(tmp_path / "cases.txt", '{"id": "a"}\n')  # not read as JSONL for its lines
    with pytest.raises(DatasetError) as caught:
        stream_dataset(text)
    assert str(caught.value) == f"{text}: unknown dataset format 'txt'; use .jsonl, .json or .csv"


def test_a_streamed_jsonl_is_checked_in_full_first(tmp_path: Path) -> None:
    path = _write(tmp_path / "cases.jsonl", '{"id": "a", "contexts": 5}\n{bad\n{"id": "b"}\n')
    with pytest.raises(DatasetError) as caught:
        stream_dataset(path)
    # lines that are not JSON are reported first, alone, as load_dataset does
    assert str(caught.value) == (
        f"1 bad row(s):\n{path}:2: not valid JSON "
        "(Expecting property name enclosed in double quotes at column 2)"
    )
    _write(path, '{"id": "a", "contexts": 5}\n{"id": "b", "contexts": 6}\n')
    with pytest.raises(DatasetError) as caught:
        stream_dataset(path)
    assert str(caught.value) == (
        f"2 bad row(s):\n{path}:1: field 'contexts': Input should be a valid list\n"
        f"{path}:2: field 'contexts': Input should be a valid list"
    )
    _write(path, "\n\n")
    with pytest.raises(DatasetError) as caught:
        stream_dataset(path)
    assert str(caught.value) == f"{path}: the dataset has no cases"
    with pytest.raises(DatasetError, match="'answer' is not a case field"):
        stream_dataset(path, mapping={"q": "answer"})
    with pytest.raises(DatasetError, match="unknown encoding 'klingon'"):
        stream_dataset(path, encoding="klingon")


@pytest.mark.parametrize(
    "changed",
    [
        # another value (two, so that the new fingerprint sorts after the old one once, before it once)
        STREAMED.replace('"bed": 3', '"bed": 4'),
        STREAMED.replace('"bed": 3', '"bed": 6'),
        STREAMED + '{"id": "c"}\n',  # one more case
        STREAMED + "{bad\n",  # a line that is not JSON
    ],
    ids=["value", "other-value", "count", "bad-line"],
)
def test_a_streamed_file_that_changes_after_it_was_checked_is_refused(tmp_path: Path, changed: str) -> None:
    path = _write(tmp_path / "cases.jsonl", STREAMED)
    stream = stream_dataset(path, mapping={"q": "input"})
    _write(path, changed)
    with pytest.raises(DatasetError) as caught:
        list(stream)
    assert str(caught.value) == f"{path}: the file changed while it was read; run again"


def test_a_file_that_cannot_be_read_is_reported_with_the_reason(tmp_path: Path) -> None:
    # a socket is a path that exists but cannot be opened for reading (even by root)
    for name in ("cases.csv", "cases.jsonl"):
        path = tmp_path / name
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            server.bind(str(path))
            with pytest.raises(OSError) as refused:  # the operating system's reason (Linux: ENXIO)
                path.open("rb")
            assert refused.value.strerror  # e.g. 'No such device or address'
            assert _error(path) == f"{path}: cannot read ({refused.value.strerror})"
        finally:
            server.close()
