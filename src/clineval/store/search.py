"""Full-text search over the cases of a run store (SQLite FTS5).

Every case gets one row in the FTS5 table ``case_search`` with three columns: its input
(a conversation's message contents, one per line), its response (the agent's, else the
dataset's) and its reference. ``case_search_docs`` gives each (run, case) a stable integer
id, the FTS row's rowid.

The index is kept by triggers on the ``cases`` and ``outputs`` tables, so it grows with
each write of a run (a case is indexed when the run is created, its response when the
agent's output is saved) and no page ever rebuilds it. A store written before the index
existed is indexed once, the first time it is opened for writing
(:func:`ensure_search_index`, called by :class:`~clineval.store.sqlite.RunStore`).

:func:`match_query` turns what a user typed into an FTS5 query: every word must occur
(any column), in any order; a word ending in ``*`` matches as a prefix; punctuation is
never FTS5 syntax (``co-amoxiclav`` is the phrase "co amoxiclav").
"""

from __future__ import annotations

import sqlite3

#: The FTS5 table and the table of its row ids.
SEARCH_TABLE = "case_search"
DOCS_TABLE = "case_search_docs"


def _text(data: str, path: str) -> str:
    """SQL for the text at ``path`` of the JSON in column ``data``: a string as it is, a list
    of messages as their contents one per line, anything else as its JSON."""
    return (
        f"CASE json_type({data}, '{path}')"
        f" WHEN 'array' THEN (SELECT group_concat(COALESCE(json_extract(m.value, '$.content'), m.value),"
        f" char(10)) FROM json_each({data}, '{path}') m)"
        f" ELSE json_extract({data}, '{path}') END"
    )


def _doc_id(run: str, case: str) -> str:
    return f"(SELECT id FROM {DOCS_TABLE} WHERE run_id = {run} AND case_id = {case})"


_CREATE = f"""
CREATE TABLE IF NOT EXISTS {DOCS_TABLE} (
    id INTEGER PRIMARY KEY,
    run_id TEXT NOT NULL,
    case_id TEXT NOT NULL,
    UNIQUE (run_id, case_id)
);
CREATE VIRTUAL TABLE IF NOT EXISTS {SEARCH_TABLE} USING fts5(
    input, response, reference, tokenize = 'unicode61 remove_diacritics 2'
);
CREATE TRIGGER IF NOT EXISTS case_search_case_added AFTER INSERT ON cases BEGIN
    INSERT OR IGNORE INTO {DOCS_TABLE} (run_id, case_id) VALUES (NEW.run_id, NEW.case_id);
    DELETE FROM {SEARCH_TABLE} WHERE rowid = {_doc_id("NEW.run_id", "NEW.case_id")};
    INSERT INTO {SEARCH_TABLE} (rowid, input, response, reference) VALUES (
        {_doc_id("NEW.run_id", "NEW.case_id")},
        {_text("NEW.data", "$.input")}, {_text("NEW.data", "$.response")}, {_text("NEW.data", "$.reference")}
    );
END;
CREATE TRIGGER IF NOT EXISTS case_search_case_removed AFTER DELETE ON cases BEGIN
    DELETE FROM {SEARCH_TABLE} WHERE rowid = {_doc_id("OLD.run_id", "OLD.case_id")};
    DELETE FROM {DOCS_TABLE} WHERE run_id = OLD.run_id AND case_id = OLD.case_id;
END;
CREATE TRIGGER IF NOT EXISTS case_search_output_added AFTER INSERT ON outputs
WHEN json_extract(NEW.data, '$.response') IS NOT NULL BEGIN
    UPDATE {SEARCH_TABLE} SET response = {_text("NEW.data", "$.response")}
    WHERE rowid = {_doc_id("NEW.run_id", "NEW.case_id")};
END;
CREATE TRIGGER IF NOT EXISTS case_search_output_removed AFTER DELETE ON outputs BEGIN
    UPDATE {SEARCH_TABLE} SET response = (
        SELECT {_text("c.data", "$.response")} FROM cases c
        WHERE c.run_id = OLD.run_id AND c.case_id = OLD.case_id
    ) WHERE rowid = {_doc_id("OLD.run_id", "OLD.case_id")};
END;
"""

_BACKFILL = f"""
INSERT OR IGNORE INTO {DOCS_TABLE} (run_id, case_id) SELECT run_id, case_id FROM cases ORDER BY run_id, idx;
INSERT INTO {SEARCH_TABLE} (rowid, input, response, reference)
SELECT d.id, {_text("c.data", "$.input")},
       COALESCE({_text("o.data", "$.response")}, {_text("c.data", "$.response")}),
       {_text("c.data", "$.reference")}
FROM {DOCS_TABLE} d
JOIN cases c ON c.run_id = d.run_id AND c.case_id = d.case_id
LEFT JOIN outputs o ON o.run_id = d.run_id AND o.case_id = d.case_id;
"""


def has_search_index(conn: sqlite3.Connection) -> bool:
    """Whether the store holds the search index (one opened read-only may predate it)."""
    row = conn.execute(
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN (?, ?)",
        (SEARCH_TABLE, DOCS_TABLE),
    ).fetchone()
    return bool(row and row[0] == 2)


def ensure_search_index(conn: sqlite3.Connection) -> None:
    """Create the index and its triggers in a store opened for writing; index the cases
    already there the first time (in one transaction; a no-op afterwards)."""
    if has_search_index(conn):
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        if not has_search_index(conn):  # another process may have made it meanwhile
            for statement in _split(_CREATE):
                conn.execute(statement)
            for statement in _split(_BACKFILL):
                conn.execute(statement)
        conn.execute("COMMIT")
    except BaseException:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise


def _split(script: str) -> list[str]:
    """The statements of a script (triggers hold ``;`` inside ``BEGIN ... END``)."""
    statements: list[str] = []
    current = ""
    for line in script.splitlines(keepends=True):
        current += line
        if sqlite3.complete_statement(current):
            if current.strip():
                statements.append(current.strip())
            current = ""
    if current.strip():
        statements.append(current.strip())
    return statements


def match_query(text: str) -> str | None:
    """What a user typed as an FTS5 query (``None`` when it holds no word): each word quoted,
    all required, ``word*`` a prefix."""
    terms: list[str] = []
    for word in text.split():
        prefix = word.endswith("*")
        word = word.rstrip("*").replace('"', " ").strip()
        if not any(ch.isalnum() for ch in word):
            continue
        terms.append(f'"{word}"' + ("*" if prefix else ""))
    return " AND ".join(terms) if terms else None


def matching_cases_sql() -> str:
    """SQL selecting the ids of the cases of run ``?2`` that match the FTS5 query ``?1``
    (the parameters in that order)."""
    return (
        f"SELECT d.case_id FROM {SEARCH_TABLE} JOIN {DOCS_TABLE} d ON d.id = {SEARCH_TABLE}.rowid"
        f" WHERE {SEARCH_TABLE} MATCH ? AND d.run_id = ?"
    )


__all__ = [
    "DOCS_TABLE",
    "SEARCH_TABLE",
    "ensure_search_index",
    "has_search_index",
    "match_query",
    "matching_cases_sql",
]
