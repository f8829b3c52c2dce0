"""Clinical text processing for the offline judge, all on CPU and offline.

* :mod:`~clineval.nlp.sentences`: sentence splitting (pysbd + clinical fix-ups) and claims;
* :mod:`~clineval.nlp.embeddings`: all-MiniLM-L6-v2 sentence embeddings in numpy;
* :mod:`~clineval.nlp.assertions`: a ConText/NegEx-style negation, uncertainty,
  history, experiencer, hypothetical and resolution detector;
* :mod:`~clineval.nlp.clinical`: quantities and units (with conversions), frequencies, dates,
  laterality, drugs;
* :mod:`~clineval.nlp.biomarkers`: biomarker statuses ("EGFR exon 19 deletion detected",
  "ER/PR positive, HER2 negative") and the pairs two texts disagree or agree on;
* :mod:`~clineval.nlp.staging`: stages, classes and grades in short and long form (TNM,
  stage groups, CKD, NYHA, Gleason ...) and how a claim's relates to the evidence's;
* :mod:`~clineval.nlp.terms`: normalisation (abbreviations, synonyms), stems, term matching;
* :mod:`~clineval.nlp.analysis`: one cached analysis per short text;
* :mod:`~clineval.nlp.null_answers`: null answers ("None.", "NKDA") and their verdicts;
* :mod:`~clineval.nlp.lexicon`: the word lists;
* :mod:`~clineval.nlp.vocabulary`: the compiled clinical vocabulary (HPO, MONDO, the Disease
  Ontology, ICD-10-CM, drug names, Uberon): names, mentions, concepts and their relations.

Modules are imported on use; only :mod:`~clineval.nlp.embeddings` needs the model weights.
"""
