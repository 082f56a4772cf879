"""Upload page with a large file: first rows previewed, saved through the streaming path, same result as whole."""

from __future__ import annotations

import pandas as pd
import pytest
from app_helpers import frame_with, no_exception, page, store

from textgen_core.datasets import guess_mapping, load_dataset
from textgen_core.streaming import CHUNK_ROWS
from textgen_dashboard import state, upload_stream

#: The "large" threshold of these tests: the page's own (50,000 rows) made 60,000-row files, whose writing and
#: scoring were most of this file's CPU; what is proven (the preview of the first rows, the chunked save equal to
#: the whole-file read, a bad row in a later chunk storing nothing) needs only a file over the threshold and
#: over two chunks. The real threshold is held by test_the_real_threshold_counts_lines_header_included.
LARGE = 10_000
ROWS = 12_000  # over LARGE, in three chunks of CHUNK_ROWS
assert 2 * CHUNK_ROWS < ROWS


@pytest.fixture
def large_over_10k(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(upload_stream, "LARGE_ROWS", LARGE)


def test_the_real_threshold_counts_lines_header_included() -> None:
    header = b"id,model,answer\n"
    assert upload_stream.is_large("big.csv", header + b"q,a,x\n" * upload_stream.LARGE_ROWS)
    assert not upload_stream.is_large("big.csv", header + b"q,a,x\n" * (upload_stream.LARGE_ROWS - 1))


def _csv(rows: int, bad_at: int | None = None, null_at: int | None = None) -> bytes:
    lines = ["\ufeffid,model,question,answer,reference,topic"]  # a BOM, which the header must not keep
    for i in range(1, rows + 1):
        ref = "NaN" if i == null_at else f"ref {i}"
        line = f'q{i},{"ab"[i % 2]},"What is {i}, really?",answer {i},{ref},t{i % 7}'
        lines.append(line + (",extra" if i == bad_at else ""))
    return ("\r\n".join(lines) + "\r\n").encode("utf-8")


def _save(payload: bytes, name: str = "big.csv"):
    at = page("views/upload.py")
    at.session_state[state.UPLOAD_FILE] = (name, payload)
    at.run()
    no_exception(at)
    save = next(b for b in at.button if b.label == "Save dataset")
    save.click().run()
    no_exception(at)
    return at


def _rows(dataset):
    return [(r.datum_id, r.model, r.query, r.prediction, r.references, r.metadata) for r in dataset.rows]


def test_large_csv_is_streamed_and_equals_the_whole_file_result(app_db, tmp_path, monkeypatch, large_over_10k):
    payload = _csv(ROWS, null_at=9_678)
    (tmp_path / "big.csv").write_bytes(payload)
    assert upload_stream.is_large("big.csv", payload)
    whole_reads = []
    monkeypatch.setattr("textgen_dashboard.data.upload_table", lambda *a: whole_reads.append(a))
    monkeypatch.setattr("textgen_dashboard.data.check_upload", lambda *a: whole_reads.append(a))

    at = page("views/upload.py")
    at.session_state[state.UPLOAD_FILE] = ("big.csv", payload)
    at.run()
    no_exception(at)
    preview = frame_with(at, "id")
    assert list(preview.columns) == ["id", "model", "question", "answer", "reference", "topic"]
    assert len(preview) == upload_stream.PREVIEW_ROWS and preview["question"].iloc[0] == "What is 1, really?"
    assert at.selectbox(key=state.upload_field("prediction")).value == "answer"
    next(b for b in at.button if b.label == "Save dataset").click().run()
    no_exception(at)
    assert whole_reads == []  # neither the preview nor the save read the file whole

    assert any(f"Saved big ({ROWS:,} rows)" in s.value for s in at.success)
    assert any("9678" in w.value and "NaN" in w.value for w in at.warning)  # the null-reference warning
    frame = store().list_datasets()
    stored = store().load_dataset(int(frame["dataset_id"][0]))
    whole = load_dataset(tmp_path / "big.csv", guess_mapping(list(preview.columns)), file_name="big.csv")
    assert _rows(stored) == _rows(whole)
    assert stored.metadata_columns == whole.metadata_columns == ("topic",)


@pytest.mark.parametrize("bad_at", [11_321])  # in the third chunk
def test_a_bad_row_deep_in_a_large_file_stores_nothing(app_db, bad_at, large_over_10k):
    at = _save(_csv(ROWS, bad_at=bad_at))
    message = at.error[0].value.replace("\\", "")  # markdown escapes
    assert "'big.csv'" in message and f"row {bad_at}" in message
    assert store().list_datasets().empty
    assert not any("Saved" in s.value for s in at.success)


def test_replace_keeps_the_old_dataset_when_the_new_file_is_bad(app_db, large_over_10k):
    _save(_csv(ROWS))
    old = store().list_datasets()
    at = page("views/upload.py")
    at.session_state[state.UPLOAD_FILE] = ("big.csv", _csv(ROWS, bad_at=ROWS))
    at.run()
    at.checkbox(key=state.UPLOAD_REPLACE).check().run()
    next(b for b in at.button if b.label == "Save dataset").click().run()
    assert f"row {ROWS}" in at.error[0].value.replace("\\", "")
    pd.testing.assert_frame_equal(store().list_datasets()[["dataset_id", "name", "n_rows"]],
                                  old[["dataset_id", "name", "n_rows"]])


def test_large_parquet_preview_and_save(app_db, tmp_path, large_over_10k):
    frame = pd.DataFrame({"id": [f"q{i}" for i in range(ROWS)], "prediction": ["p"] * ROWS,
                          "references": ["r"] * ROWS})
    frame.to_parquet(tmp_path / "big.parquet")
    at = _save((tmp_path / "big.parquet").read_bytes(), "big.parquet")
    assert any(f"({ROWS:,} rows)" in s.value for s in at.success)
    assert int(store().list_datasets()["n_rows"][0]) == ROWS


def test_a_mapping_the_header_refuses_is_shown_before_saving(app_db, large_over_10k):
    at = page("views/upload.py")
    at.session_state[state.UPLOAD_FILE] = ("big.csv", _csv(ROWS))
    at.run()
    at.radio(key=state.UPLOAD_FORMAT).set_value("wide").run()
    no_exception(at)
    assert "one prediction column per model" in at.error[0].value
    assert not any(b.label == "Save dataset" for b in at.button)


def test_a_streamed_file_under_a_stored_name_is_its_next_version_and_the_same_content_is_kept_once(app_db):
    from textgen_core.catalog import stored_version
    from textgen_dashboard.upload_versions import saved_message

    db, mapping = store(), guess_mapping(["id", "model", "question", "answer", "reference", "topic"])
    first = upload_stream.save(db, "big.csv", _csv(40), mapping, "big")
    edited = _csv(41).replace(b"answer 3,", b"answer three,")  # one datum added, one changed
    second = upload_stream.save(db, "big-edited.csv", edited, mapping, "big")  # no 'replace': a new version
    assert (second.dataset_name, second.reused) == ("big (2)", False)
    said = saved_message(stored_version(db, second.dataset_id, second.reused), second.rows).replace("\\", "")
    assert said == ("Saved big (2) (41 rows) as version 2 of big. Since version 1: datums added 1, removed 0, "
                    "changed 1.")
    again = upload_stream.save(db, "copy.csv", _csv(40), mapping, "other name")  # the first content again
    assert again.reused and again.dataset_id == first.dataset_id
    said = saved_message(stored_version(db, again.dataset_id, again.reused), again.rows).replace("\\", "")
    assert said.startswith("Same content as version 1 of big (stored as big) — nothing stored again")
    assert db.list_datasets()["name"].tolist() == ["big", "big (2)"]
