"""Issue 28: on the Evaluate page, classification reads its two labels from any two columns of the stored
dataset, through the pickers its parameter declaration generates (no second upload)."""

from __future__ import annotations

from app_helpers import no_exception, page, store, wait_for_jobs

from textgen_core.datasets import load_dataset
from textgen_dashboard import state

ROWS = (b"ticket_id,model,question,answer,reference,category,predicted_category\n"
        b"t1,a,Refund?,We refunded you.,Refund issued.,billing,billing\n"
        b"t2,a,Password?,Reset it.,Use reset.,account,account\n"
        b"t3,a,Where?,Ships today.,Shipped.,shipping,billing\n")


def test_classification_pickers_read_two_columns_of_the_stored_dataset(app_db):
    store().save_dataset(load_dataset(ROWS, file_name="support.csv", name="support"))
    at = page("views/evaluate.py").run()
    at.checkbox(key=state.eval_metric("classification")).check().run()
    predicted = at.selectbox(key=state.eval_param("classification", "prediction_column"))
    gold = at.selectbox(key=state.eval_param("classification", "reference_column"))
    assert predicted.value is None or predicted.value == ""  # (none): the prediction, until a column is picked
    assert {"category", "predicted_category"} <= set(predicted.options) and "category" in gold.options
    predicted.set_value("predicted_category")
    gold.set_value("category").run()
    no_exception(at)
    at.button(key="evaluate.run").click().run()
    wait_for_jobs()
    run_id = int(store().list_runs()["run_id"].max())
    cells = store().scores(run_id).set_index("datum_id")
    assert cells.loc[["t1", "t2", "t3"], "value"].tolist() == [1.0, 1.0, 0.0]
    assert len(store().list_datasets()) == 1
