"""Issue 28: the Results page's corpus table shows whole score names; an index column clipped
"precision_macro", "precision_micro" and "precision_weighted" into three identical "precisio" rows."""

from __future__ import annotations

import pandas as pd
from app_helpers import no_exception, page, store

from textgen_core import api
from textgen_dashboard.state import RESULTS_RUN


def test_the_corpus_table_names_each_score_in_a_column_of_its_own(app_db):
    rows = [{"id": f"q{i}", "model": "m", "reference": ["pos", "neg", "neutral"][i % 3],
             "prediction": ["pos", "neg", "neg"][i % 3]} for i in range(30)]
    run_id = api.score(pd.DataFrame(rows), ["classification"], store=store(), name="labels").attrs["run_id"]
    at = page("app.py").run()
    at = at.switch_page("views/results.py").run()
    at.selectbox(key=RESULTS_RUN).set_value(run_id).run()
    no_exception(at)
    corpus = next(frame.value for frame in at.dataframe
                  if "score" in getattr(frame.value, "columns", []) and "precision_macro" in set(frame.value["score"]))
    names = set(corpus["score"])
    assert {"precision_macro", "precision_micro", "precision_weighted", "f1_macro", "accuracy"} <= names
    assert len(names) == len(corpus)  # one row per score, none clipped into another
