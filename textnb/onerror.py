"""count matrix + labels → the documents a model must learn to label them all: train on error.

bogofilter's bogominitrain and SpamBayes' "train on error or unsure": start from one document
of each class, then pass over the documents in order, learning only those the model so far gets
wrong or not surely right (the true class ahead of the runner-up by less than ``margin`` in
log-odds), until a pass learns nothing or ``max_passes`` passes are done. Each document is
learned at most once. The model stays small and leans on the hard cases; a corpus with far more
of one class than the other is not learned in that proportion.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

# The margin, in log-odds, by which the true class must lead: e² ≈ 7.4 to 1 (P ≈ 0.88 between
# two classes), SpamBayes' "unsure" zone for a model that is still learning.
MARGIN = 2.0
MAX_PASSES = 10


def train_on_error(X: Any, y: Sequence, new_model: Callable[[], Any], margin: float = MARGIN,
                   max_passes: int = MAX_PASSES) -> tuple[Any, np.ndarray, list[int]]:
    """(model, learned, per_pass): the model trained on error over the rows of the CSR matrix
    ``X`` (scipy.sparse, shape (n_documents, n_terms)) labelled ``y``; ``learned`` is a bool
    array of shape (n_documents,) marking the rows it learned (so the model equals
    ``new_model().fit(X[learned], y[learned])``), ``per_pass`` how many each pass learned."""
    if margin < 0 or max_passes < 1:
        raise ValueError(f"need margin >= 0 and max_passes >= 1, got {margin} and {max_passes}")
    labels = np.asarray(y)
    classes = np.unique(labels)
    if classes.size < 2:
        raise ValueError("training on error needs at least two classes")
    learned = np.zeros(labels.size, dtype=bool)
    seeds = [int(np.flatnonzero(labels == c)[0]) for c in classes]
    learned[seeds] = True
    model = new_model().fit(X[seeds], labels[seeds])
    column = {c: i for i, c in enumerate(model.classes_.tolist())}
    truth = [column[c] for c in labels.tolist()]
    indptr, indices, data = X.indptr, X.indices, X.data
    # A row's joint log-likelihood is bias + W[:, terms] · weights (the model's decomposition,
    # as the mail filter scores): one small product per row instead of a predict call.
    bias, weights = model.decomposition()
    per_pass = []
    for _ in range(max_passes):
        count = 0
        for i in np.flatnonzero(~learned).tolist():
            a, b = indptr[i], indptr[i + 1]
            jll = (bias + weights[:, indices[a:b]] @ data[a:b]).tolist()
            t = truth[i]
            # A few classes: plain Python is quicker than numpy calls on so small an array.
            lead = jll[t] - max(v for c, v in enumerate(jll) if c != t)
            if lead < margin:
                model.partial_fit(X[i], labels[i:i + 1])
                bias, weights = model.decomposition()
                learned[i] = True
                count += 1
        per_pass.append(count)
        if count == 0:
            break
    return model, learned, per_pass
