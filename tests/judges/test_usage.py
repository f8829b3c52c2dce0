"""Usage accounting: every field summed, hand-worked values."""

from __future__ import annotations

from clineval.judges.base import Usage


def test_add_sums_every_field_and_record_adds_one_answer() -> None:
    total = Usage(prompt_tokens=10, completion_tokens=2, calls=1)
    total.add(Usage(prompt_tokens=5, completion_tokens=3, calls=2, cached=1, reasks=1))
    assert total == Usage(prompt_tokens=15, completion_tokens=5, calls=3, cached=1, reasks=1)
    total.record(calls=1, prompt_tokens=7, completion_tokens=4)
    assert total == Usage(prompt_tokens=22, completion_tokens=9, calls=4, cached=1, reasks=1)
    assert total.total_tokens == 31
    # a field added to Usage must be summed too: add() covers every field of the model
    every = Usage(**{name: 1 for name in Usage.model_fields})
    summed = Usage()
    summed.add(every)
    summed.add(every)
    assert summed.model_dump() == {name: 2 for name in Usage.model_fields}
    assert summed.model_fields_set == set(Usage.model_fields)  # as pydantic's own assignment marks them
