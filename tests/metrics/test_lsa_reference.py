"""LSA against scikit-learn's own pipeline on the same corpus."""

from __future__ import annotations

import json

import numpy as np
import pytest
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer
from sklearn.metrics.pairwise import cosine_similarity
from sklearn.pipeline import make_pipeline

from textgen_core import api
from textgen_core.errors import ParameterError
from textgen_core.registry import get_metric

WORDS = ("cat dog bird fish tree river stone cloud rain sun moon star road city market bread water fire wind "
         "snow glass paper music light shadow garden window door").split()


def _rows(n=40, seed=0, models=("a", "b")):
    rng = np.random.default_rng(seed)
    rows = []
    refs = [" ".join(rng.choice(WORDS, 8)) for _ in range(n)]
    for model in models:
        for i in range(n):
            pred = " ".join(rng.choice(WORDS, 6))
            rows.append({"id": f"d{i}", "model": model, "prediction": pred, "reference": refs[i]})
    return rows


def _reference(corpus, pairs, **opts):
    pipe = make_pipeline(TfidfVectorizer(lowercase=True, ngram_range=(1, opts.get("ngram_max", 1)),
                                         min_df=1, sublinear_tf=opts.get("sublinear_tf", False)),
                         TruncatedSVD(n_components=opts["n_components"], n_iter=5, random_state=opts.get("seed", 0)))
    pipe.fit(corpus)
    return [float(cosine_similarity(pipe.transform([p]), pipe.transform([r]))[0, 0]) for p, r in pairs]


@pytest.mark.parametrize("opts", [{"n_components": 5}, {"n_components": 10, "seed": 3, "ngram_max": 2,
                                                          "sublinear_tf": True}])
def test_fitted_on_the_run_texts_equals_scikit_learn(opts):
    rows = _rows()
    ours = api.score(rows, ["lsa"], {"lsa": opts})
    refs = {r["id"]: r["reference"] for r in rows}
    corpus = list(refs.values()) + [r["prediction"] for r in rows]
    want = _reference(corpus, [(r["prediction"], r["reference"]) for r in rows], **opts)
    assert ours["lsa_similarity"].tolist() == pytest.approx(want, abs=1e-9)
    long = api.score(rows, ["lsa"], {"lsa": opts}, long=True)
    assert json.loads(long["details"].iloc[0])["corpus_documents"] == len(corpus)


def test_a_corpus_file_fits_the_space_and_its_hash_is_in_the_signature(tmp_path):
    background = [" ".join(np.random.default_rng(k).choice(WORDS, 10)) for k in range(60)]
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(background) + "\n\n", encoding="utf-8")
    rows = _rows(10)
    ours = api.score(rows, ["lsa"], {"lsa": {"n_components": 8, "corpus_file": str(path)}})
    want = _reference(background, [(r["prediction"], r["reference"]) for r in rows], n_components=8)
    assert ours["lsa_similarity"].tolist() == pytest.approx(want, abs=1e-9)
    spec = get_metric("lsa")
    params = {"corpus_file": str(path), "n_components": 8}
    signature = spec.signature(spec.resolve(params))
    path.write_text("\n".join(background[:-1]), encoding="utf-8")
    assert spec.signature(spec.resolve(params)) != signature  # an edited file is another space
    assert "tok:tfidf-svd-file-" in signature


def test_edge_cases_are_unscored_with_reasons(tmp_path):
    rows = _rows(10, models=("a",))
    rows[0]["prediction"] = "zzz qqq"  # no term of the background corpus
    path = tmp_path / "corpus.txt"
    path.write_text("\n".join(" ".join(np.random.default_rng(k).choice(WORDS, 10)) for k in range(30)))
    long = api.score(rows, ["lsa"], {"lsa": {"n_components": 5, "corpus_file": str(path)}}, long=True)
    first = long[long["datum_id"] == "d0"].iloc[0]
    assert first["reason"] == "the prediction has no term of the fitted vocabulary" and np.isnan(first["value"])
    small = api.score(rows[:2], ["lsa"], {"lsa": {"n_components": 100}}, long=True)
    assert small["value"].isna().all() and "distinct terms" in small["reason"].iloc[0]
    with pytest.raises(ParameterError, match="no file at"):
        api.score(rows, ["lsa"], {"lsa": {"corpus_file": str(tmp_path / "missing.txt")}})
    assert get_metric("lsa").whole_dataset(get_metric("lsa").resolve())


@pytest.mark.parametrize("lines, words", [(1, "the corpus has 1 document: LSA needs at least n_components (100)"),
                                          (2, "the corpus has 2 documents"), (0, "the corpus has no document")])
def test_a_corpus_file_too_small_for_the_space_is_refused_before_the_run(tmp_path, lines, words):
    """Issue 34, points 6 and 13: a one-line corpus gave 1.0 for every row, a two-line one one value for all."""
    path = tmp_path / "corpus.txt"
    rng = np.random.default_rng(0)
    vocabulary = [f"w{k}" for k in range(400)]
    path.write_text("\n".join(" ".join(rng.choice(vocabulary, 200)) for _ in range(lines)) + "\n\n")
    with pytest.raises(ParameterError, match="parameter lsa.corpus_file") as caught:
        api.score(_rows(5), ["lsa"], {"lsa": {"corpus_file": str(path)}})
    assert words in str(caught.value)
    with pytest.raises(ParameterError, match="at least 2|below the minimum 2"):
        api.score(_rows(5), ["lsa"], {"lsa": {"n_components": 1}})  # one dimension: every cosine is 1 or -1


def test_a_corpus_path_that_is_not_a_regular_file_is_refused(tmp_path):
    import os

    fifo = tmp_path / "corpus.fifo"
    os.mkfifo(fifo)
    for path in (fifo, tmp_path):
        with pytest.raises(ParameterError, match="is not a regular file"):
            api.score(_rows(5), ["lsa"], {"lsa": {"corpus_file": str(path)}})


def test_a_run_fitted_on_too_few_texts_is_unscored_with_the_reason():
    rows = _rows(3, models=("a",))
    long = api.score(rows, ["lsa"], {"lsa": {"n_components": 7}}, long=True)  # 3 references + 3 predictions
    assert long["value"].isna().all() and "has 6 documents: LSA needs at least n_components (7)" in \
        long["reason"].iloc[0], long["reason"].iloc[0]
