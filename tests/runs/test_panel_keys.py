"""A panel member's key goes to its own endpoint only (#34.8), against two loopback judges through the CLI.

The lead judges on one server; a member on another (another port of 127.0.0.1: another endpoint origin).
Without ``api_key_env`` the member is refused before any request: the lead's key is never sent there. A key
typed where a variable's name belongs is never printed. A resumed panel whose member's key variable is unset
is refused naming the variable: nothing goes out with ``Bearer no-key``.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from judge_server import JudgeServer
from textgen_core.cli.main import main
from textgen_core.errors import ParameterError
from textgen_core.judge.settings import JudgeSettings
from textgen_core.runs.panel import read_panel, restore

LEAD_KEY = "sk-lead-0123456789abcdefghij"
MEMBER_KEY = "sk-member-9876543210zyxwvu"
TYPED_KEY = "sk-proj-" + "Qw3rTy7uI9oP1aS5dF2gH8jK4lZ6xC0vB" * 4  # pasted where the variable's name goes


def grade(request: dict) -> dict:
    return {"reason": "same city", "grade": "CORRECT"}


@pytest.fixture
def two(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    monkeypatch.setenv("TEXTGEN_EVAL_JUDGE_API_KEY", LEAD_KEY)
    data = tmp_path / "outputs.csv"
    pd.DataFrame({"id": [f"d{i}" for i in range(4)], "model": "m", "query": [f"Capital {i}?" for i in range(4)],
                  "prediction": [f"City {i}." for i in range(4)],
                  "reference": [f"City {i}." for i in range(4)]}).to_csv(data, index=False)
    with JudgeServer(responder=grade) as lead, JudgeServer(responder=grade) as member:
        yield lead, member, data, tmp_path


def argv(lead: JudgeServer, data: Path, db: Path, panel: Path, *more: str) -> list[str]:
    return ["--db", str(db), "run", str(data), "--metrics", "qa_grade", "--judge-base-url", lead.url,
            "--judge-model", "lead", "--retries", "1", "--timeout", "5", "--jury-panel", str(panel), *more]


def authorizations(*servers: JudgeServer) -> list[str]:
    return [r.headers.get("authorization", "") for s in servers for r in s.recorded(None)]


def test_a_member_on_another_host_without_a_key_variable_is_refused_before_any_request(two, capsys) -> None:
    lead, member, data, tmp = two
    panel = tmp / "panel.toml"
    panel.write_text(f'[[member]]\nmodel = "other"\nbase_url = "{member.url}"\n')
    assert main(argv(lead, data, tmp / "a.duckdb", panel)) == 2
    err = capsys.readouterr().err
    assert "member 1 (other)" in err and "another host" in err and "api_key_env" in err and "Traceback" not in err
    assert LEAD_KEY not in err and member.count(None) == 0 and lead.count(None) == 0


def test_a_member_given_its_variable_sends_its_own_key_and_an_empty_name_sends_none(two, monkeypatch) -> None:
    lead, member, data, tmp = two
    monkeypatch.setenv("MEMBER_KEY", MEMBER_KEY)
    panel = tmp / "panel.toml"
    panel.write_text(f'[[member]]\nmodel = "other"\nbase_url = "{member.url}"\napi_key_env = "MEMBER_KEY"\n')
    assert main(argv(lead, data, tmp / "b.duckdb", panel)) == 0
    assert set(authorizations(member)) == {f"Bearer {MEMBER_KEY}"} and set(authorizations(lead)) == {
        f"Bearer {LEAD_KEY}"}
    member.reset()
    panel.write_text(f'[[member]]\nmodel = "other"\nbase_url = "{member.url}"\napi_key_env = ""\n')
    assert main(argv(lead, data, tmp / "c.duckdb", panel)) == 0
    assert member.count(None) > 0 and LEAD_KEY not in " ".join(authorizations(member))


@pytest.mark.parametrize("typed", [TYPED_KEY, "sk_live_51HxAbCdEfGhIjKlMn0123456789"])
def test_a_key_typed_where_the_variable_name_belongs_is_never_printed(two, capsys, typed: str) -> None:
    lead, member, data, tmp = two
    panel = tmp / "panel.toml"
    panel.write_text(f'[[member]]\nmodel = "other"\nbase_url = "{member.url}"\napi_key_env = "{typed}"\n')
    assert main(argv(lead, data, tmp / "d.duckdb", panel)) == 2
    printed = capsys.readouterr()
    assert "api_key_env" in printed.err and "member 1 (other)" in printed.err
    assert typed[:8] not in printed.out + printed.err and member.count(None) == 0


def test_resuming_a_panel_whose_member_variable_is_unset_names_it_and_sends_nothing(two, monkeypatch,
                                                                                    capsys) -> None:
    lead, member, data, tmp = two
    monkeypatch.setenv("MEMBER_KEY", MEMBER_KEY)
    panel, db = tmp / "panel.toml", tmp / "e.duckdb"
    panel.write_text(f'[[member]]\nmodel = "other"\nbase_url = "{member.url}"\napi_key_env = "MEMBER_KEY"\n')
    assert main(argv(lead, data, db, panel, "--max-calls", "3")) != 0  # stopped at its cap: interrupted
    capsys.readouterr()
    sent = lead.count(None) + member.count(None)
    monkeypatch.delenv("MEMBER_KEY")
    assert main(["--db", str(db), "resume", "1", "--judge-base-url", lead.url, "--judge-model", "lead"]) == 2
    err = capsys.readouterr().err
    assert "MEMBER_KEY is not set" in err and "Traceback" not in err
    assert lead.count(None) + member.count(None) == sent
    assert "Bearer no-key" not in authorizations(lead, member)


def test_a_stored_member_on_another_host_without_a_variable_is_refused_on_restore() -> None:
    lead = JudgeSettings(base_url="https://api.example.com/v1", model="lead", api_key=LEAD_KEY)
    stored = {"samples": 1, "panel": [{"name": "lead"}, {"name": "other", "model": "other",
                                                         "base_url": "http://10.0.0.9:8000/v1", "api_key_env": None}]}
    with pytest.raises(ParameterError, match=r"panel member 1 \(other\).*another host") as caught:
        restore(stored, lead)
    assert LEAD_KEY not in str(caught.value)
    same_host = {"samples": 1, "panel": [{"name": "lead"}, {"name": "other", "model": "other",
                                                            "base_url": "https://API.example.com:443/v2"}]}
    assert restore(same_host, lead).members[1].api_key == LEAD_KEY  # the lead's host: the lead's key


def test_read_panel_keeps_the_lead_key_on_the_lead_host(tmp_path: Path) -> None:
    lead = JudgeSettings(base_url="https://api.example.com/v1", model="lead", api_key=LEAD_KEY)
    panel = tmp_path / "panel.toml"
    panel.write_text('[[member]]\nmodel = "mini"\n')
    assert read_panel(str(panel), lead).members[1].api_key == LEAD_KEY
