"""Judge settings are one table (``judge/settings.py``); the dataclass, its checks, the CLI flags, the dashboard
form and the README's settings table all follow from it. So do the repeated-judging and panel settings (a second
table, ``JURY_SETTINGS``, read by the same machinery)."""

from __future__ import annotations

import argparse
import json
import math
import sys
from dataclasses import MISSING, fields
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from docs_files import section

from textgen_core.cli.judge_args import (add_judge_arguments, judge_settings_for_resume, judge_settings_from_args,
                                         jury_from_args)
from textgen_core.errors import ParameterError
from textgen_core.runs.panel import Jury
from textgen_core.judge.settings import JURY_BY_NAME, JURY_SETTINGS, REQUIRED, SETTINGS, JudgeSettings, settings_markdown

ROOT = Path(__file__).resolve().parents[2]
#: A value each setting accepts that is not its default.
GIVEN = {"str": "given-text", "int": 7, "float": 0.25, "bool": True}


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="t")
    add_judge_arguments(parser)
    return parser


def _given(s) -> object:  # noqa: ANN001 - a Setting
    return s.choices[-1] if s.choices else GIVEN[s.kind]


def test_the_dataclass_fields_are_the_table_rows_in_order_with_their_defaults() -> None:
    declared = [(f.name, REQUIRED if f.default is MISSING else f.default) for f in fields(JudgeSettings)]
    assert declared == [(s.name, s.default) for s in SETTINGS]
    assert all(s.help.strip() for s in (*SETTINGS, *JURY_SETTINGS))  # every setting is documented


def test_every_flag_reaches_its_setting(clean_env) -> None:
    argv = ["--judge-model", "m"]
    for s in SETTINGS:
        if s.flag and s.name != "model":
            argv += [s.flag] if s.kind == "bool" else [s.flag, str(_given(s))]
    argv += ["--price-prompt", "1"]  # a cost cap needs a price
    settings = judge_settings_from_args(_parser().parse_args(argv))
    for s in SETTINGS:
        if s.flag and s.name not in ("model", "price_prompt_per_million"):
            assert getattr(settings, s.name) == _given(s), s.name


@pytest.mark.parametrize("s", [s for s in SETTINGS if s.kind in ("int", "float") and s.low is not None],
                         ids=lambda s: s.name)
def test_a_value_out_of_bounds_names_the_setting_and_its_bound(s, clean_env) -> None:
    below = s.low - (1 if s.kind == "int" else s.low / 2 or 0.5)
    with pytest.raises(ParameterError, match=rf"judge setting {s.name}=.* must be .*{s.low:g}"):
        judge_settings_from_args(_parser().parse_args(["--judge-model", "m", "--price-prompt", "1",
                                                       s.flag, str(below)]))
    if s.high is not None and not math.isinf(s.high):
        with pytest.raises(ParameterError, match=rf"judge setting {s.name}=.* and {s.high:g}"):
            JudgeSettings("u", "m", **{s.name: s.high * 2})


def test_a_value_of_the_wrong_type_is_refused_by_name() -> None:
    for name, bad in (("batch", "yes"), ("seed", 1.5), ("concurrency", True), ("temperature", "0"),
                      ("response_mode", "xml")):
        with pytest.raises(ParameterError, match=f"judge setting {name}="):
            JudgeSettings("u", "m", **{name: bad})


def test_the_fingerprint_holds_the_settings_the_table_marks() -> None:
    settings = JudgeSettings("http://h/v1/", "m", api_key="sk-x", concurrency=3, temperature=1)
    assert set(settings.fingerprint()) == {s.name for s in SETTINGS if s.fingerprint is True}
    assert settings.fingerprint()["base_url"] == "http://h/v1" and settings.fingerprint()["temperature"] == 1.0
    assert "sk-x" not in json.dumps(settings.public()) and "sk-x" not in repr(settings)


def test_a_resume_takes_the_stored_settings_but_not_the_caps(clean_env) -> None:
    stored = JudgeSettings("http://h/v1", "m", max_tokens=99, price_prompt_per_million=1.0, max_cost=2.0,
                           max_calls=5).public()
    again = judge_settings_for_resume(_parser().parse_args(["--timeout", "9"]), stored)
    assert (again.model, again.max_tokens, again.timeout, again.max_cost, again.max_calls) == ("m", 99, 9.0, None, None)


def test_readme_settings_table_is_the_generated_one(cli_main) -> None:
    assert section("<!-- judge-settings:", "<!-- /judge-settings -->") == settings_markdown()
    done = cli_main("metrics", "--markdown", "settings")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out == settings_markdown()
    assert all(f"| `{s.name}` | `{s.flag}` |" in out for s in JURY_SETTINGS)
    assert all(f"| `{s.name}` |" in out for s in SETTINGS)


def _form_page() -> None:
    import json as js

    import streamlit as st

    from textgen_dashboard.judge_scale import judge_form

    stored = {"base_url": "http://h/v1", "model": "m", "max_tokens": 77, "timeout": 5.0, "concurrency": 3,
              "max_cost": 9.0, "price_prompt_per_million": 1.0, "response_mode": "text"}
    settings, problem = judge_form("t", stored)
    st.code(js.dumps(settings.public() if settings else {"problem": problem}), language="json")


def test_the_dashboard_form_has_one_input_per_shown_setting_and_keeps_the_stored_rest(clean_env, tmp_path) -> None:
    clean_env.setenv("TEXTGEN_EVAL_DB", str(tmp_path / "profiles.duckdb"))  # the form reads saved judge profiles
    at = AppTest.from_function(_form_page, default_timeout=60).run()
    assert not at.exception
    shown = {s.name: s for s in SETTINGS if s.place is not None}
    for name, s in shown.items():
        widget = at.get_by_key(f"t.judge.{name}")
        assert widget.label == s.label and widget.help == s.help, name
    public = json.loads(at.code[0].value)
    # shown: the stored value; not shown: the stored value (max_tokens, timeout) or the default; caps: given anew
    assert (public["concurrency"], public["response_mode"], public["max_tokens"], public["timeout"]) == (3, "text", 77, 5.0)
    assert public["max_cost"] is None and public["retries"] == 4
    at.number_input(key="t.judge.temperature").set_value(2.0).run()
    assert json.loads(at.code[0].value)["temperature"] == 2.0


def test_every_jury_flag_comes_from_its_row_and_reaches_the_panel(clean_env, tmp_path) -> None:
    help_text = _parser().format_help()
    for s in JURY_SETTINGS:
        assert s.flag in help_text, s.name
    judge = JudgeSettings("http://h/v1", "m", temperature=0.5)
    args = _parser().parse_args(["--samples", "3", "--jury-model", "m2", "--jury-model", "m3",
                                 "--jury-aggregate", "majority"])
    jury = jury_from_args(args, judge)
    assert (jury.samples, jury.names, jury.aggregate) == (3, ["m", "m2", "m3"], "majority")
    panel = tmp_path / "panel.toml"
    panel.write_text('samples = 2\n[[member]]\nmodel = "m4"\n', encoding="utf-8")
    jury = jury_from_args(_parser().parse_args(["--jury-panel", str(panel)]), judge)
    assert (jury.samples, jury.names) == (2, ["m", "m4"])
    assert jury_from_args(_parser().parse_args([]), judge) is None  # no flag of the group: one judge, once


@pytest.mark.parametrize(("argv", "message"), [
    (["--samples", "0"], "judge setting samples=0 must be an integer from 1 to 100"),
    (["--samples", "101"], "judge setting samples=101 must be an integer from 1 to 100"),
    (["--jury-model", " "], "judge setting models=.* must be a list of non-empty names"),
])
def test_a_jury_value_out_of_bounds_is_refused_by_its_row(argv, message, clean_env) -> None:
    with pytest.raises(ParameterError, match=message):
        jury_from_args(_parser().parse_args(argv), JudgeSettings("http://h/v1", "m"))


def test_the_panel_checks_are_the_rows_checks() -> None:
    judge = JudgeSettings("http://h/v1", "m")
    with pytest.raises(ParameterError, match="judge setting aggregate='median' must be one of mean, majority"):
        Jury((judge,), aggregate="median")
    with pytest.raises(ParameterError, match="judge setting samples=True must be an integer"):
        Jury((judge,), samples=True)
    with pytest.raises(SystemExit):  # argparse refuses a choice the row does not list
        _parser().parse_args(["--jury-aggregate", "median"])


def _jury_page() -> None:
    import json as js

    import streamlit as st

    from textgen_core.judge.settings import JudgeSettings as Settings
    from textgen_dashboard.panel import jury_form

    jury, problem = jury_form(Settings("http://h/v1", "m", temperature=0.7))
    st.code(js.dumps(jury.public() if jury else {"problem": problem}), language="json")


def test_the_evaluate_panel_inputs_are_the_rows_the_table_shows(clean_env) -> None:
    from textgen_dashboard.state import jury_key

    at = AppTest.from_function(_jury_page, default_timeout=60).run()
    assert not at.exception
    for s in JURY_SETTINGS:
        if s.place == "jury":
            widget = at.get_by_key(jury_key(s.name))
            assert widget.label == s.label and widget.help == s.help, s.name
    assert json.loads(at.code[0].value) == {"problem": None}  # one judge, asked once: no panel
    at.text_input(key=jury_key("models")).set_value("m2, m3").run()
    at.number_input(key=jury_key("samples")).set_value(2).run()
    at.selectbox(key=jury_key("aggregate")).set_value("majority").run()
    public = json.loads(at.code[0].value)
    assert (public["samples"], public["aggregate"], [m["name"] for m in public["panel"]]) == \
        (2, "majority", ["m", "m2", "m3"])
    at.selectbox(key=jury_key("aggregate")).set_value(JURY_BY_NAME["aggregate"].default_text()).run()
    assert json.loads(at.code[0].value)["aggregate"] is None  # decided per metric
