"""Normalisation, stems and term matching."""

from __future__ import annotations

from clineval.nlp.terms import content_stems, expand_abbreviations, normalize, stem, term_covers, terms_match


def test_normalize_resolves_abbreviations_synonyms_and_brands() -> None:
    text = normalize("Pt has HTN and SOB; takes Lexapro 10 mg b.i.d. He doesn't smoke.")
    assert "hypertension" in text and "dyspnea" in text
    assert "escitalopram" in text and "twice_daily" in text
    assert "does not smoke" in text
    assert normalize("Shortness of breath") == normalize("SOB") == "dyspnea"
    assert normalize("nothing by mouth") == normalize("NPO") == "npo"


def test_normalize_numbers_and_hyphens() -> None:
    assert normalize("two weeks") == "2 weeks"
    assert normalize("BP 120 over 80") == "blood_pressure 120/80"
    assert normalize("1,000 mg") == "1000 mg"
    assert normalize("anti-depressants") == "antidepressants"
    assert normalize("left-sided") == "left sided"


def test_cased_abbreviations_only_in_capitals() -> None:
    assert "emergency_department" in normalize("Seen in the ER.")
    assert "emergency_department" not in normalize("er, I think so")


def test_stems() -> None:
    assert stem("coughing") == "cough"
    assert stem("tests") == "test"
    assert stem("diabetes") == stem("diabete") == "diabet"
    assert stem("running") == "run"
    assert stem("chest_pain") == "chest_pain"


def test_words_ending_in_eed_keep_their_ending() -> None:
    # "bleed" was stemmed to "ble" while "bleeding" gave "bleed": the two never met
    assert stem("bleed") == stem("bleeds") == stem("bleeding") == "bleed"
    assert stem("exceed") == stem("exceeding") == "exceed"
    assert stem("treated") == "treat"  # plain "-ed" is still stripped


def test_terms_match_and_cover() -> None:
    assert terms_match(stem("diabetic"), stem("diabetes"))
    assert terms_match("hypertensive", "hypertension")
    assert terms_match(stem("antidepressant"), stem("depression"))
    assert not terms_match("hypertension", "hypotension")
    assert not terms_match(stem("medical"), stem("medication"))
    assert term_covers("diabet", "type_2_diabetes")
    assert not term_covers("type_2_diabetes", "diabet")


def test_content_stems_drop_stopwords() -> None:
    assert content_stems("The patient has a cough and a fever.") == ["cough", "fever"]


def test_expand_abbreviations_for_embeddings() -> None:
    assert expand_abbreviations("NPO after midnight.") == "nothing by mouth after midnight."
    assert expand_abbreviations("Hx of HTN, SOB.") == "history of hypertension, shortness of breath."
