"""Judge settings are remembered: what one page typed starts the next page's form, and named judge profiles
(stored in the database, never with the key) are offered on every page that asks a judge."""

from __future__ import annotations

from app_helpers import all_text, no_exception, page, store

from textgen_core.datasets import load_dataset
from textgen_core.registry import all_metrics
from textgen_dashboard import data, state

ROWS = b"id,model,question,answer\nt1,m,Where is my order?,On its way\nt2,m,Refund?,Yes\n"
KEY = "sk-never-stored-12345"


def _judged_metric() -> str:
    """A judge metric that runs on query and prediction alone."""
    return next(name for name, spec in all_metrics().items()
                if spec.group == "llm" and not spec.missing({"query", "prediction"}, {}))


def _app_on(view: str):
    at = page("app.py").run()
    return at.switch_page(f"views/{view}.py").run()


def _value(at, page_name: str, name: str):
    key = state.judge_key(page_name, name)
    found = [w for w in (*at.text_input, *at.number_input) if w.key == key]
    return found[0].value if found else None


def test_settings_typed_on_one_page_start_the_next_page_that_asks_a_judge(app_db):
    store().save_dataset(load_dataset(ROWS, file_name="t.csv", name="tickets"))
    data.refresh()
    at = _app_on("criteria")
    no_exception(at)
    at.text_input(key=state.judge_key("criteria", "base_url")).set_value("http://127.0.0.1:9/v1")
    at.text_input(key=state.judge_key("criteria", "model")).set_value("judge-x")
    at.number_input(key=state.judge_key("criteria", "price_prompt_per_million")).set_value(0.5)
    at.text_input(key=state.judge_key("criteria", "api_key")).set_value(KEY)
    at.run()
    at.switch_page("views/evaluate.py").run()
    at.checkbox(key=state.eval_metric(_judged_metric())).check().run()
    no_exception(at)
    assert _value(at, "evaluate", "base_url") == "http://127.0.0.1:9/v1"
    assert _value(at, "evaluate", "model") == "judge-x"
    assert _value(at, "evaluate", "price_prompt_per_million") == 0.5
    assert _value(at, "evaluate", "api_key") == ""  # the key is typed again (or read from the environment)


def test_a_saved_profile_is_offered_everywhere_and_never_holds_the_key(app_db):
    store().save_dataset(load_dataset(ROWS, file_name="t.csv", name="tickets"))
    data.refresh()
    at = _app_on("evaluate")
    at.checkbox(key=state.eval_metric(_judged_metric())).check().run()
    at.text_input(key=state.judge_key("evaluate", "base_url")).set_value("http://127.0.0.1:9/v1")
    at.text_input(key=state.judge_key("evaluate", "model")).set_value("judge-y")
    at.number_input(key=state.judge_key("evaluate", "concurrency")).set_value(3)
    at.text_input(key=state.judge_key("evaluate", "api_key")).set_value(KEY)
    at.run()
    at.text_input(key=state.judge_key("evaluate", "profile_name")).set_value("local judge").run()
    at.button(key=state.judge_key("evaluate", "profile_save")).click().run()
    no_exception(at)
    assert "Saved the judge profile local judge" in all_text(at)
    profiles = store().judge_profiles()
    assert list(profiles["name"]) == ["local judge"]
    settings = profiles["settings"][0]
    assert settings["model"] == "judge-y" and settings["concurrency"] == 3 and "api_key" not in settings
    assert KEY.encode() not in app_db.read_bytes()

    # another browser session, another page: the profile is there to pick, and fills the form
    other = _app_on("criteria")
    assert _value(other, "criteria", "model") in ("", None)
    other.selectbox(key=state.JUDGE_PROFILE).set_value("local judge").run()
    no_exception(other)
    assert _value(other, "criteria", "model") == "judge-y"
    assert _value(other, "criteria", "base_url") == "http://127.0.0.1:9/v1"
    assert _value(other, "criteria", "concurrency") == 3
