"""Every metric is declared once and documented: the picker, the CLI and the README read the same facts."""

from __future__ import annotations

from pathlib import Path

import pytest
from docs_files import docs_text

from textgen_core.cli.main import main
from textgen_core.registry import all_metrics, direction_of, get_metric
from textgen_core.model import TEXT_FIELDS

README = docs_text()
SPECS = list(all_metrics().values())


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_declaration_is_complete(spec):
    assert spec.label and spec.description and spec.group in {"lexical", "llm", "endpoint"}
    assert spec.direction in {"higher", "lower", "none"}
    assert set(spec.needs) <= set(TEXT_FIELDS)
    for param in spec.params:
        assert param.help, f"{spec.name}.{param.name} has no help text"
        if param.default is not None:
            param.coerce(param.default, spec.name)  # every default is valid
    outputs = spec.outputs(spec.resolve())
    assert outputs and len(set(outputs)) == len(outputs)
    if spec.group == "lexical":
        assert spec.score is not None
    else:
        assert spec.plan is not None


def test_score_names_are_unique_across_metrics():
    owners: dict[str, str] = {}
    for spec in SPECS:
        for score in spec.outputs(spec.resolve()):
            assert score not in owners, f"{score} written by {owners.get(score)} and {spec.name}"
            owners[score] = spec.name


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_every_metric_is_in_the_readme(spec):
    assert f"`{spec.name}`" in README, f"README does not document {spec.name}"


@pytest.mark.parametrize("score, direction", [("wer", "lower"), ("rouge1", "higher"), ("hallucination", "lower"),
                                              ("answer_length", "none"), ("f1", "higher"), ("pass@1", "higher")])
def test_direction_by_score_name(score, direction):
    assert direction_of(score) == direction


def test_metrics_command_prints_each_declaration(capsys):
    assert main(["metrics"]) == 0
    listing = capsys.readouterr().out
    assert all(spec.name in listing for spec in SPECS)
    assert main(["metrics", "rouge"]) == 0
    page = capsys.readouterr().out
    assert "--param rouge.use_stemmer=False" in page and "higher is better" in page
    assert get_metric("rouge1").name == "rouge"
