"""Adding a judge metric is one new module plus its registry entry: the README's metric table, `textgen-eval
metrics`, the dashboard's metric picker and the judge test suites follow from the declaration.

Every registered judge metric must appear in each of them (a test per place, parametrized by the registry).
A scratch metric added to a copy of the package, its module and its entry in ``judge/metrics/__init__.py``
and nothing else, shows up in the generated table, the listing and its own page.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from app_helpers import no_exception, page, store
from docs_files import section

from textgen_core.cli.main import main
from textgen_core.cli.metrics import metrics_markdown
from textgen_core.datasets import load_dataset
from textgen_core.judge.metrics import BUILT_IN
from textgen_dashboard import state

ROOT = Path(__file__).resolve().parents[2]
JUDGE = sorted(BUILT_IN)
#: A dataset with every column a built-in judge metric may need (so no checkbox is disabled for want of one).
FULL = (b"id,model,question,prediction,reference,contexts,lp\n"
        b'q1,a,Q?,An answer.,A reference.,"[""A passage.""]","[-0.5]"\n')


def _readme_rows() -> dict[str, str]:
    rows = section("<!-- metrics:", "<!-- /metrics -->")
    return {line.split(" | ")[0].strip("| `"): line for line in rows.splitlines()[2:]}


@pytest.mark.parametrize("name", JUDGE)
def test_a_registered_judge_metric_has_its_readme_row(name: str) -> None:
    generated = {line.split(" | ")[0].strip("| `"): line for line in metrics_markdown().splitlines()[2:]}
    assert name in generated, f"{name} is registered but not in the generated table"
    assert _readme_rows().get(name) == generated[name], \
        f"The docs' row of {name} is not the generated one: run python scripts/docs-tables.py"


@pytest.mark.parametrize("name", JUDGE)
def test_a_registered_judge_metric_is_listed_and_has_its_page(name: str, capsys) -> None:
    assert main(["metrics"]) == 0
    listed = {line.split()[0] for line in capsys.readouterr().out.splitlines() if line.strip()}
    assert name in listed
    assert main(["metrics", name]) == 0
    shown = capsys.readouterr().out
    assert shown.startswith(f"{name} - {BUILT_IN[name].label}") and BUILT_IN[name].description in shown


def test_every_registered_judge_metric_is_offered_by_the_dashboard_picker(app_db) -> None:
    store().save_dataset(load_dataset(FULL, file_name="full.csv", name="full"))
    at = page("views/evaluate.py").run()
    no_exception(at)
    offered = {box.key for box in at.checkbox}
    missing = [name for name in JUDGE if state.eval_metric(name) not in offered]
    assert not missing, f"registered judge metrics the Evaluate picker does not offer: {missing}"
    for name in JUDGE:
        assert at.checkbox(key=state.eval_metric(name)).label == f"{BUILT_IN[name].label} (`{name}`)"


SCRATCH = '''"""A scratch judge metric: is the prediction one sentence?"""

from __future__ import annotations

from typing import Any, Mapping

from ...model import Datum
from ..metric import Asker, JudgePlan, Outcome, declare
from ..prompting import Request, fence
from ._rating import CLOSING, rate, request as rating_request

SYSTEM = f"""Rate from 1 to 5 how nearly the text is a single sentence (5: one sentence).
{CLOSING}"""


def request(prediction: str) -> Request:
    return rating_request("one_sentence", "one_sentence/1", SYSTEM, fence("Text", prediction))


async def score(ask: Asker, row: Datum, params: Mapping[str, Any]) -> Outcome:
    return await rate(ask, request(row.prediction or ""), "prediction")


SPEC = declare("one_sentence", "One sentence", "1-5 rating of how nearly the prediction is one sentence.",
               ("prediction",), JudgePlan(score, (request("p"),), empty="unscored"),
               "A rating outside 1-5 is re-asked, then unscored.", value_range=(1.0, 5.0))
'''


def test_a_new_judge_metric_is_a_module_and_its_registry_entry(tmp_path: Path) -> None:
    copy = tmp_path / "textgen_core"
    shutil.copytree(ROOT / "textgen_core", copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "judge" / "metrics" / "one_sentence.py").write_text(SCRATCH, encoding="utf-8")
    registry = copy / "judge" / "metrics" / "__init__.py"
    text = registry.read_text(encoding="utf-8")
    assert "\nMODULES = (" in text
    registry.write_text(text.replace("\nMODULES = (", "\nfrom . import one_sentence\nMODULES = (one_sentence, ", 1),
                        encoding="utf-8")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}

    def cli(*args: str) -> str:
        done = subprocess.run([sys.executable, "-m", "textgen_core.cli.main", "metrics", *args], cwd=tmp_path,
                              env=env, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    table = cli("--markdown")
    row = "| `one_sentence` | judge | one_sentence | prediction | ↑ | 1-5 rating of how nearly the prediction is one sentence. |"
    assert row in table.splitlines() and table.replace(row + "\n", "") == metrics_markdown()
    assert "one_sentence" in {line.split()[0] for line in cli().splitlines() if line.strip()}
    assert cli("one_sentence").startswith("one_sentence - One sentence (judge)")
