"""raw texts → tokens → Vocabulary → weighted counts → Naive Bayes model: TextClassifier.

Its model file is :mod:`textnb.store.text_model`'s; the cross-validations of its cutoffs and
decision threshold are :mod:`textnb.decision.cutoffs`'; how it reads and counts its texts is
:mod:`textnb.text.features`'.
"""

from __future__ import annotations

import functools
import threading
from collections import Counter
from itertools import chain
from typing import Any, Iterable, Iterator, Sequence

import numpy as np

from . import defaults, incremental, settings
from .decision import cutoffs as _cutoffs
from .decision.rules import scores_unseen, spam_cutoffs
from .nb.discrete import BernoulliNB, ComplementNBWithPrior, DiscreteNB, MultinomialNB
from .nb.estimator import Parameters, not_fitted, sklearn_tags
from .nb.explain import Explanation, explain_document, informative_terms
from .nb.on_error import MARGIN, MAX_PASSES, ORDERS, take_rows, train_on_error
from .progress import phase
from .nb.sparse import CSR
from .text.counting import document_tokens
from .text.features import (Added, Text, check_in, check_lengths, check_training, count_stream,
                            encode_labels, import_meanwhile, label_list, noting_digests, peek,
                            text_iterable, text_list, weigh)
from .text.hashing import HashedVocabulary
from .text.stopwords import load_stop_words
from .text.tokens import MAX_TOKEN_LENGTH, MIN_TOKEN_LENGTH, Tokenizer, check_stemmer
from .text.vocabulary import Counts, Vocabulary, relabel

# "complement" keeps the class prior in its score (scikit-learn's ComplementNB drops it), so
# that fit_prior and class_prior take effect; with the default uniform priors the two agree.
MODELS = {"multinomial": MultinomialNB, "bernoulli": BernoulliNB,
          "complement": ComplementNBWithPrior}
# Documents scored as one part: its texts, tokens, counts and weights are held at once, and
# nothing of it is kept, so a smaller part costs no more time (20 Newsgroups' classify peak
# RSS, 2 workers: 105-108 MB with parts of 1,000 posts, 99 with 250; CPU time alike).
_SCORE_PART_DOCUMENTS = 250


# Updates of fitted classifiers in this process, one at a time: each builds the next version
# on the current one (a read takes no lock).
_WRITING = threading.RLock()


def _one_writer(method: Any) -> Any:
    @functools.wraps(method)
    def under_the_lock(*args: Any, **kwargs: Any) -> Any:
        with _WRITING:
            return method(*args, **kwargs)
    return under_the_lock


class TextClassifier(Parameters):
    """Naive Bayes on raw texts: ``fit(texts, labels)``, ``predict``, ``predict_proba``, ``explain``.

    A text is a ``str``, a :class:`~textnb.documents.message.Document` (whose header fields give
    prefixed tokens) or ``bytes``, read as a file's contents are
    (:func:`~textnb.documents.message.read_bytes`): a mail or news message is parsed into a
    Document, other bytes are decoded with a fallback, never an error. Bytes are parsed where
    they are tokenized, so in the worker processes too. Give mail and news as bytes: a ``str``
    is plain text, its header lines words like any other and its MIME encodings unread
    (20 Newsgroups' test posts as ``str``: 85.8% right, as ``bytes``: 86.5%).

    ``fit`` refuses at the call, before it reads a text, what it cannot honour: a setting
    beyond its rule (:data:`textnb.settings.RULES`, the model file's too), a single string or
    labels mixing strings and numbers as ``y``, a 2-D array of texts; a classifier used before
    ``fit`` raises :class:`~textnb.nb.estimator.NotFittedError`.

    The defaults (complement NB, α = 0.03, unit-length documents, uniform priors) won a 5-fold
    cross-validation of 160 settings on 20 Newsgroups and SpamAssassin together
    (docs/design/text-classification.md); ``TextClassifier(model="multinomial", alpha=1.0,
    norm=None, fit_prior=True)`` is the textbook model (Mitchell, Machine Learning, ch. 6).

    Parameters
    ----------
    model : {"complement", "multinomial", "bernoulli"}, default="complement"
        The event model.
    alpha : float, default=0.03
        Smoothing, as in :class:`~textnb.nb.discrete.MultinomialNB`.
    fit_prior : bool, default=False
        Learn the class priors from the counts (else uniform, unless ``class_prior``).
    class_prior : sequence of float, default=None
        The class priors, one a class in the order of their names.
    stop_words : str, collection of str or path, default="auto"
        "english" (NLTK's list), "english-without-negations" (that list less its negations
        and "very": :data:`textnb.text.stopwords.NEGATIONS`), "none", a file path, a
        collection of words, or "auto" (:meth:`default_stop_words`): the whole English list
        for mail, where ``spam_class`` is one of the classes, none for short texts, else the
        list without its negations (docs/design/text-classification.md).
    stemmer : {None, "porter", "snowball"}, default=None
        Stem tokens with NLTK.
    ngram_range : (int, int), default=None
        Word n-grams (min_n, max_n); None: words and word pairs, (1, 2), for two-class mail
        that is not full mail (``spam_class`` one of exactly two classes, and most of the first
        documents without a Received field) and for texts :meth:`default_ngram_range` finds
        short or numerous enough, else words, (1, 1). ``ngram_range_`` says which were counted.
    lowercase : bool, default=True
        Fold tokens to lower case.
    max_token_length : int, default=MAX_TOKEN_LENGTH
        Longer tokens are dropped.
    min_token_length : int, default=MIN_TOKEN_LENGTH
        Body words shorter than this are dropped (2: lone letters and digits), but a CJK
        character; header fields' words are kept (:class:`~textnb.text.tokens.Tokenizer`).
        A model file written before this setting keeps 1.
    min_df, max_df, max_features : int or float, default=1, 1.0, None
        Vocabulary pruning at ``fit`` (see :class:`~textnb.text.vocabulary.Vocabulary`).
    tf : {"raw", "log", "binary"}, default="raw"
        Term weights: counts, log(1 + count), or presence (Wang & Manning, 2012).
    norm : {None, "l2"}, default="l2"
        Scale each document's weighted counts to unit length, so that a long document does not
        outvote many short ones (Rennie et al., 2003).
    n_jobs : int, default=None
        Worker processes (:mod:`textnb.workers`) that parse, tokenize and count, and that walk
        when training on error; None: every core for 2000 texts or more, else this process;
        1: this process; -1: every core.
    spam_class : str, default=None
        For two-class mail, the spam class: ``fit`` then also learns the cutoffs on the spam
        log-odds (``cutoffs_``) from out-of-fold scores (:mod:`textnb.decision.cutoffs`), which
        ``textnb classify`` and ``filter`` decide by, and leaves out of them and of the model
        the messages those scores place among the other class (``suspects_``). None (the
        CLI's ``train`` sets "spam"): no cutoffs.
    target_fpr, target_fnr, target_unsure : float, default=0.001, 0.01, 0.02
        The share of ham the spam cutoff may call spam, of spam the ham cutoff may call ham,
        and of all messages left between them, on the out-of-fold scores.
    cutoff_folds : int, default=5
        Folds of that cross-validation (fewer when a class has fewer documents).
    keep_suspects : bool, default=False
        Keep the messages the out-of-fold scores place among the other class.
    training : {"auto", "full", "on-error"}, default="auto"
        Count every document ("full"), or only those the model gets wrong or is unsure of,
        pass after pass ("on-error": :mod:`textnb.nb.on_error`, with ``margin`` and
        ``max_passes``); "auto": with a spam class, the one whose out-of-fold decisions
        misplace fewer messages, or "on-error" where the ham are too few to read the spam
        cutoff off their scores (:func:`textnb.decision.cutoffs.extrapolated`); else "full".
    margin : float, default=MARGIN
        On error: the log-odds by which the right class must lead.
    max_passes : int, default=MAX_PASSES
        On error: at most this many passes.
    hash_bits : int, default=None
        None: a vocabulary of terms; N: terms hashed to 2**N columns and no terms kept
        (:mod:`textnb.text.hashing`), pruning applying to columns.
    decision_threshold : "auto", None or float, default="auto"
        How ``predict`` decides between two classes: "auto" at the log-odds threshold (of
        ``classes_[1]`` over ``classes_[0]``) with the fewest mistakes on out-of-fold scores
        taken as a new document's are, learned by ``fit`` (``decision_threshold_``) with at
        least :data:`~textnb.decision.cutoffs.THRESHOLD_MIN` documents a class, as
        scikit-learn's TunedThresholdClassifierCV tunes one; None: the most probable class; a
        number: that threshold (docs/design/decision-threshold.md).
    unseen : {"auto", "drop", "score"}, default="auto"
        A new document's words outside the vocabulary: dropped (Mitchell's), or scored each as
        a term no class counted (:attr:`~textnb.nb.discrete.DiscreteNB.unseen_weight_`), as a
        cross-validation fold scores a held-out document's words its training lacks; "auto":
        scored with more than two classes, dropped with two, whose cutoffs are measured on
        held-out scores that drop them (docs/design/text-classification.md).

    Examples
    --------
    >>> clf = TextClassifier(stop_words="none").fit(
    ...     ["cheap pills now", "cheap money now", "meeting at noon", "lunch at noon"],
    ...     ["spam", "spam", "ham", "ham"])
    >>> clf.predict(["cheap lunch pills"]).tolist()
    ['spam']
    """

    def __init__(self, *, model: str = "complement", alpha: float = 0.03, fit_prior: bool = False,
                 class_prior: Sequence[float] | None = None, stop_words: Any = "auto",
                 stemmer: str | None = None, ngram_range: Sequence[int] | None = None,
                 lowercase: bool = True, max_token_length: int = MAX_TOKEN_LENGTH,
                 min_token_length: int = MIN_TOKEN_LENGTH,
                 min_df: int | float = 1, max_df: int | float = 1.0,
                 max_features: int | None = None, tf: str = "raw", norm: str | None = "l2",
                 n_jobs: int | None = None, spam_class: str | None = None,
                 target_fpr: float = _cutoffs.TARGET_FPR, target_fnr: float = _cutoffs.TARGET_FNR,
                 target_unsure: float = _cutoffs.TARGET_UNSURE,
                 cutoff_folds: int = _cutoffs.FOLDS, keep_suspects: bool = False,
                 training: str = "auto", margin: float = MARGIN, max_passes: int = MAX_PASSES,
                 hash_bits: int | None = None, decision_threshold: Any = "auto",
                 unseen: str = "auto") -> None:
        self.model = model
        self.alpha = alpha
        self.fit_prior = fit_prior
        self.class_prior = class_prior
        self.stop_words = stop_words
        self.stemmer = stemmer
        self.ngram_range = ngram_range
        self.lowercase = lowercase
        self.max_token_length = max_token_length
        self.min_token_length = min_token_length
        self.min_df = min_df
        self.max_df = max_df
        self.max_features = max_features
        self.tf = tf
        self.norm = norm
        self.n_jobs = n_jobs
        self.spam_class = spam_class
        self.target_fpr = target_fpr
        self.target_fnr = target_fnr
        self.target_unsure = target_unsure
        self.cutoff_folds = cutoff_folds
        self.keep_suspects = keep_suspects
        self.training = training
        self.margin = margin
        self.max_passes = max_passes
        self.hash_bits = hash_bits
        self.decision_threshold = decision_threshold
        self.unseen = unseen

    # (messages learned by textnb's learners, of them errors): textnb.online.learning_weight's.
    learned_errors_: tuple[int, int] = (0, 0)

    def __sklearn_tags__(self) -> Any:
        """scikit-learn >= 1.6 tags (GridSearchCV asks, to stratify its folds): a classifier of
        strings. Only scikit-learn calls this; it is imported there."""
        return sklearn_tags(one_d_array=True, two_d_array=False, string=True)

    @property
    def classes_(self) -> np.ndarray:
        return self.model_.classes_

    # The fitted vocabulary and model are one version, (vocabulary, model), replaced whole: a
    # read takes it once and answers from it, while partial_fit and unlearn build the next
    # one on copies and swap it in (thread safety, docs/guide/python.md).
    @property
    def vocabulary_(self) -> Vocabulary:
        found = self.__dict__.get("_fitted", (None, None))[0]
        if found is None:
            raise AttributeError("vocabulary_")
        return found

    @vocabulary_.setter
    def vocabulary_(self, vocabulary: Vocabulary) -> None:
        self._fitted = (vocabulary, self.__dict__.get("_fitted", (None, None))[1])

    @property
    def model_(self) -> DiscreteNB:
        found = self.__dict__.get("_fitted", (None, None))[1]
        if found is None:
            raise AttributeError("model_")
        return found

    @model_.setter
    def model_(self, model: DiscreteNB) -> None:
        self._fitted = (self.__dict__.get("_fitted", (None, None))[0], model)

    def _version(self) -> tuple[Vocabulary, DiscreteNB]:
        """The fitted (vocabulary, model), taken once by a read."""
        self._check_fitted()
        return self._fitted

    # -- learning ----------------------------------------------------------------------

    def fit(self, texts: Iterable[Text], y: Iterable, unlabeled: Iterable[Text] | None = None,
            em_weight: float = 1.0, em_iterations: int | None = None,
            callback: Any = None, em_start: str = "labeled") -> "TextClassifier":
        """Build the vocabulary and count the documents of ``texts`` under their labels: every
        document (``training="full"``), those training on error picks (``"on-error"``), or
        whichever of the two cross-validates better (``"auto"``, with a spam class).

        ``texts`` may be an iterator: it is read once, a few parts ahead of the counting, so
        its documents are never all held; ``y`` is read after it (a reader may fill a list of
        labels as it yields the texts).

        With ``unlabeled`` texts, the model is fitted by EM on both (semi-supervised NB,
        :mod:`textnb.nb.em`; multinomial or Bernoulli models only, every labeled document
        counted): the vocabulary holds their terms too, each unlabeled text adds its counts to
        every class in proportion to P(class|text), weighted by ``em_weight`` (λ), for at most
        ``em_iterations`` iterations; ``callback(iteration, log_likelihood)`` reports each, and
        ``em_history_`` keeps the log-likelihoods. EM starts from the model of the labeled texts
        (``em_start="labeled"``) or from the classes complement NB gives the unlabeled ones
        (``"complement"``: :func:`textnb.nb.em.complement_start`). Only labeled texts can be
        unlearned.

        >>> clf = TextClassifier(model="multinomial", stop_words="none").fit(
        ...     ["cheap pills", "meeting at noon"], ["spam", "ham"],
        ...     unlabeled=["cheap pills cheap viagra", "viagra offer", "lunch meeting"])
        >>> clf.predict(["viagra"]).tolist(), len(clf.em_history_) > 0
        (['spam'], True)
        """
        self._check_settings()  # before a text is read
        texts = text_iterable(texts)
        if not isinstance(y, Iterator):
            y = label_list(y)  # a list stays itself: a reader may be filling it
            if hasattr(texts, "__len__"):
                check_training(texts, y)  # before any work, where the lengths are known
        labels = y if hasattr(y, "__len__") else ()
        sample, texts = self._peek(texts, labels)
        self.ngram_range_ = self.default_ngram_range(labels, sample)
        self._build(labels, sample)
        extra = [] if unlabeled is None else text_list(unlabeled)
        if extra and self.training == "on-error":
            raise ValueError("training on error and EM on unlabeled texts do not combine")
        if em_start not in ("labeled", "complement"):
            raise ValueError(f"em_start must be 'labeled' or 'complement', not {em_start!r}")
        return self._fit_counted(self._count_stream(chain(texts, extra)), y, len(extra),
                                 em_weight, em_iterations, callback, em_start)

    def _fit_counted(self, parts: Iterable[tuple[Counts, np.ndarray]], labels: Iterable,
                     unlabeled: int = 0, em_weight: float = 1.0,
                     em_iterations: int | None = None, callback: Any = None,
                     em_start: str = "labeled") -> "TextClassifier":
        """``fit`` on texts counted in parts (``_count_stream``'s, labeled texts first, then
        ``unlabeled`` texts without labels): :mod:`textnb.distributed` counts on a cluster.
        ``labels`` is read after the parts, so a reader may fill it as it reads the texts."""
        vocabulary = self._vocabulary()
        found: list[np.ndarray] = []
        import_meanwhile("numpy.random", "numpy.ma")  # the cross-validations' folds import them
        X = vocabulary.fit_parts(noting_digests(parts, found))
        labels = list(labels)
        check_training(range(X.shape[0] - unlabeled), labels)
        digests = np.concatenate(found)[:len(labels)]
        del found
        return self._fit_vocabulary(vocabulary, X, labels, digests, unlabeled, em_weight,
                                    em_iterations, callback, em_start)

    def _fit_vocabulary(self, vocabulary: Vocabulary, X: CSR, labels: list,
                        digests: np.ndarray, unlabeled: int = 0, em_weight: float = 1.0,
                        em_iterations: int | None = None, callback: Any = None,
                        em_start: str = "labeled") -> "TextClassifier":
        """``fit`` on the vocabulary of the texts and their counts X (labeled rows first, then
        ``unlabeled`` rows) and the labeled texts' digests: what :meth:`_fit_counted` builds,
        and what a tuning that counted so hands over (:meth:`textnb.evaluation.tuning.Tuning.refit`)."""
        # The raw counts: held-out documents are scored as new ones are, their rows cut to a
        # model's terms and weighted again (_out_of_fold, _left_out), for the cutoffs' rates
        # and the decision threshold.
        counts, X = X, self._weigh(X)
        raw = counts if self.decision_threshold == "auto" else None
        self.__dict__.pop("learned_errors_", None)  # a new model: nothing learned online yet
        if unlabeled:
            return self._fit_em(vocabulary, X, labels, digests, em_weight, em_iterations,
                                callback, em_start)
        if self.learns_cutoffs(labels):
            with phase("cross-validating the training and the cutoffs"):
                training, (self.cutoffs_, suspect, as_new) = _cutoffs.choose_training(
                    self, X, counts, labels, digests)
        else:
            training = "full" if self.training == "auto" else self.training
            self.cutoffs_, suspect, as_new = None, None, None
        # The messages the out-of-fold scores place among the other class are left out of
        # the model as they were of the cutoffs' choice (textnb.decision.cutoffs.suspects).
        self.suspects_ = np.flatnonzero(suspect) if suspect is not None else np.empty(0, int)
        if self.suspects_.size:
            keep = ~suspect
            X, digests, counts = take_rows(X, keep), digests[keep], take_rows(counts, keep)
            raw = None if raw is None else counts
            as_new = None if as_new is None else as_new[keep]
            labels = np.array(labels, dtype=object)[keep].tolist()
        if self.cutoffs_:
            with phase("rating the cutoffs"):
                if training == "full":  # scores the threshold's too
                    as_new = _cutoffs.left_out(self, counts, X, labels, digests)
                self.cutoffs_ = _cutoffs.rated(self, self.cutoffs_, as_new, labels,
                                               "left out" if training == "full" else "as new")
        with phase("cross-validating the decision threshold"):
            self.decision_threshold_ = _cutoffs.learn_threshold(self, X, raw, labels, training,
                                                                as_new, groups=digests)
        del raw, counts
        if training == "full":
            self.vocabulary_, self.model_ = vocabulary, self.new_model().fit(X, labels)
            self._learned(digests, labels)
            self.on_error_ = None
        else:
            with phase("training on error"):
                self._fit_on_error(vocabulary, X, labels, digests)
        if self.cutoffs_:
            self.cutoffs_["training"] = training
        return self

    def _fit_em(self, vocabulary: Vocabulary, X: CSR, labels: list, digests: np.ndarray,
                em_weight: float, em_iterations: int | None, callback: Any,
                start: str = "labeled") -> "TextClassifier":
        """Semi-supervised fit: X holds the labeled rows, then the unlabeled ones; EM starts
        from the model of the labeled rows, or (``start="complement"``) from complement NB's
        classes of the unlabeled ones."""
        from .nb.em import MAX_ITER, complement_start, expectation_maximization, split_rows
        X, U = split_rows(X, len(labels))

        def fit(Xf: Any, yf: Any, report: Any = None) -> DiscreteNB:
            model = self.new_model()
            first = complement_start(Xf, yf, U) if start == "complement" else None
            self.em_history_, _ = expectation_maximization(
                model, Xf, yf, U, unlabeled_weight=em_weight,
                max_iter=em_iterations or MAX_ITER, callback=report, initial_proba=first)
            return model

        with phase("EM"):
            self.vocabulary_, self.model_ = vocabulary, fit(X, labels, callback)
        history = self.em_history_
        self._learned(digests, labels)
        self.on_error_ = None
        with phase("cross-validating the cutoffs (EM in each fold)"):
            self.cutoffs_, _, _ = _cutoffs.learn_cutoffs(self, X, labels, fit=fit,
                                                         groups=digests)
        self.suspects_ = np.empty(0, int)
        self.decision_threshold_ = None
        if self.cutoffs_:
            self.cutoffs_["training"] = "full"
        self.em_history_ = history  # the folds' EM runs (cutoffs) overwrote it
        return self

    def on_error_model(self, X: Any, y: Any) -> DiscreteNB:
        """A model of the weighted counts X and labels y trained on error with these settings
        (``margin``, ``max_passes``, ``n_jobs``; :func:`textnb.nb.on_error.train_on_error`)."""
        return train_on_error(X, y, self.new_model, self.margin, self.max_passes,
                              n_jobs=self.n_jobs)[0]

    def _fit_on_error(self, vocabulary: Vocabulary, X: CSR, labels: list,
                      digests: np.ndarray) -> None:
        """The model of the documents training on error picks (:mod:`textnb.nb.on_error`), over the
        terms they hold: ``fit`` on those documents alone, each weighted by the share of the walks
        that learned it, but for pruning (``min_df``, ``max_df``, ``max_features``), which saw
        them all. ``on_error_`` says how many documents were learned and how many each pass of
        the first walk learned, of how many of each class."""
        _, weight, per_pass = train_on_error(X, labels, self.new_model, self.margin,
                                             self.max_passes, n_jobs=self.n_jobs)
        learned = weight > 0
        rows = take_rows(X, learned)
        used = np.flatnonzero(np.bincount(rows.indices, minlength=X.shape[1]))
        if isinstance(vocabulary, HashedVocabulary):
            self.vocabulary_ = vocabulary.subset(used)
        else:
            self.vocabulary_ = Vocabulary(min_df=self.min_df, max_df=self.max_df,
                                          max_features=self.max_features)
            self.vocabulary_.terms_ = [vocabulary.terms_[j] for j in used.tolist()]
        chosen = np.array(labels, dtype=object)[learned].tolist()
        column = np.cumsum(np.bincount(used, minlength=X.shape[1])) - 1  # each used one's place
        self.model_ = self.new_model().fit(relabel(rows, column, used.size), chosen,
                                            sample_weight=weight[learned])
        self._learned(digests[learned], chosen, weight[learned])
        # learned: by any of the walks; the first walk's: one of each class to start it, then
        # per_pass (what train's summary says, each number named).
        self.on_error_ = {"documents": len(labels), "learned": int(learned.sum()),
                          "walks": ORDERS, "started": len(set(labels)),
                          "passes": per_pass, "per_class": dict(Counter(labels))}

    def default_ngram_range(self, labels: Iterable, sample: Iterable[Text] = (),
                            documents: int | None = None) -> tuple[int, int]:
        """The word n-grams counted for documents of these labels of which ``sample`` are some
        (:func:`textnb.defaults.ngram_range`)."""
        return defaults.ngram_range(self, list(labels), sample, documents)

    def default_stop_words(self, labels: Iterable = (), sample: Iterable[Text] = ()) -> Any:
        """The stop words for documents of these labels of which ``sample`` are some
        (:func:`textnb.defaults.stop_words`)."""
        return defaults.stop_words(self, labels, sample)

    def _peek(self, texts: Iterable[Text], labels: Sequence) -> tuple[list[Text], Iterable[Text]]:
        """The first documents of ``texts`` if ``default_ngram_range`` or
        ``default_stop_words`` needs them for these labels (none otherwise: an iterator is read
        no further ahead than counting reads it), and ``texts``."""
        labels = list(labels)
        needed = defaults.may_pair(self, labels) or defaults.stop_words_by_length(self, labels)
        return peek(texts) if needed else ([], texts)

    def _ngrams(self) -> tuple[int, int]:
        """The n-grams counted: as fitted (``ngram_range_``), else as set (None: words)."""
        return self.__dict__.get("ngram_range_") or tuple(self.ngram_range or (1, 1))

    def learns_cutoffs(self, labels: list) -> bool:
        """Whether ``fit`` on documents of these labels learns spam cutoffs: ``spam_class`` is
        one of exactly two classes."""
        classes = set(map(str, labels))
        return self.spam_class is not None and len(classes) == 2 and self.spam_class in classes

    @_one_writer
    def partial_fit(self, texts: Iterable[Text], y: Iterable,
                    classes: Iterable | None = None) -> "TextClassifier":
        """Add documents (new terms and new classes too) to the counts.

        The vocabulary grows with every new token; ``min_df``, ``max_df`` and ``max_features``
        prune only at ``fit``. Training in pieces gives the same model as training at once.
        ``classes``, as scikit-learn's ``partial_fit`` takes it, names every class there will
        be: those not among ``y`` yet are classes of no documents (``predict_proba`` has their
        columns from the first call), and a label of ``y`` outside them is a ValueError.

        ``texts`` may be an iterator: it is read once, and each part of it is counted and
        added before the next is read, so its documents are never all held; ``y`` is read as
        they are (a reader may fill a list of labels as it yields the texts).
        """
        texts = text_iterable(texts)
        labels = label_list(y)
        if classes is not None:
            classes = np.unique(np.asarray(list(classes)))
            if hasattr(texts, "__len__"):
                check_in(labels, classes)
        if hasattr(texts, "__len__"):
            check_lengths(texts, labels)  # before any work, where the lengths are known
        one_by_one = incremental.one_by_one(self, texts, labels, classes)
        if one_by_one is not None:
            for row, c in zip(incremental.rows(self, texts), one_by_one):
                incremental.apply(self, row, c)  # a new version a document
            return self
        fitted = hasattr(self, "model_")
        if not fitted:
            sample, texts = self._peek(texts, labels)
            self.ngram_range_ = self.default_ngram_range(labels, sample)
            self._build(labels)
            vocabulary = self._vocabulary()
            if self.hash_bits is None:
                vocabulary.terms_, vocabulary.index_ = [], {}
        else:  # the next version is built on copies, swapped in whole when done
            vocabulary = incremental.copy_vocabulary(self.vocabulary_)
            current = incremental.copy_model(self.model_)
        first = len(vocabulary) if fitted else 0
        added = Added(self.new_model()._binary)
        digests, n_texts = [], 0
        try:
            for counts, found in self._count_stream(texts):
                X = self._weigh(vocabulary._extend(counts))
                n_texts += X.shape[0]
                if n_texts <= len(labels):
                    added.add(X, labels[n_texts - X.shape[0]:n_texts])
                digests.append(found)
                del counts, X  # before the next part is counted
            check_lengths(range(n_texts), labels)
            if classes is not None:
                check_in(labels, classes)  # the labels of an iterator, read with its texts
            if not fitted and not n_texts:
                raise ValueError("cannot fit on an empty training set")
            order = vocabulary._settle(first)
        except BaseException:
            vocabulary._forget(first)
            raise
        if n_texts:
            model = self.new_model()
            model.classes_, class_count, counts = added.counts(len(vocabulary), order)
            model.restore_counts(class_count, counts)
            if fitted:
                if order is not None:  # the old columns among the new, in numpy.insert's terms
                    old = np.argsort(order, kind="stable")[:first]
                    new = np.setdiff1d(np.arange(len(vocabulary)), old)
                    current.insert_terms(np.searchsorted(old, new))
                current.merge(model)
            else:
                self.vocabulary_, self.model_ = vocabulary, model
                self._learned(np.zeros(0, dtype=np.uint64), [])
                self.cutoffs_ = None  # learned by fit, or by textnb tune-cutoffs
                self.__dict__.pop("learned_errors_", None)
                self.decision_threshold_ = None
        target = current if fitted else self.model_
        if classes is not None and np.setdiff1d(classes, target.classes_).size:
            target._add_classes(classes)
            target._update()
        if fitted:
            self._fitted = (vocabulary, current)
        if len(self.model_.classes_) != 2:
            self.cutoffs_ = None  # spam and ham cutoffs say nothing once a third class is added
            self.decision_threshold_ = None
        names, codes = encode_labels(labels, self._digest_names.tolist())
        self._learned(np.concatenate([self.digests_, *digests]), names,
                      np.append(self.digest_weights_, np.ones(len(labels))),
                      codes=np.concatenate([self._digest_codes, codes]))
        return self

    def learn_thresholds(self, texts: Iterable[Text], y: Iterable) -> "TextClassifier":
        """Learn what ``fit`` cross-validates for two classes, a mail model's spam and ham
        cutoffs and the decision threshold, for a model that counted every document it learned,
        from some of them: ``texts`` labelled ``y``, each learned under its label
        (:func:`textnb.decision.cutoffs.learn_thresholds`)."""
        with phase("cross-validating the cutoffs on a sample"):
            return _cutoffs.learn_thresholds(self, texts, y)

    def _learned(self, digests: np.ndarray, labels: Any, weights: Any = None,
                 codes: np.ndarray | None = None) -> None:
        """Record the learned documents: digest, label and the weight each has in the counts
        (1, or for training on error the share of the walks that learned it), what ``unlearn``
        takes back. With ``codes``, ``labels`` are the distinct names that they number."""
        self.digests_ = np.asarray(digests, dtype=np.uint64)
        if codes is None:
            labels, codes = encode_labels(labels)
        # A number a document, not its label's string: a million documents of 20 Newsgroups'
        # names took 92 MB as a numpy string array.
        self._digest_names, self._digest_codes = np.asarray(labels, dtype=str), codes
        self.digest_weights_ = (np.ones(self.digests_.size) if weights is None
                                else np.asarray(weights, dtype=float))

    @property
    def digest_labels_(self) -> np.ndarray:
        """The label each learned document was learned under, in ``digests_``'s order."""
        try:
            return self._digest_names[self._digest_codes]
        except AttributeError:
            raise AttributeError("digest_labels_") from None

    @_one_writer
    def unlearn(self, texts: Iterable[Text], y: Iterable) -> "TextClassifier":
        """Remove documents learned before under the same labels; ValueError if one was not."""
        self._check_fitted()
        return incremental.unlearn(self, text_list(texts), label_list(y))

    def merge(self, other: "TextClassifier") -> "TextClassifier":
        """Add another classifier's counts (vocabularies are united): equals fitting on both."""
        self._check_fitted()
        other._check_fitted()
        return incremental.merge(self, other)

    # -- prediction --------------------------------------------------------------------

    def transform(self, texts: Iterable[Text]) -> CSR:
        """Weighted counts of the vocabulary's terms: CSR of shape (n_documents, n_terms)."""
        vocabulary, _ = self._version()
        parts = self._count_stream(text_iterable(texts), digests=False)
        return self._weigh(vocabulary.count_parts((counts for counts, _ in parts),
                                                  self._scores_unseen()))

    def counts(self, texts: Iterable[Text]) -> tuple[CSR, np.ndarray]:
        """The raw counts of the vocabulary's terms in ``texts``, CSR of shape (n_documents,
        n_terms), what ``fit`` weighs, and each text's digest (uint64), as ``fit`` records it."""
        self._check_fitted()
        found: list[np.ndarray] = []
        X = self.vocabulary_.count_parts(noting_digests(self._count_stream(
            text_iterable(texts)), found))
        return X, (np.concatenate(found) if found else np.zeros(0, dtype=np.uint64))

    def _scores(self, texts: Iterable[Text], score: Any) -> np.ndarray:
        """``score(model, X)`` of each part of the texts' weighted counts, stacked: a
        document's score is its own row's, and the parts' counts are let go as they are
        scored. One version of the model answers throughout (:meth:`_version`)."""
        vocabulary, model = self._version()  # first: it says "not fitted" when unfitted
        parts = self._count_stream(text_iterable(texts), digests=False,
                                   size=_SCORE_PART_DOCUMENTS)
        unseen = self._scores_unseen()
        scored = [score(model, self._weigh(vocabulary.count_parts([counts], unseen)))
                  for counts, _ in parts]
        return (np.concatenate(scored) if scored
                else score(model, vocabulary.count_parts([], unseen)))

    def _scores_unseen(self) -> bool:
        """Whether new words are scored (:func:`textnb.decision.rules.scores_unseen`)."""
        return scores_unseen(self.__dict__.get("unseen", "drop"), self.classes_)

    def predict_joint_log_proba(self, texts: Iterable[Text]) -> np.ndarray:
        """log P(c) + log P(x|c): ndarray of shape (n_documents, n_classes)."""
        return self._scores(texts, lambda model, X: model.predict_joint_log_proba(X))

    def predict_log_proba(self, texts: Iterable[Text]) -> np.ndarray:
        """log P(c|x): ndarray of shape (n_documents, n_classes), columns in ``classes_`` order."""
        return self._scores(texts, lambda model, X: model.predict_log_proba(X))

    def predict_proba(self, texts: Iterable[Text]) -> np.ndarray:
        """P(c|x): ndarray of shape (n_documents, n_classes), rows summing to 1."""
        return self._scores(texts, lambda model, X: model.predict_proba(X))

    def predict(self, texts: Iterable[Text]) -> np.ndarray:
        """The label of each text, ndarray of shape (n_documents,): of two classes, the second
        where its log-odds over the first reach ``decision_threshold_`` (when learned or
        set), else the most probable."""
        return self._scores(texts, self._labels)

    def decision_function(self, texts: Iterable[Text]) -> np.ndarray:
        """Of two classes, ln P(second class|x) − ln P(first class|x) of each text, shape
        (n_documents,), as scikit-learn's binary classifiers give it (above 0 leans to
        ``classes_[1]``): finite where ``predict_proba`` rounds to 1 and 0, so it ranks (ROC
        AUC) what those probabilities tie. Of more classes, ln P(c|x), (n_documents, n_classes)."""
        self._check_fitted()
        if len(self.classes_) != 2:
            return self.predict_log_proba(texts)
        return self._scores(texts, lambda model, X: _cutoffs.two_class_log_odds(model, X))

    def spam_status(self, texts: Iterable[Text]) -> np.ndarray:
        """Each text's status, spam, ham or unsure, as ``textnb classify`` and ``filter``
        decide it: its spam log-odds ln P(spam|x) − ln P(ham|x) at or above the spam cutoff, at or
        below the ham cutoff, or between; the cutoffs ``fit`` learned (``cutoffs_``), else
        bogofilter's, P(spam|x) 0.99 and 0.45. ValueError unless there are two classes, one of
        them the spam class (``spam_class``, else one named spam, Junk, Bulk Mail, ...)."""
        self._check_fitted()
        cutoffs = spam_cutoffs(self.classes_, self.__dict__.get("cutoffs_"), self.spam_class,
                              learned_errors=self.learned_errors_)
        if cutoffs is None:
            names = [str(c) for c in self.classes_]
            raise ValueError(f"spam_class {self.spam_class!r} is not one of the classes {names}"
                             if self.spam_class is not None and len(names) == 2 else
                             f"spam_status needs two classes, one of them spam (spam_class); "
                             f"the classes are {names}")
        spam, high, low = cutoffs
        log_odds = self.decision_function(texts)
        if str(self.classes_[1]) != spam:
            log_odds = -log_odds
        return np.where(log_odds >= high, "spam", np.where(log_odds <= low, "ham", "unsure"))

    def _labels(self, model: DiscreteNB, X: CSR) -> np.ndarray:
        """The label of each row of the weighted counts X, as ``predict`` decides it by
        ``model`` (the classifier's)."""
        threshold = self.__dict__.get("decision_threshold_")
        if threshold is None or len(model.classes_) != 2:
            return model.predict(X)
        return model.classes_[(_cutoffs.two_class_log_odds(model, X) >= threshold).astype(int)]

    def score(self, texts: Iterable[Text], y: Iterable,
              sample_weight: Sequence[float] | None = None) -> float:
        """Accuracy: the (weighted) share of ``texts`` whose predicted label is ``y``'s.

        scikit-learn's default classifier score, so that GridSearchCV and cross_val_score work.
        """
        texts, labels = text_list(texts), label_list(y)
        check_lengths(texts, labels)
        hits = self.predict(texts) == np.asarray(labels)
        return float(np.average(hits, weights=sample_weight))

    def explain(self, text: Text, top: int = 10, label: Any = None) -> Explanation:
        """Why ``text`` got its label (``predict``'s, or ``label``, a decision made otherwise, as
        by cutoffs) rather than the most probable other class: prior log-odds and each term's
        log-odds contribution."""
        vocabulary, model = self._version()
        X = self._weigh(vocabulary.count_parts(
            (counts for counts, _ in self._count_stream([text], digests=False)),
            self._scores_unseen()))
        terms = (vocabulary.names(self.tokenize([text])[0])
                 if isinstance(vocabulary, HashedVocabulary) else vocabulary.terms_)
        if label is None:
            label = self._labels(model, X)[0]
        return explain_document(model, terms, X, top=top, label=label)

    def informative_terms(self, top: int = 10) -> dict[Any, list[tuple[str, float]]]:
        """Per class, the terms with the largest log-likelihood ratio against the other classes
        (for a hashed vocabulary, "#<column>": the terms are not kept)."""
        vocabulary, model = self._version()
        return informative_terms(model, vocabulary.terms_, top=top)

    # -- tokens and weights ------------------------------------------------------------

    def tokenize(self, texts: Iterable[Text]) -> list[list[str]]:
        """Token lists of ``texts``, in order."""
        tokenizer = self._tokenizer()
        return [document_tokens(tokenizer, text) for text in text_list(texts)]

    def _count(self, texts: list[Text], digests: bool = True) -> list[tuple[Counts, np.ndarray]]:
        """:meth:`_count_stream`'s parts as a list."""
        return list(self._count_stream(texts, digests))

    def _count_stream(self, texts: Iterable[Text], digests: bool = True,
                      size: int = 0) -> Iterator[tuple[Counts, np.ndarray]]:
        """:func:`textnb.text.features.count_stream` with this classifier's tokenizer and
        ``n_jobs``."""
        problem = settings.setting_problem("n_jobs", self.n_jobs)  # set since fit, perhaps
        if problem:
            raise ValueError(problem)
        return count_stream(self._tokenizer(), texts, self.n_jobs, digests, size)

    def _weigh(self, X: CSR) -> CSR:
        """X weighed as this classifier weighs documents (:func:`textnb.text.features.weigh`)."""
        return weigh(X, self.model, self.tf, self.norm)

    def _build(self, labels: Iterable = (), sample: Iterable[Text] = ()) -> None:
        """Validate the settings and load the stop words for documents of these labels, of
        which ``sample`` are some (kept for the model file)."""
        self._check_settings()
        self.stop_words_ = sorted(load_stop_words(self.default_stop_words(labels, sample)))
        self.__dict__.pop("_cached_tokenizer", None)

    def _check_settings(self) -> None:
        """ValueError naming the first setting that breaks its rule (:data:`textnb.settings.RULES`,
        the model file's too); TextnbError if stemming is asked for without NLTK."""
        problem = settings.problem(self.get_params())
        if problem:
            raise ValueError(problem)
        if self.stemmer is not None:
            check_stemmer()

    def _tokenizer(self) -> Tokenizer:
        cached = self.__dict__.get("_cached_tokenizer")
        if cached is None:
            if not hasattr(self, "stop_words_"):
                self._build()
            cached = self._cached_tokenizer = Tokenizer(
                lowercase=self.lowercase, stop_words=self.stop_words_, stemmer=self.stemmer,
                ngram_range=self._ngrams(), max_length=self.max_token_length,
                min_length=self.min_token_length)
        return cached

    def _vocabulary(self) -> Vocabulary:
        """An unfitted vocabulary of these settings: of terms, or hashed with ``hash_bits``."""
        settings = {"min_df": self.min_df, "max_df": self.max_df,
                    "max_features": self.max_features}
        if self.hash_bits is None:
            return Vocabulary(**settings)
        return HashedVocabulary(hash_bits=self.hash_bits, **settings)

    def new_model(self) -> DiscreteNB:
        """An unfitted model of these settings: the event model, ``alpha`` and the priors."""
        return MODELS[self.model](alpha=self.alpha, fit_prior=self.fit_prior,
                                  class_prior=self.class_prior)

    def _check_fitted(self) -> None:
        if not hasattr(self, "model_"):
            raise not_fitted(self)


# -- model file --------------------------------------------------------------------------


