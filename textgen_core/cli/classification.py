"""Terminal output of a classification run: per-label scores, averages, the confusion matrix; and the paired
comparison of two models (McNemar on accuracy, bootstrap on macro-F1)."""

from __future__ import annotations

from typing import Any, Sequence

import pandas as pd

from ..compare.classification import classification_reports, compare_classification
from ..store import Store


def print_reports(store: Store, run_id: int) -> None:
    """Print each model's classification report (nothing for a run without the metric); above SHOWN_LABELS
    labels, the per-label table of the labels with the most support and the largest confusions."""
    from ..metrics.classification.report import SHOWN_LABELS

    if "classification" not in store.get_run(run_id)["metrics"]:
        return
    for model, rep in classification_reports(store, run_id).items():
        print(f"\nclassification, model {model}: {rep['rows']} labelled rows scored, {rep['unscored']} unscored")
        for reason, count in rep.get("unscored_reasons", {}).items():
            print(f"  unscored ({count}): {reason}")
        if not rep["rows"]:
            continue
        table = per_label_table(rep)
        if len(table) > SHOWN_LABELS:
            print(f"per label: the {SHOWN_LABELS} labels with the most support of {len(table):,} "
                  "(textgen_core.classification_report returns every label)")
            table = table.sort_values("support", ascending=False, kind="stable").head(SHOWN_LABELS)
        print(table.to_string(index=False))
        print("averages: " + ", ".join(f"{k} {v:.4f}" for k, v in rep["averages"].items()))
        if rep.get("roc_note"):
            print(f"ROC AUC: not computed - {rep['roc_note']}")
        confusion = rep["confusion"]
        if confusion.get("note"):
            print(f"confusion: {confusion['note']}; the {len(confusion['top_confusions'])} largest confusions "
                  "(gold -> predicted: rows):")
            for cell in confusion["top_confusions"]:
                print(f"  {cell['gold']} -> {cell['predicted']}: {cell['count']}")
            continue
        print("confusion matrix (rows: gold label, columns: predicted label; 'none': no label passed the threshold):")
        print(confusion_table(rep).to_string())


def per_label_table(rep: dict[str, Any]) -> pd.DataFrame:
    frame = pd.DataFrame(rep["per_label"])[["label", "precision", "recall", "f1", "support", "roc_auc"]]
    for column in ("precision", "recall", "f1", "roc_auc"):
        frame[column] = frame[column].map(lambda v: "" if v is None or pd.isna(v) else f"{v:.4f}")
    return frame


def confusion_table(rep: dict[str, Any]) -> pd.DataFrame:
    labels: Sequence[str] = rep["confusion"]["labels"]
    frame = pd.DataFrame(rep["confusion"]["matrix"], index=list(labels), columns=list(labels))
    frame["none"] = rep["confusion"]["unmatched"]
    frame.index.name = "gold \\ predicted"
    return frame


def print_comparison(store: Store, run_id: int, baseline: str, candidates: Sequence[str], *, resamples: int,
                     confidence: float, seed: int) -> None:
    """Print McNemar and the macro-F1 bootstrap for each candidate (nothing for a run without the metric)."""
    if "classification" not in store.get_run(run_id)["metrics"]:
        return
    print("\nclassification: accuracy (exact McNemar on the discordant datums) and macro-F1 (paired bootstrap, "
          f"{resamples} resamples, {confidence:.0%} percentile interval)")
    for candidate in candidates:
        c = compare_classification(store, run_id, baseline, candidate, resamples=resamples, confidence=confidence,
                                   seed=seed)
        print(f"  {candidate} vs {baseline} on {c.n} datums ({c.unpaired} scored for one model only, left out): "
              f"accuracy {c.accuracy_candidate:.4f} vs {c.accuracy_baseline:.4f}, right only for the candidate "
              f"{c.candidate_only}, only for the baseline {c.baseline_only}, McNemar p {c.mcnemar_p:.4g}; "
              f"macro-F1 {c.f1_macro_candidate:.4f} vs {c.f1_macro_baseline:.4f}, delta {c.f1_macro_delta:+.4f} "
              f"[{c.f1_ci_low:+.4f}, {c.f1_ci_high:+.4f}], p {c.f1_p:.4g}")
