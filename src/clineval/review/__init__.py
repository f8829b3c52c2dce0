"""Clinicians' review of a run: verdicts on cases and on their facts, sentences and turns,
queues of cases to review, and the agreement of metrics and judges with the reviewers.

* :mod:`clineval.review.schema`: the questions a reviewer answers (the review schema);
* :mod:`clineval.review.items`: what in a case can be reviewed (facts, sentences, turns);
* :mod:`clineval.review.queue`: which cases to review (random, stratified, disagreement);
* :mod:`clineval.review.data`: a case, its items and each reviewer's progress, from the store;
* :mod:`clineval.review.transfer`: export and import of reviews (CSV, JSON lines);
* :mod:`clineval.review.agreement`: metrics and judges against the reviewers.

The reviews themselves are stored by :mod:`clineval.store.reviews`; the viewer's review
mode (``clineval view --review``) is where reviewers give them.
"""
