"""LSA similarity: cosine of prediction and reference in a latent semantic space (TF-IDF, then truncated SVD),
with scikit-learn doing the linear algebra.

The space is fitted on the run's texts (each distinct datum's references once,
then every row's prediction, in row order) or on a background corpus file (one
document per line). Fitting on the run's texts needs every row first: such a
run is scored whole, never in chunks (a large file is read whole instead of
streamed, and the Ray engine refuses it); a resumed run fits on all its rows
again, which gives the same space (fixed seed) and so the same values. With a
corpus file the fit does not depend on the rows: the run streams and runs on
Ray, each process fitting once.
"""

from __future__ import annotations

import hashlib
from functools import lru_cache
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from ...errors import ParameterError
from ...model import Cell, Datum
from ..lexical.base import LexicalSpec, Scorer, row_inputs
from ..lexical.tokenize import TextCache
from ..spec import Param

SCORE = "lsa_similarity"


def run_corpus(rows: Sequence[Datum]) -> list[str]:
    """The documents a run-fitted space learns from: each datum's references once, then each row's prediction."""
    seen: dict[str, tuple[str, ...]] = {}
    for row in rows:
        seen.setdefault(row.datum_id, tuple(r for r in row.references if type(r) is str))
    predictions = [row.prediction for row in rows if type(row.prediction) is str]
    return [ref for refs in seen.values() for ref in refs] + predictions


def read_corpus(path: str) -> list[str]:
    """A background corpus file: one document per line (blank lines skipped), UTF-8."""
    file = Path(path).expanduser()
    try:
        if not file.is_file():  # a directory, a FIFO, a device: nothing to read a corpus from (and no hang)
            raise ParameterError(f"parameter lsa.corpus_file: no file at {path}" if not file.exists() else
                                 f"parameter lsa.corpus_file: {file} is not a regular file")
        text = file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ParameterError(f"parameter lsa.corpus_file: cannot read {file}: {exc}") from None
    return [line for line in text.splitlines() if line.strip()]


def too_small(documents: int, params: Mapping[str, Any]) -> str | None:
    """Why a corpus of ``documents`` cannot hold the space, else None. The TF-IDF matrix has rank at most its
    number of documents, so with fewer documents than n_components the extra dimensions are noise of the
    randomized SVD: one document makes every cosine 1.0, two make every row the same value."""
    if documents == 0:
        return "the corpus has no document (no line with text)"
    if documents < params["n_components"]:
        return (f"the corpus has {documents} document{'s' if documents != 1 else ''}: LSA needs at least "
                f"n_components ({params['n_components']}) documents, one per line; lower lsa.n_components or fit "
                "on a larger corpus")
    return None


def corpus_hash(documents: Sequence[str]) -> str:
    digest = hashlib.sha256()
    for doc in documents:
        digest.update(len(doc.encode()).to_bytes(8, "little") + doc.encode())
    return digest.hexdigest()[:16]


def pipeline(params: Mapping[str, Any]) -> Any:
    """The unfitted scikit-learn pipeline the parameters describe."""
    from sklearn.decomposition import TruncatedSVD
    from sklearn.feature_extraction.text import TfidfVectorizer
    from sklearn.pipeline import make_pipeline

    return make_pipeline(
        TfidfVectorizer(lowercase=params["lowercase"], ngram_range=(1, params["ngram_max"]), min_df=params["min_df"],
                        sublinear_tf=params["sublinear_tf"]),
        TruncatedSVD(n_components=params["n_components"], n_iter=params["n_iter"], random_state=params["seed"]))


def fit(documents: tuple[str, ...], params: Mapping[str, Any]) -> Any:
    """The pipeline fitted on ``documents``; raises ValueError when the corpus is too small for the space."""
    if not documents:
        raise ValueError(too_small(0, params))
    model = pipeline(params)
    vectorizer = model.steps[0][1]
    terms = vectorizer.fit(documents).vocabulary_
    if len(terms) <= params["n_components"]:
        raise ValueError(f"the corpus has {len(terms)} distinct terms: LSA needs more than n_components "
                         f"({params['n_components']}); lower lsa.n_components or fit on a larger corpus")
    problem = too_small(len(documents), params)
    if problem:
        raise ValueError(problem)
    return model.fit(documents)


@lru_cache(maxsize=2)
def _fit_file(path: str, mtime: float, frozen: tuple[tuple[str, Any], ...]) -> tuple[Any, str, int]:
    documents = read_corpus(path)
    return fit(tuple(documents), dict(frozen)), corpus_hash(documents), len(documents)


def score_rows(rows: Sequence[Datum], params: Mapping[str, Any], cache: TextCache | None = None
               ) -> list[dict[str, Cell]]:
    """LSA similarity of each row (best reference)."""
    try:
        if params.get("corpus_file"):
            path = str(Path(params["corpus_file"]).expanduser().resolve())
            model, digest, size = _fit_file(path, Path(path).stat().st_mtime, tuple(sorted(params.items())))
        else:
            documents = run_corpus(rows)
            model, digest, size = fit(tuple(documents), params), corpus_hash(documents), len(documents)
    except ValueError as exc:
        return [{SCORE: Cell.unscored(str(exc))} for _ in rows]
    out: list[dict[str, Cell]] = [{} for _ in rows]
    texts: list[str] = []
    spans: list[tuple[int, int, int]] = []  # row, first text, end
    for i, row in enumerate(rows):
        reason = row_inputs(row)
        if reason:
            out[i] = {SCORE: Cell.unscored(reason)}
            continue
        spans.append((i, len(texts), len(texts) + 1 + len(row.references)))
        texts.extend((row.prediction, *row.references))
    vectors = model.transform(texts) if texts else np.zeros((0, 1))
    norms = np.linalg.norm(vectors, axis=1)
    for i, start, end in spans:
        out[i] = _best(vectors[start:end], norms[start:end], digest, size)
    return out


def _best(vectors: np.ndarray, norms: np.ndarray, digest: str, size: int) -> dict[str, Cell]:
    """The cell of one row from its prediction's and references' latent vectors (prediction first)."""
    if norms[0] == 0:
        return {SCORE: Cell.unscored("the prediction has no term of the fitted vocabulary")}
    sims = [float(vectors[0] @ v / (norms[0] * n)) if n > 0 else None for v, n in zip(vectors[1:], norms[1:])]
    known = [(s, k) for k, s in enumerate(sims) if s is not None]
    if not known:
        return {SCORE: Cell.unscored("no reference has a term of the fitted vocabulary")}
    best, k = max(known, key=lambda t: t[0])
    details: dict[str, Any] = {"corpus_sha256": digest, "corpus_documents": size}
    if len(sims) > 1:
        details["reference"] = k
    return {SCORE: Cell(max(-1.0, min(1.0, best)), details)}


def _corpus_label(params: Mapping[str, Any]) -> str:
    if not params.get("corpus_file"):
        return "tfidf-svd-run-texts"
    try:
        return f"tfidf-svd-file-{corpus_hash(read_corpus(params['corpus_file']))}"
    except ParameterError:
        return "tfidf-svd-file-unreadable"


@lru_cache(maxsize=8)
def _documents_in(path: str, mtime: float, size: int) -> int:
    return len(read_corpus(path))


def _problems(params: Mapping[str, Any]) -> None:
    """The preflight of a corpus file: it exists, is a regular UTF-8 file, and has enough documents."""
    if not params.get("corpus_file"):
        return
    file = Path(params["corpus_file"]).expanduser()
    if not file.exists():
        raise ParameterError(f"parameter lsa.corpus_file: no file at {params['corpus_file']}")
    if not file.is_file():
        raise ParameterError(f"parameter lsa.corpus_file: {file} is not a regular file")
    info = file.stat()
    problem = too_small(_documents_in(str(file.resolve()), info.st_mtime, info.st_size), params)
    if problem:
        raise ParameterError(f"parameter lsa.corpus_file: {file}: {problem}")


SPEC = LexicalSpec(
    name="lsa",
    label="LSA similarity",
    group="lexical",
    description="Cosine of prediction and reference in a latent semantic space: TF-IDF then truncated SVD "
    "(scikit-learn), fitted on the run's texts or on a corpus file; best reference.",
    needs=("prediction", "references"),
    outputs=lambda _p: (SCORE,),
    params=(
        Param("n_components", "int", 100, "Dimensions of the latent space (at least 2: in one dimension every "
              "cosine is 1 or -1); the corpus needs at least this many documents.", minimum=2, maximum=10000),
        Param("seed", "int", 0, "Random state of the randomized SVD.", minimum=0),
        Param("n_iter", "int", 5, "Power iterations of the randomized SVD.", minimum=1, maximum=100),
        Param("lowercase", "bool", True, "TF-IDF lowercases texts first."),
        Param("ngram_max", "int", 1, "Longest word n-gram of the TF-IDF vocabulary.", minimum=1, maximum=5),
        Param("min_df", "int", 1, "Terms in fewer documents are dropped.", minimum=1),
        Param("sublinear_tf", "bool", False, "TF-IDF uses 1 + log(tf)."),
        Param("corpus_file", "str", None, "Fit on this UTF-8 file (one document per line) instead of the run's "
              "texts; its content hash goes into the signature."),
    ),
    direction="higher",
    value_range=(-1.0, 1.0),
    libraries=("scikit-learn", "numpy", "scipy"),
    tokenizer=_corpus_label,
    score=Scorer(per_chunk=score_rows),
    whole_dataset=lambda p: not p.get("corpus_file"),
    check=_problems,
    notes="Values equal scikit-learn's make_pipeline(TfidfVectorizer(...), TruncatedSVD(...)) fitted on the same "
    "documents, then the cosine of the transformed texts (tests: 1e-9). Fitted on the run's texts, the corpus is "
    "each distinct datum's references once, then every row's prediction in row order (all models); each cell's "
    "details carry the corpus hash (corpus_sha256) and size; with corpus_file the hash is in the signature. "
    "Edge cases: no prediction or references: unscored; a text none of whose terms is in the vocabulary has no "
    "direction and is unscored (a prediction) or skipped (a reference); a corpus with no more distinct terms "
    "than n_components leaves every row unscored with that reason. Values can be negative. A run fitted on its "
    "own texts is scored whole (not streamed, not on Ray) and a resume fits again on every row: same seed, "
    "same space, same values.",
)
