"""MultiLabelClassifier ⇄ model file: settings, labels, stop words and the cross-validation
record in meta.json; terms, counts and thresholds as arrays (:mod:`textnb.store.container`)."""

from __future__ import annotations

import os

import numpy as np

from ..multilabel import MultiLabelClassifier
from ..text.vocabulary import Vocabulary
from . import container, schema
from .text_model import join_terms


KIND = schema.MULTILABEL


def model_kind(path: str | os.PathLike) -> str | None:
    """The "kind" a model file's meta.json declares, or None when it cannot be read as a textnb
    model (the loader of either kind then says what is wrong with it)."""
    meta = container.read_meta(path)
    return meta.get("kind") if meta is not None else None


def save_model(classifier: MultiLabelClassifier, path: str | os.PathLike) -> None:
    """Write a fitted classifier to ``path`` atomically: counts, thresholds, terms, settings."""
    classifier._check_fitted()
    # The scoring and α chosen are the model's settings: a file holds no "auto". A model of
    # both scorings ("per-label") holds the posterior's α there, and one-vs-rest's labels and α
    # in meta.json's "one_vs_rest".
    scoring, alphas = classifier.scoring_, classifier.alphas_
    params = dict(classifier.get_params(), scoring=scoring,
                  alpha=alphas["posterior" if scoring == "per-label" else scoring])
    params["ngram_range"] = list(params["ngram_range"])
    if not isinstance(params["stop_words"], str) and params["stop_words"] is not None:
        params["stop_words"] = sorted(params["stop_words"])
    meta = {"params": params, "labels": classifier.labels_.tolist(),
            "stop_words": list(classifier.stop_words_), "cv": classifier.cv_}
    if scoring == "per-label":
        meta["one_vs_rest"] = {"labels": classifier.labels_[classifier.one_vs_rest_].tolist(),
                               "alpha": alphas["one-vs-rest"]}
    problem = schema.multilabel_problem({**meta, "kind": KIND})
    if problem:
        raise ValueError(f"cannot save this classifier: {problem}")
    arrays = {"terms": np.frombuffer(join_terms(classifier.vocabulary_.terms_), dtype=np.uint8),
              "label_count": classifier.label_count_,
              "feature_count": classifier.feature_count_,
              "total_count": classifier.total_count_,
              "n_documents": np.array([classifier.n_documents_]),
              "thresholds": classifier.thresholds_}
    container.save(path, KIND, meta, arrays)


def load_model(path: str | os.PathLike, *, n_jobs: int | None = 1) -> MultiLabelClassifier:
    """Read a classifier written by :func:`save_model`; ModelFileError, one line naming the
    file, if it is not one by :mod:`textnb.store.container`'s rules: settings and sizes within
    bounds, arrays of the shapes the labels and terms imply, counts finite and non-negative,
    no label counted in more documents than there are. It works in ``n_jobs`` processes, not
    in as many as it was trained with."""
    model = container.read(path, KIND)
    arrays = model.arrays()
    meta = model.meta
    if (arrays["label_count"] > arrays["n_documents"][0]).any():
        raise model.corrupt("a label is counted in more documents than there are")
    # A file of before the posterior scoring holds thresholds on one-vs-rest log-odds.
    params = {"scoring": "one-vs-rest",
              **schema.with_legacy(meta["params"], schema.MULTILABEL_SETTINGS),
              "ngram_range": tuple(meta["params"]["ngram_range"]), "n_jobs": n_jobs}
    classifier = MultiLabelClassifier(**params)
    classifier.stop_words_ = list(meta["stop_words"])
    vocabulary = Vocabulary(min_df=params["min_df"], max_df=params["max_df"],
                            max_features=params["max_features"])
    vocabulary.terms_ = arrays["terms"]
    vocabulary.index_ = {term: i for i, term in enumerate(vocabulary.terms_)}
    classifier.vocabulary_ = vocabulary
    classifier.labels_ = np.array(meta["labels"], dtype=str)
    classifier.label_count_ = arrays["label_count"]
    classifier.feature_count_ = arrays["feature_count"]
    classifier.total_count_ = arrays["total_count"]
    classifier.n_documents_ = float(arrays["n_documents"][0])
    classifier.thresholds_ = arrays["thresholds"]
    classifier.cv_ = meta.get("cv")
    scoring = params["scoring"]
    if scoring == "per-label":
        rest = meta["one_vs_rest"]
        classifier._set_scoring(np.isin(classifier.labels_, rest["labels"]),
                                {"posterior": params["alpha"], "one-vs-rest": rest["alpha"]})
    else:
        classifier._set_scoring(np.full(classifier.labels_.size, scoring == "one-vs-rest"),
                                {scoring: params["alpha"]})
    classifier._update()
    return classifier
