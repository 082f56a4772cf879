"""Upload page through AppTest: file in, preview, guessed and overridden mapping, validation, save, manage."""

from __future__ import annotations

import io
import json

import pandas as pd
from app_helpers import all_text, frame_with, no_exception, no_raw_html, page, store

from textgen_dashboard import state

LONG_CSV = (b"id,model,question,answer,reference,topic\n"
            b"q1,a,What is 2+2?,4,4,math\n"
            b"q1,b,What is 2+2?,four,4,math\n"
            b"q2,a,Capital of France?,Paris,Paris,geo\n")


def _upload(at, name: str, payload: bytes, mime: str = "text/csv"):
    at.file_uploader(key=state.UPLOAD_UPLOADER).set_value((name, payload, mime))
    return at.run()


def _with_file(name: str, payload: bytes):
    """The Upload page run with ``payload`` as the file already chosen (as the uploader leaves it in the session)."""
    at = page("views/upload.py")
    at.session_state[state.UPLOAD_FILE] = (name, payload)
    return at.run()


def test_empty_database_renders(app_db):
    at = page("views/upload.py").run()
    no_exception(at)
    assert "No datasets yet." in all_text(at)
    assert set(at.file_uploader(key=state.UPLOAD_UPLOADER).allowed_type) >= {".csv", ".jsonl", ".parquet"}


def test_upload_guess_preview_and_save(app_db):
    at = _upload(page("views/upload.py").run(), "outputs.csv", LONG_CSV)
    no_exception(at)
    preview = frame_with(at, "id")
    assert list(preview.columns) == ["id", "model", "question", "answer", "reference", "topic"]
    assert len(preview) == 3
    assert at.selectbox(key=state.upload_field("id")).value == "id"
    assert at.selectbox(key=state.upload_field("prediction")).value == "answer"
    assert at.selectbox(key=state.upload_field("query")).value == "question"
    assert at.multiselect(key=state.upload_field("references")).value == ["reference"]
    assert "3 rows: 2 datums x 2 models" in at.success[0].value
    assert at.text_input(key=state.UPLOAD_NAME).value == "outputs"
    at.text_input(key=state.UPLOAD_NAME).set_value("my outputs").run()
    at.button[1].click().run()  # "Save dataset" (the first button loads the bundled sample)
    no_exception(at)
    frame = store().list_datasets()
    assert list(frame["name"]) == ["my outputs"]
    dataset = store().load_dataset(int(frame["dataset_id"][0]))
    assert [(r.datum_id, r.model, r.prediction, r.references) for r in dataset.rows] == [
        ("q1", "a", "4", ("4",)), ("q1", "b", "four", ("4",)), ("q2", "a", "Paris", ("Paris",))]
    assert dataset.metadata_columns == ("topic",)
    assert any("Saved my outputs" in s.value for s in at.success)
    assert list(frame_with(at, "n_runs")["name"]) == ["my outputs"]


def test_override_mapping_and_delimiter_list_through_the_state_hook(app_db):
    payload = b"qid,output,gold,ctx\n1,x,a||b,c1||c2\n2,y,c,c3\n"
    at = _with_file("refs.csv", payload)
    no_exception(at)
    at.selectbox(key=state.upload_field("query")).set_value("ctx")
    at.multiselect(key=state.upload_field("contexts")).set_value([])
    at.selectbox(key=state.UPLOAD_LIST_FORMAT).set_value("delimiter")
    at.text_input(key=state.UPLOAD_DEFAULT_MODEL).set_value("gpt-x")
    at.run()
    no_exception(at)
    at.button[1].click().run()
    dataset = store().load_dataset(int(store().list_datasets()["dataset_id"][0]))
    assert dataset.rows[0].references == ("a", "b")
    assert dataset.rows[0].query == "c1||c2"
    assert dataset.rows[0].contexts == ()
    assert dataset.models == ["gpt-x"]


def test_wide_jsonl_with_json_list_references(app_db):
    lines = [{"id": "d1", "prompt": "p", "references": ["r1", "r2"], "prediction_alpha": "x", "prediction_beta": "y"},
             {"id": "d2", "prompt": "q", "references": ["r3"], "prediction_alpha": "z", "prediction_beta": "w"}]
    payload = "\n".join(json.dumps(line) for line in lines).encode()
    at = _upload(page("views/upload.py").run(), "wide.jsonl", payload, "application/jsonl")
    no_exception(at)
    assert at.radio(key=state.UPLOAD_FORMAT).value == "wide"
    assert at.multiselect(key=state.UPLOAD_WIDE).value == ["prediction_alpha", "prediction_beta"]
    assert "2 datums x 2 models" in at.success[0].value
    at.button[1].click().run()
    dataset = store().load_dataset(int(store().list_datasets()["dataset_id"][0]))
    assert dataset.models == ["alpha", "beta"]
    assert dataset.rows[0].references == ("r1", "r2")


def test_parquet_upload(app_db):
    buffer = io.BytesIO()
    pd.DataFrame({"id": ["a", "b"], "prediction": ["x", "y"], "reference": ["x", "z"]}).to_parquet(buffer)
    at = _upload(page("views/upload.py").run(), "p.parquet", buffer.getvalue(), "application/octet-stream")
    no_exception(at)
    assert len(frame_with(at, "id")) == 2
    assert "2 rows: 2 datums x 1 models" in at.success[0].value


def test_validation_names_row_and_column(app_db):
    payload = b"id,model,prediction,references\nq1,a,x,[\"ok\"]\nq2,a,y,[\"ok\"]\nq3,a,z,[not json\n"
    at = _with_file("bad.csv", payload)
    no_exception(at)
    at.selectbox(key=state.UPLOAD_LIST_FORMAT).set_value("json").run()
    message = at.error[0].value
    assert "row 3" in message and "references" in message
    assert list(frame_with(at, "references", -1)["id"]) == ["q3"]
    assert not any(b.label == "Save dataset" for b in at.button)


def test_duplicate_pairs_are_reported_with_both_rows(app_db):
    payload = b"id,model,prediction\nq1,a,x\nq1,a,y\n"
    at = _with_file("dup.csv", payload)
    assert "rows 1 and 2" in at.error[0].value


def test_rename_and_delete(sample_run):
    at = page("views/upload.py").run()
    no_exception(at)
    at.text_input(key=state.UPLOAD_RENAME).set_value("renamed").run()
    next(b for b in at.button if b.label == "Rename").click().run()
    no_exception(at)
    assert list(store().list_datasets()["name"]) == ["renamed"]
    at.checkbox(key=state.UPLOAD_CONFIRM_DELETE).check().run()
    next(b for b in at.button if b.label == "Delete").click().run()
    no_exception(at)
    assert store().list_datasets().empty
    assert store().list_runs().empty  # its runs went with it


def test_oversized_file_is_refused(app_db, monkeypatch):
    import textgen_dashboard.upload

    monkeypatch.setattr(textgen_dashboard.upload, "max_upload_bytes", lambda: 10)
    at = _with_file("big.csv", LONG_CSV)
    assert "the limit is" in at.error[0].value


def test_dataset_text_is_never_rendered_as_html(app_db):
    payload = b"id,model,prediction\n<img src=x onerror=alert(1)>,<b>m</b>,**bold** [link](http://x)\n"
    at = _with_file("<script>.csv", payload)
    no_exception(at)
    no_raw_html(at)
    at.text_input(key=state.UPLOAD_NAME).set_value("<i>name</i>").run()
    at.button[1].click().run()
    no_exception(at)
    no_raw_html(at)
    assert list(store().list_datasets()["name"]) == ["<i>name</i>"]
    shown = "\n".join(m.value for m in at.markdown) + "\n".join(s.value for s in at.success)
    assert "<i>" not in shown and "\\<i\\>" in shown  # escaped wherever it is written into markdown
    for name in ("views/evaluate.py", "views/runs.py", "app.py"):
        other = page(name).run()
        no_exception(other)
        no_raw_html(other)


TICKETS = (b"ticket_id,model,question,answer,category\n"
           b"T1,a,Reset my password?,Use the link,account\nT1,b,Reset my password?,Call us,account\n"
           b"T2,a,Refund?,Yes,billing\nT2,b,Refund?,No,billing\n")


def test_a_ticket_id_is_guessed_and_unpaired_rows_are_a_warning_naming_what_to_map(app_db):
    at = _upload(page("views/upload.py").run(), "tickets.csv", TICKETS)
    no_exception(at)
    assert at.selectbox(key=state.upload_field("id")).value == "ticket_id"
    assert "4 rows: 2 datums x 2 models" in at.success[0].value and not at.warning
    at.selectbox(key=state.upload_field("id")).set_value("(not mapped)").run()
    assert not at.success  # no green line over a file whose models never meet on a datum
    warning = at.warning[0].value
    assert "4 rows: 4 datums x 2 models" in warning and "No datum has rows of two models" in warning
    assert "ticket\\_id" in warning and "Pair rows by identical query text" in warning
    at.checkbox(key=state.UPLOAD_PAIR_BY_QUERY).check().run()
    no_exception(at)
    assert "4 rows: 2 datums x 2 models" in at.success[0].value and not at.warning
    at.button[1].click().run()
    dataset = store().load_dataset(int(store().list_datasets()["dataset_id"][0]))
    assert len({r.datum_id for r in dataset.rows}) == 2


def test_some_unpaired_datums_are_counted(app_db):
    payload = TICKETS + b"T3,a,Only one model,Hm,other\n"
    at = _with_file("tickets.csv", payload)
    assert "5 rows: 3 datums x 2 models" in at.success[0].value
    assert "Only 2 of 3 datums have rows of two models" in at.info[0].value


def test_the_same_file_again_shows_its_saved_mapping_and_no_stale_message(app_db):
    at = _upload(page("views/upload.py").run(), "tickets.csv", TICKETS)
    at.selectbox(key=state.upload_field("query")).set_value("category").run()  # a choice the guess would not make
    at.text_input(key=state.UPLOAD_NAME).set_value("support").run()
    at.button[1].click().run()
    assert any("Saved support" in s.value for s in at.success)
    # the same bytes again, in a fresh browser session: the mapping it was saved with, not an empty one
    again = _upload(page("views/upload.py").run(), "tickets (copy).csv", TICKETS)
    no_exception(again)
    assert again.selectbox(key=state.upload_field("query")).value == "category"
    assert again.selectbox(key=state.upload_field("id")).value == "ticket_id"
    assert "saved before" in all_text(again)
    # and in the same session: a new upload removes the message of the last save
    _upload(at, "other.csv", LONG_CSV)
    assert not any("Saved support" in s.value for s in at.success)
    assert at.selectbox(key=state.upload_field("query")).value == "question"  # a new file: a fresh guess


EDITED_CSV = (b"id,model,question,answer,reference,topic\n"
              b"q1,a,What is 2+2?,4,4,math\n"
              b"q1,b,What is 2+2?,four,4,math\n"
              b"q2,a,Capital of France?,Paris,Paris,geo\n"
              b"q2,c,Capital of France?,Lyon,Paris,geo\n"  # a new model: q2 changed
              b"q3,a,Capital of Peru?,Lima,Lima,geo\n")  # a new datum


def _save(at, name: str):
    at.text_input(key=state.UPLOAD_NAME).set_value(name).run()
    next(b for b in at.button if b.label == "Save dataset").click().run()
    no_exception(at)
    return " ".join(s.value for s in at.success).replace("\\", "")  # markdown escapes


def test_an_edited_file_is_a_new_version_with_its_diff_and_the_same_content_is_stored_once(app_db):
    from textgen_core.evaluate import evaluate

    assert "Saved qa (3 rows) as version 1 of qa." in _save(_upload(page("views/upload.py").run(), "qa.csv",
                                                                      LONG_CSV), "qa")
    run_id = evaluate(store(), int(store().list_datasets()["dataset_id"][0]), ["exact_match"], workers=1)
    store().run_names.label_run(run_id, name="week 1")
    said = _save(_upload(page("views/upload.py").run(), "qa-edited.csv", EDITED_CSV), "qa")
    assert ("Saved qa (2) (5 rows) as version 2 of qa. Since version 1: datums added 1, removed 0, changed 1; "
            "models added: c.") in said
    # the first file again under another file name and another dataset name: the same content, nothing stored
    said = _save(_upload(page("views/upload.py").run(), "copy.csv", LONG_CSV), "something else")
    assert "Same content as version 1 of qa (stored as qa) — nothing stored again" in said
    assert store().list_datasets()["name"].tolist() == ["qa", "qa (2)"]
    at = page("views/upload.py").run()
    at.selectbox(key=state.UPLOAD_MANAGE).set_value(int(store().dataset_id("qa (2)"))).run()
    versions = frame_with(at, "runs pinned")
    assert versions[["version", "rows", "datums", "models", "runs pinned"]].values.tolist() == [
        [1, 3, 2, "a, b", f"#{run_id} week 1"], [2, 5, 3, "a, b, c", ""]]
    assert versions["change"].tolist() == ["first version", "datums added 1, removed 0, changed 1; models added: c"]
    assert len(versions["stored"].iloc[0]) == 19  # a date to the second
