"""Grouping failing judgements into modes: sentence embeddings, HDBSCAN, and a lexical hand-off at scale.

Why HDBSCAN (scikit-learn's) and not BERTopic: BERTopic would add UMAP, numba
and its own package for what three scikit-learn steps do here (PCA, HDBSCAN,
CountVectorizer for c-TF-IDF names); HDBSCAN finds the number of modes itself
and leaves out what fits no mode, which a fixed-k method cannot.

Steps, all deterministic for a seed:

1. each distinct text is embedded once with the packaged sentence model
   (all-MiniLM-L6-v2, the one semantic similarity uses; nothing downloads);
2. the unit vectors are reduced with PCA (``dims``), scaled to unit length again, and clustered by HDBSCAN
   with leaf selection (the finest stable modes, each at least ``MIN_SHARE`` of the texts: the default
   excess-of-mass selection merged two of five planted types in our planted-truth test; leaf kept them
   apart, adjusted Rand index 0.78 -> 0.9);
3. a text HDBSCAN leaves as noise joins the nearest mode when its cosine to
   the mode's centre is at least ``join``; otherwise it stays unsorted (-1);
4. above ``sample`` distinct texts, a seeded sample of ``sample`` texts is
   embedded and clustered, and every other text joins the mode whose TF-IDF
   centre (words and word pairs of the sample's texts) it is nearest to, when
   it shares words with one; embedding 100,000 texts takes far longer on a
   laptop CPU than the clustering, and the lexical hand-off is what keeps a
   large run in minutes. The parameters record that it happened.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from ..metrics.models.local_models import PACKAGED

#: Distinct texts embedded and clustered at most; the rest are handed to the nearest mode by their words.
SAMPLE = 2000
#: Least cosine to a mode's centre for a noise point to join that mode.
JOIN = 0.5
#: PCA dimensions the embeddings are reduced to (then scaled to unit length) before HDBSCAN.
DIMS = 8
#: HDBSCAN's smallest mode, as a share of the distinct texts clustered.
MIN_SHARE = 0.05


@dataclass(frozen=True)
class Grouping:
    """Mode of each input text (-1: unsorted) and what was done to find them."""

    labels: np.ndarray
    embedded: int
    handed_off: int
    noise_joined: int


def min_cluster_size(n: int) -> int:
    """HDBSCAN's smallest mode: :data:`MIN_SHARE` of the distinct texts, at least 5 and at most 500."""
    return int(min(500, max(5, round(MIN_SHARE * n))))


#: Vectors kept in this process, by (model, text): grouping again (other settings, another run with the same
#: reasons) embeds only texts not seen yet. At most :data:`KEPT` texts (about 30 MB).
_KEPT: dict[tuple[str, str], np.ndarray] = {}
KEPT = 20_000


def embed(texts: Sequence[str], model: str = PACKAGED, batch_size: int = 64) -> np.ndarray:
    """Unit-length sentence embeddings of ``texts`` from a local sentence-transformers model."""
    texts = list(texts)
    new = list(dict.fromkeys(t for t in texts if (model, t) not in _KEPT))
    found = dict(zip(new, _encode(new, model, batch_size))) if new else {}
    out = np.stack([found[t] if t in found else _KEPT[(model, t)] for t in texts]) if texts else \
        np.zeros((0, 0), dtype=np.float32)
    if len(_KEPT) + len(found) > KEPT:
        _KEPT.clear()
    if len(found) <= KEPT:
        _KEPT.update({(model, t): v for t, v in found.items()})
    return out


def _encode(texts: Sequence[str], model: str, batch_size: int) -> np.ndarray:
    from ..errors import ParameterError
    from ..metrics.models.embeddings import load, problems

    trouble = problems({"local_model": model})
    if trouble:
        raise ParameterError(f"failure modes need the sentence model {model!r}: {trouble[0]}")
    from ..metrics.models.local_models import resolve_model

    encoder = load(resolve_model(model))
    vectors = encoder.encode(list(texts), batch_size=batch_size, convert_to_numpy=True, normalize_embeddings=True)
    return np.asarray(vectors, dtype=np.float32)


def cluster(vectors: np.ndarray, *, seed: int, min_size: int | None = None, dims: int = DIMS,
            join: float = JOIN) -> tuple[np.ndarray, int]:
    """HDBSCAN labels of unit vectors (-1 unsorted) and how many noise points joined a mode."""
    from sklearn.cluster import HDBSCAN
    from sklearn.decomposition import PCA

    n = len(vectors)
    size = min_size or min_cluster_size(n)
    k = min(dims, n - 1, vectors.shape[1])
    reduced = PCA(n_components=k, random_state=seed, svd_solver="full").fit_transform(vectors) if k >= 2 \
        else vectors
    reduced /= np.maximum(np.linalg.norm(reduced, axis=1, keepdims=True), 1e-12)
    labels = HDBSCAN(min_cluster_size=size, min_samples=min(size, 5), cluster_selection_method="leaf",
                     copy=True).fit_predict(reduced)
    labels = _renumber(labels)
    return _join_noise(vectors, labels, join)


def _renumber(labels: np.ndarray) -> np.ndarray:
    """Modes numbered by size, largest first (ties by first appearance): the same input gives the same numbers."""
    found = [m for m in dict.fromkeys(labels.tolist()) if m >= 0]
    sizes = {m: int(np.count_nonzero(labels == m)) for m in found}
    order = sorted(found, key=lambda m: -sizes[m])
    mapping = {m: i for i, m in enumerate(order)}
    return np.array([mapping.get(m, -1) for m in labels.tolist()], dtype=np.int64)


def _join_noise(vectors: np.ndarray, labels: np.ndarray, join: float) -> tuple[np.ndarray, int]:
    modes = sorted(set(labels.tolist()) - {-1})
    noise = np.flatnonzero(labels == -1)
    if not modes or not noise.size:
        return labels, 0
    centres = np.stack([vectors[labels == m].mean(axis=0) for m in modes])
    centres /= np.maximum(np.linalg.norm(centres, axis=1, keepdims=True), 1e-12)
    sims = vectors[noise] @ centres.T
    best = sims.argmax(axis=1)
    near = sims[np.arange(noise.size), best] >= join
    out = labels.copy()
    out[noise[near]] = np.asarray(modes)[best[near]]
    return out, int(near.sum())


def group(texts: Sequence[str], *, seed: int, model: str = PACKAGED, sample: int = SAMPLE,
          min_size: int | None = None, dims: int = DIMS, join: float = JOIN) -> Grouping:
    """The mode of each text; equal texts get the same mode and are embedded once."""
    distinct, back = np.unique(np.asarray(list(texts), dtype=object), return_inverse=True)
    n = len(distinct)
    if n <= sample:
        labels, joined = cluster(embed(distinct, model), seed=seed, min_size=min_size, dims=dims, join=join)
        return Grouping(labels[back], n, 0, joined)
    picked = np.sort(np.random.default_rng(seed).choice(n, size=sample, replace=False))
    labels_s, joined = cluster(embed(distinct[picked], model), seed=seed, min_size=min_size, dims=dims, join=join)
    labels = np.full(n, -1, dtype=np.int64)
    labels[picked] = labels_s
    rest = np.setdiff1d(np.arange(n), picked)
    labels[rest] = _hand_off(distinct[picked], labels_s, distinct[rest])
    return Grouping(labels[back], sample, int(rest.size), joined)


def _hand_off(known: np.ndarray, labels: np.ndarray, texts: np.ndarray) -> np.ndarray:
    """Mode of each text by the nearest TF-IDF centre of the clustered texts' modes (-1 when no word is shared)."""
    from sklearn.feature_extraction.text import TfidfVectorizer

    modes = sorted(set(labels.tolist()) - {-1})
    if not modes:
        return np.full(len(texts), -1, dtype=np.int64)
    vectorizer = TfidfVectorizer(ngram_range=(1, 2), sublinear_tf=True, min_df=2, stop_words="english")
    fitted = vectorizer.fit_transform(known)
    centres = np.vstack([np.asarray(fitted[labels == m].mean(axis=0)) for m in modes])
    centres /= np.maximum(np.linalg.norm(centres, axis=1, keepdims=True), 1e-12)
    out = np.full(len(texts), -1, dtype=np.int64)
    step = 20_000
    for start in range(0, len(texts), step):
        sims = np.asarray(vectorizer.transform(texts[start:start + step]) @ centres.T)
        best = sims.argmax(axis=1)
        shared = sims[np.arange(len(best)), best] > 0
        out[start:start + step] = np.where(shared, np.asarray(modes)[best], -1)
    return out
