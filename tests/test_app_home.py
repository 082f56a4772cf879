"""Home page and navigation (app.py) through AppTest."""

from __future__ import annotations

from app_helpers import ROOT, all_text, no_exception, page, store, wait_for_jobs

from textgen_core.datasets import SAMPLE_NAME
from textgen_dashboard.home import sample_metrics


def test_empty_database_offers_the_sample(app_db):
    at = page("app.py").run()
    no_exception(at)
    assert [m.value for m in at.metric] == ["0", "0"]
    assert str(app_db) in all_text(at)  # where the database lives
    assert at.button(key="home.sample").label == "Load the sample dataset and run lexical metrics"
    assert "The database is empty" in all_text(at)


def test_one_click_sample_runs_lexical_metrics(app_db):
    at = page("app.py").run()
    at.button(key="home.sample").click().run()
    no_exception(at)
    wait_for_jobs()
    at.run()
    no_exception(at)
    db = store()
    datasets = db.list_datasets()
    assert list(datasets["name"]) == [SAMPLE_NAME]
    runs = db.list_runs()
    assert list(runs["status"]) == ["finished"]
    run = db.get_run(int(runs["run_id"][0]))
    assert run["metrics"] == sample_metrics()
    scores = db.scores(run["run_id"])
    assert set(scores["metric"]) == set(sample_metrics())
    assert len(scores) > 0 and scores["value"].notna().all()
    assert any("finished" in s.value for s in at.success)
    assert [m.value for m in at.metric] == ["1", "1"]


def test_second_click_reuses_the_sample_dataset(sample_run):
    at = page("app.py").run()
    no_exception(at)
    assert [m.value for m in at.metric] == ["1", "1"]
    at.button(key="home.sample").click().run()
    wait_for_jobs()
    assert len(store().list_datasets()) == 1
    assert len(store().list_runs()) == 2


def test_navigation_lists_every_page_that_exists(app_db):
    at = page("app.py").run()
    no_exception(at)
    for name in ("upload", "evaluate", "runs"):
        at.switch_page(f"pages/{name}.py").run()
        no_exception(at)
    source = (ROOT / "app.py").read_text()
    for name in ("upload", "evaluate", "results", "explore", "compare", "runs"):
        assert f"pages/{name}.py" in source


def test_a_database_locked_by_another_process_is_explained(app_db):
    import subprocess
    import sys

    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
                               "print('ready', flush=True); time.sleep(60)", str(app_db)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        at = page("app.py").run()
        no_exception(at)
        assert "DuckDB lets one process write a file at a time" in at.error[0].value
        assert not at.metric  # the page itself did not run
    finally:
        holder.kill()
        holder.wait()
