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
    signature = spec.signature(spec.resolve({"corpus_file": str(path)}))
    path.write_text("\n".join(background[:-1]), encoding="utf-8")
    assert spec.signature(spec.resolve({"corpus_file": str(path)})) != signature  # an edited file is another space
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
