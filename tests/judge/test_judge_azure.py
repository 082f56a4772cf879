"""Azure OpenAI deployments as the judge: api-key header, api-version query, deployment in the path.

The loopback judge serves Azure's paths (/openai/deployments/{name}/chat/completions?api-version=...)
and refuses a request without the expected api-version or key, so a run that finishes proves both
arrived; the recorded requests show them.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from judge_server import CHAT, JudgeServer
from scripted_judge import ScriptedJudge, suite_rows
from textgen_core.cli.judge_args import add_judge_arguments, judge_settings_from_args
from textgen_core.errors import ParameterError
from textgen_core.evaluate import evaluate
from textgen_core.model import Dataset
from textgen_core.store import Store

VERSION = "2024-10-21"
KEY = "azure-key-0123456789"
METRICS = ["faithfulness", "coherence"]


def azure_args(server: JudgeServer, *extra: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    add_judge_arguments(parser)
    return parser.parse_args(["--judge-base-url", f"http://127.0.0.1:{server.port}", "--judge-model", "judge-deploy",
                              "--judge-api-version", VERSION, "--judge-api-key-env", "AZURE_TEST_KEY", *extra])


@pytest.fixture
def azure(monkeypatch: pytest.MonkeyPatch) -> JudgeServer:
    monkeypatch.setenv("AZURE_TEST_KEY", KEY)
    server = JudgeServer(responder=ScriptedJudge(), api_key=KEY)
    server.api_version = VERSION
    with server:
        yield server


def run(db: Path, settings) -> tuple[Store, int]:
    store = Store(db)
    return store, evaluate(store, store.save_dataset(Dataset("d", suite_rows(3))), METRICS, judge=settings)


def test_direct_calls_reach_the_deployment_with_key_header_and_version(azure: JudgeServer, db_path: Path) -> None:
    store, run_id = run(db_path, judge_settings_from_args(azure_args(azure)))
    frame = store.scores(run_id)
    assert store.get_run(run_id)["status"] == "finished" and frame["value"].notna().all()
    chats = azure.recorded(CHAT)
    assert chats and all(r.status == 200 for r in chats)
    for request in chats:
        assert request.route.deployment == "judge-deploy" and request.route.api_version == VERSION
        assert request.headers["api-key"] == KEY
        assert "authorization" not in request.headers  # Azure keys travel in api-key only
    assert KEY not in Path(db_path).read_bytes().decode("latin-1")


def test_batch_mode_on_azure(azure: JudgeServer, db_path: Path) -> None:
    azure.batches.delay = 0.05
    store, run_id = run(db_path, judge_settings_from_args(azure_args(azure, "--batch", "--batch-poll", "0.02", "--batch-settle", "0.1")))
    assert store.get_run(run_id)["status"] == "finished"
    assert azure.count(CHAT) == 0 and len(azure.batches.created) == 2
    for request in azure.recorded(None):
        assert request.route.api_version == VERSION and request.headers["api-key"] == KEY
        assert request.route.deployment is None  # files and batches are resource-level routes
    assert {line["url"] for b in azure.batches.created for line in azure.batches.lines(b)} == {"/chat/completions"}


def test_wrong_api_version_is_refused_not_scored(azure: JudgeServer, db_path: Path) -> None:
    azure.api_version = "2099-01-01"
    settings = judge_settings_from_args(azure_args(azure, "--retries", "0"))
    store = Store(db_path)
    dataset_id = store.save_dataset(Dataset("d", suite_rows(2)))
    run_id = evaluate(store, dataset_id, METRICS, judge=settings)
    frame = store.scores(run_id)
    assert len(frame) and frame["value"].isna().all()  # unscored with the endpoint's reason, never a number
    assert frame["reason"].str.contains("unsupported api-version").all()


def test_api_version_needs_the_resource_endpoint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TEXTGEN_EVAL_JUDGE_BASE_URL", raising=False)
    parser = argparse.ArgumentParser()
    add_judge_arguments(parser)
    with pytest.raises(ParameterError, match="resource endpoint"):
        judge_settings_from_args(parser.parse_args(["--judge-model", "d", "--judge-api-version", VERSION]))


def test_response_mode_flag_reaches_the_requests(azure: JudgeServer, db_path: Path) -> None:
    settings = judge_settings_from_args(azure_args(azure, "--judge-response-mode", "json_object"))
    assert settings.response_mode == "json_object"
    store, run_id = run(db_path, settings)
    assert store.get_run(run_id)["status"] == "finished"
    assert {r.response_format for r in azure.recorded(CHAT)} == {"json_object"}
