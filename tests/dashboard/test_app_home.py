"""Home page and navigation (app.py) through AppTest."""

from __future__ import annotations

from app_helpers import all_text, no_exception, page, store, wait_for_jobs

from textgen_core.datasets import SAMPLE_NAME
from textgen_core.formatting import duration_text
from textgen_dashboard import app_path, data
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
    assert not at.toast  # the progress panel says what runs; no toast is left behind after the run
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
    # the duration Home shows is the run's, as the Runs page and the CLI show it
    assert f"finished in {duration_text(run['duration_s'])}." in " ".join(s.value for s in at.success)


def test_second_click_points_at_the_run_it_already_made(sample_run):
    _, run_id = sample_run
    at = page("app.py").run()
    no_exception(at)
    assert [m.value for m in at.metric] == ["1", "1"]
    at.button(key="home.sample").click().run()
    wait_for_jobs()
    no_exception(at)
    assert len(store().list_datasets()) == 1
    assert len(store().list_runs()) == 1  # no identical second run
    assert f"Run {run_id} already scores the sample" in all_text(at)


def test_sample_is_scored_again_when_its_run_failed(sample_run):
    _, run_id = sample_run
    store().set_run_status(run_id, "failed", error="test")
    data.refresh()
    at = page("app.py").run()
    at.button(key="home.sample").click().run()
    wait_for_jobs()
    assert len(store().list_runs()) == 2


def test_next_links_lead_to_results_and_compare_once_a_run_exists(sample_run):
    at = page("app.py").run()
    no_exception(at)
    labels = [e.proto.label for e in at.get("page_link")]
    assert "Read the results of a run" in labels and "Compare models, with intervals and tests" in labels


def test_navigation_declares_every_page_script(app_db):
    """app.PAGES names every script in views/, and each opens inside the navigation without an error."""
    from textgen_dashboard.app import PAGES

    scripts = {p.stem for p in app_path().parent.joinpath("views").glob("*.py") if p.stem != "__init__"}
    assert [name for name, _, _ in PAGES] == ["home", "upload", "evaluate", "results", "explore", "compare",
                                            "history", "label", "criteria", "runs"]
    assert set(scripts) == {name for name, _, _ in PAGES}
    at = page("app.py").run()
    no_exception(at)
    for name in scripts:
        at.switch_page(f"views/{name}.py").run()
        no_exception(at)


def test_page_icons_need_no_emoji_font_and_the_tab_icon_is_not_fetched():
    """Menu icons are Material icons (their font ships with Streamlit: no emoji font needed); the browser tab's
    icon is not one, since the browser would fetch a Material tab icon from fonts.gstatic.com. The browser
    journey (test_journey.py) holds that no request leaves the machine."""
    import re

    from textgen_dashboard.app import PAGE_ICON, PAGES

    assert all(re.fullmatch(r":material/[a-z0-9_]+:", icon) for _, _, icon in PAGES)
    assert not PAGE_ICON.startswith(":")
    emoji = re.compile("[\U0001F300-\U0001FAFF\u2600-\u27BF]")
    offenders = [f"{p.name}:{n}" for p in app_path().parent.rglob("*.py") if p.name != "app.py"
                 for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
                 if "icon=" in line and emoji.search(line)]
    assert not offenders


def test_a_database_locked_by_another_process_is_explained(app_db, monkeypatch):
    import subprocess
    import sys

    monkeypatch.setenv("TEXTGEN_EVAL_LOCK_TIMEOUT", "1")  # the dashboard waits this long for a busy file

    holder = subprocess.Popen([sys.executable, "-c", "import duckdb, sys, time; c = duckdb.connect(sys.argv[1]); "
                               "print('ready', flush=True); time.sleep(60)", str(app_db)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "ready"
        at = page("app.py").run()
        no_exception(at)
        assert "in use by" in at.error[0].value and f"PID {holder.pid}" in at.error[0].value
        assert not at.metric  # the page itself did not run
    finally:
        holder.kill()
        holder.wait()


def test_no_table_on_any_page_shows_none_for_a_missing_value(sample_run):
    """Streamlit writes 'None' in an empty cell unless the table sets a placeholder: every table on every page does."""
    from textgen_dashboard.app import PAGES

    at = page("app.py").run()
    seen = 0
    for name, _, _ in PAGES:
        at.switch_page(f"views/{name}.py").run()
        no_exception(at)
        for table in at.dataframe:
            assert table.proto.placeholder == "–", name
            seen += 1
    assert seen >= 5
