"""raw texts → clusters: EM over a mixture of Naive Bayes components (:class:`~textnb.nb.em.
MixtureNB`) on a TextClassifier's counts, the clusters its classes (``textnb cluster``)."""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from .classifier import TextClassifier
from .nb.em import MixtureNB
from .text.vocabulary import Vocabulary


# α for clustering 20 Newsgroups (python -m bench.em, one start each, seed 0): NMI 0.31 at
# α = 1, 0.46 at 0.3, 0.41 at 0.1, 0.27 at 0.01.
CLUSTER_ALPHA = 0.3


# Terms in a single document cannot tie documents together; dropping them halves |V| on 20NG.
CLUSTER_MIN_DF = 2


def cluster_texts(texts: Sequence[Any], n_clusters: int, *, classifier: Any = None,
                  callback: Callable[[int, int, float], None] | None = None,
                  **mixture: Any) -> tuple[Any, MixtureNB]:
    """Cluster raw texts: (a fitted TextClassifier whose classes are the clusters, the
    MixtureNB). Clusters are numbered by size, largest first, and named ``cluster-1`` …
    (zero-padded when there are ten or more, so their sorted order is their number order).

    ``classifier`` gives the tokenizer and vocabulary settings (default: multinomial, raw
    counts, α = CLUSTER_ALPHA, min_df = CLUSTER_MIN_DF); ``mixture`` the MixtureNB parameters;
    ``callback(start, iteration, L)`` reports progress.
    """
    clf = classifier or TextClassifier(model="multinomial", alpha=CLUSTER_ALPHA, norm=None,
                                       fit_prior=True, min_df=CLUSTER_MIN_DF,
                                       stop_words="english")
    texts = list(texts)
    clf._build()
    parts = clf._count(texts)
    clf.vocabulary_ = Vocabulary(min_df=clf.min_df, max_df=clf.max_df,
                                 max_features=clf.max_features)
    X = clf._weigh(clf.vocabulary_.fit_parts(counts for counts, _ in parts))
    mixture.setdefault("model", clf.model)
    mixture.setdefault("alpha", clf.alpha)
    mixture.setdefault("fit_prior", clf.fit_prior)
    result = MixtureNB(n_clusters, **mixture).fit(X, callback=callback)
    model = result.model_
    order = np.argsort(-model.class_count_, kind="stable")          # largest cluster first
    width = len(str(n_clusters)) if n_clusters >= 10 else 1
    model.classes_ = np.array([f"cluster-{i + 1:0{width}d}" for i in range(n_clusters)])
    model.class_count_ = model.class_count_[order]
    model.feature_count_ = np.ascontiguousarray(model.feature_count_[order])
    model._update()
    rank = np.empty(n_clusters, dtype=np.int64)
    rank[order] = np.arange(n_clusters)
    result.labels_ = rank[result.labels_]
    result.proba_ = result.proba_[:, order]
    clf.model_ = model
    clf._learned(np.concatenate([digests for _, digests in parts]),
                 model.classes_[result.labels_].astype(str))
    clf.cutoffs_ = None
    return clf, result
