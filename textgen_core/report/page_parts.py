"""The optional sections of the report page: comparison, calibration, panel, people, classification, slices."""

from __future__ import annotations

from typing import Any

from .markup import Markup, exact, num, pval, tag
from .svg import interval_chart


def cell(value: Any, digits: int = 4, signed: bool = False) -> Markup:
    """A numeric table cell: the CLI's text, the exact value in data-value."""
    return tag("td", num(value, digits, signed), cls="n", data_value=exact(value))


def interval_text(low: Any, high: Any, signed: bool = False) -> str:
    """'[low, high]' or 'too few' (no interval), as the CLI prints it."""
    if exact(low) is None or exact(high) is None:
        return "too few"
    return f"[{num(low, signed=signed)}, {num(high, signed=signed)}]"


def table(head: list[Any], rows: list[list[Any]], **attrs: Any) -> Markup:
    """A table; a row's items that are cells (markup starting with <td) stay, others become plain td text."""
    body = [tag("tr", *[c if isinstance(c, Markup) and c.startswith("<td") else tag("td", c) for c in row])
            for row in rows]
    return tag("table", tag("thead", tag("tr", *[tag("th", h) for h in head])), tag("tbody", *body), **attrs)


def _counts(row: dict[str, Any], role: str) -> str:
    return "/".join(str(row[f"{kind}_{role}"]) for kind in ("scored", "unscored", "empty", "missing"))


def comparison_section(part: dict[str, Any] | None) -> Markup | None:
    if not part:
        return None
    settings = part["settings"]
    holm = settings["holm"]
    head = ["candidate", "score", "dir", "n", "baseline", "cand.", "delta", f"{settings['confidence']:.0%} CI", "p"]
    head += ["p (Holm)"] if holm else []
    head += ["verdict", "mde", "W/T/L", "base s/u/e/m", "cand. s/u/e/m"]
    rows = []
    for r in part["rows"]:
        verdict_text = r["verdict"] + (f": {r['why']}" if r.get("why") else "")
        line = [r["candidate"], r["score"], r["direction"], str(r["n"]), cell(r["baseline_mean"]),
                cell(r["candidate_mean"]), cell(r["delta"], signed=True),
                tag("td", interval_text(r["ci_low"], r["ci_high"], signed=True), cls="n"),
                tag("td", pval(r["p_value"]), cls="n", data_value=exact(r["p_value"]))]
        if holm:
            line.append(tag("td", pval(r["p_adjusted"]), cls="n", data_value=exact(r["p_adjusted"])))
        line += [tag("td", verdict_text, cls=r["verdict"].replace(" ", "-")), cell(r["mde"]),
                 f"{r['wins']}/{r['ties']}/{r['losses']}", _counts(r, "baseline"), _counts(r, "candidate")]
        rows.append(line)
    parts: list[Any] = [
        tag("h2", f"Comparison with {part['baseline']}"),
        tag("p", f"Baseline {part['baseline']} against {', '.join(part['candidates'])}: {settings['resamples']} "
                 f"resamples, seed {settings['seed']}. delta = candidate - baseline over datums scored for both; "
                 f"interval: {settings['ci_method']}. p: two-sided paired sign-flip permutation test"
                 + (", Holm-adjusted over the family (p (Holm))" if holm else ", unadjusted")
                 + f"; verdicts at alpha {settings['alpha']:g}, in each score's direction. W/T/L: datums where the "
                   "candidate is better / tied / worse. s/u/e/m: scored/unscored/empty/missing datums.", cls="note"),
        table(head, rows, cls="comparison"),
    ]
    for score in part["scores"]:
        mine = [r for r in part["rows"] if r["score"] == score]
        parts.append(tag("p", f"{score}: delta (candidate - baseline) with its interval", cls="note"))
        parts.append(interval_chart(mine, label="candidate", value="delta", low="ci_low", high="ci_high", zero=True,
                                    title=f"{score}: delta (candidate - baseline) with its interval"))
    for r in part["rows"]:
        if r["verdict"] == "inconclusive" and "different datums" in (r.get("why") or "") and exact(r["worst"]):
            parts.append(tag("p", f"sensitivity {r['candidate']} / {r['score']}: counting missing and unscored cells "
                                  f"as {num(r['worst'])}, delta {num(r['sensitivity_delta'], signed=True)} "
                                  f"{interval_text(r['sensitivity_ci_low'], r['sensitivity_ci_high'], True)}, "
                                  f"p {pval(r['sensitivity_p'])}.", cls="note"))
    if part.get("note"):
        parts.append(tag("p", part["note"], cls="note"))
    if part.get("undeclared"):
        parts.append(tag("p", f"Direction not declared for {', '.join(part['undeclared'])}: counted as higher is "
                              "better.", cls="note"))
    if part.get("pairwise"):
        parts.append(tag("h3", "Pairwise preference (asked in both orders; a verdict counts when both agree)"))
        parts.append(table(["candidate", "baseline", "W/T/L", "flips", "unscored", "win rate", "interval"],
                            [[r["candidate"], r["baseline"], f"{r['wins']}/{r['ties']}/{r['losses']}",
                              str(r["order_inconsistent"]), str(r["unscored"]), cell(r["win_rate"]),
                              interval_text(r["ci_low"], r["ci_high"])] for r in part["pairwise"]]))
    for c in part.get("classification") or []:
        parts.append(tag("p", f"classification, {c['candidate']} vs {part['baseline']} on {c['n']} datums: accuracy "
                              f"{num(c['accuracy_candidate'])} vs {num(c['accuracy_baseline'])}, McNemar p "
                              f"{pval(c['mcnemar_p'])}; macro-F1 {num(c['f1_macro_candidate'])} vs "
                              f"{num(c['f1_macro_baseline'])}, delta {num(c['f1_macro_delta'], signed=True)} "
                              f"{interval_text(c['f1_ci_low'], c['f1_ci_high'], True)}, p {pval(c['f1_p'])}", cls="note"))
    return tag("section", *parts, id="comparison", cls="major")


def calibration_section(part: dict[str, Any] | None) -> Markup | None:
    if part is None:
        return None
    parts: list[Any] = [tag("h2", "Bias-corrected numbers (judge calibrated against people)")]
    if part.get("note"):
        parts.append(tag("p", part["note"], cls="note"))
    if part["means"]:
        parts.append(tag("p", "judge: the judge-only mean with its t interval; calibrated: prediction-powered mean "
                              "(PPI++, lambda power-tuned) with its normal interval, from labels sampled at random.",
                         cls="note"))
        parts.append(table(["model", "score", "judge", "calibrated", "lambda", "labels", "judged", "note"],
                            [[r["model"], r["score"], f"{num(r['judge_mean'])} "
                              f"{interval_text(r['judge_ci_low'], r['judge_ci_high'])}",
                              tag("td", f"{num(r['calibrated'])} {interval_text(r['ci_low'], r['ci_high'])}", cls="n",
                                  data_value=exact(r["calibrated"])),
                              cell(r["lam"]), str(r["n_labels"]), str(r["n_judged"]), r.get("note") or ""]
                             for r in part["means"]], cls="calibrated"))
    if part["deltas"]:
        parts.append(tag("h3", "Bias-corrected paired differences"))
        parts.append(table(["candidate", "score", "judge delta", "calibrated delta", "lambda", "labelled pairs",
                             "judged pairs", "note"],
                            [[r["candidate"], r["score"], f"{num(r['judge_delta'])} "
                              f"{interval_text(r['judge_ci_low'], r['judge_ci_high'])}",
                              f"{num(r['calibrated_delta'])} {interval_text(r['ci_low'], r['ci_high'])}",
                              cell(r["lam"]), str(r["n_labels"]), str(r["n_judged"]), r.get("note") or ""]
                             for r in part["deltas"]]))
    return tag("section", *parts, id="calibration")


def panel_section(part: dict[str, Any] | None) -> Markup | None:
    if not part:
        return None
    parts: list[Any] = [tag("h2", "Judge panel agreement"), tag("p", (
        "Krippendorff's alpha among the panel's members over the cells (1 = they always agree, 0 = no better than "
        "chance), with a 95% bootstrap interval over cells; unscored votes are missing, not 0."), cls="note")]
    if part["scores"]:
        parts.append(table(["score", "level", "members", "alpha", "interval", "cells with 2+ members", "split cells"],
                            [[r["score"], r["level"], ", ".join(r["members"]),
                              cell(r["alpha"], 3) if not r["reason"] else f"undefined: {r['reason']}",
                              interval_text(r["low"], r["high"]), f"{r['n_units']} of {r['n_cells']}",
                              str(r["n_split"])] for r in part["scores"]]))
    if part["unstable"]:
        parts.append(tag("h3", "Unstable cells (their votes disagree)"))
        parts.append(table(["model", "score", "unstable", "scored"],
                            [[r["model"], r["score"], str(r["unstable"]), str(r["scored"])] for r in part["unstable"]]))
    if part["members"]:
        parts.append(tag("h3", "Each judge's mean"))
        parts.append(table(["model", "score", "judge", "mean", "scored votes", "unscored votes"],
                            [[r["model"], r["score"], r["judge"], cell(r["mean"]), str(r["n_scored"]),
                              str(r["n_unscored"])] for r in part["members"]]))
    return tag("section", *parts, id="panel")


def people_section(parts_in: list[dict[str, Any]]) -> Markup | None:
    if not parts_in:
        return None
    parts: list[Any] = [tag("h2", "Judge against people"), tag("p", (
        "Agreement of the judge with the people's labels, each statistic with a 95% bootstrap interval over cells; "
        "the people's value of a cell is their mean (rounded to the scale for scales of whole values)."), cls="note")]
    for p in parts_in:
        parts.append(tag("h3", f"{p['score']} ({p['kind']}): {p['n_labels']} labels by "
                               f"{len(p['annotators'])} annotator(s)"))
        stats = [k for k in (p["table"][0] if p["table"] else {}) if k not in ("model", "n")
                 and not k.endswith(("_low", "_high"))]
        rows = []
        for r in p["table"]:
            line = [r["model"], str(r["n"])]
            for name in stats:
                if f"{name}_low" in r:
                    line.append(tag("td", f"{num(r[name])} {interval_text(r[f'{name}_low'], r[f'{name}_high'])}",
                                    cls="n", data_value=exact(r[name])))
                else:
                    line.append(cell(r[name]))
            rows.append(line)
        parts.append(table(["model", "n", *stats], rows, cls="people", data_score=p["score"]))
        grid = p["confusion"]
        if grid["rows"]:
            parts.append(tag("p", "confusion (rows: judge, columns: people)", cls="note"))
            parts.append(table([f"{grid['row_name']} \\ {grid['column_name']}", *grid["columns"]],
                                [[name, *[str(v) for v in counts]] for name, counts in zip(grid["rows"],
                                                                                          grid["counts"])]))
        if exact(p["alpha"]) is not None:
            parts.append(tag("p", f"between people: Krippendorff's alpha {num(p['alpha'])} "
                                  f"{interval_text(p['alpha_low'], p['alpha_high'])} over {p['alpha_units']} cells "
                                  "labelled by two or more", cls="note"))
        if p["disagreements"]:
            parts.append(tag("p", f"largest disagreements ({p['n_disagreements']} in all):", cls="note"))
            parts.append(table(["datum", "model", "judge", "people", "gap"],
                                [[r["datum_id"], r["model"], cell(r["judge"]), cell(r["human"]), cell(r["gap"])]
                                 for r in p["disagreements"]]))
        for note in p["notes"]:
            parts.append(tag("div", note, cls="warn"))
    return tag("section", *parts, id="people")


def classification_section(reports: dict[str, Any]) -> Markup | None:
    if not reports:
        return None
    parts: list[Any] = [tag("h2", "Classification")]
    for model, rep in reports.items():
        parts.append(tag("h3", f"{model}: {rep.get('rows', 0)} labelled rows scored, {rep.get('unscored', 0)} "
                               "unscored"))
        for reason, count in (rep.get("unscored_reasons") or {}).items():
            parts.append(tag("p", f"unscored ({count}): {reason}", cls="note"))
        if not rep.get("rows"):
            continue
        parts.append(table(["label", "precision", "recall", "f1", "support", "ROC AUC"],
                            [[r["label"], cell(r.get("precision")), cell(r.get("recall")), cell(r.get("f1")),
                              str(r.get("support")), cell(r.get("roc_auc"))] for r in rep["per_label"]]))
        parts.append(tag("p", "averages: " + ", ".join(f"{k} {num(v)}" for k, v in rep["averages"].items()),
                         cls="note"))
        if rep.get("roc_note"):
            parts.append(tag("p", f"ROC AUC: not computed - {rep['roc_note']}", cls="note"))
        confusion = rep["confusion"]
        labels = list(confusion["labels"])
        parts.append(tag("p", "confusion matrix (rows: gold label, columns: predicted; 'none': no label passed the "
                              "threshold)", cls="note"))
        parts.append(table(["gold \\ predicted", *labels, "none"],
                            [[label, *[str(v) for v in row], str(missed)] for label, row, missed in
                             zip(labels, confusion["matrix"], confusion["unmatched"])]))
    return tag("section", *parts, id="classification")


def slices_section(part: dict[str, Any] | None) -> Markup | None:
    """Each slice's means per score and model, then the per-slice comparison (one Holm family)."""
    if not part:
        return None
    parts: list[Any] = [tag("h2", f"Slices by {part['column']}"), tag("p", (
        f"Datums grouped by their value of the metadata column {part['column']!r}, largest slice first. Means and "
        "intervals as in the summary; 'too few' says why a slice has no interval."), cls="note")]
    for score in dict.fromkeys(r["score"] for r in part["means"]):
        mine = [r for r in part["means"] if r["score"] == score]
        parts.append(tag("h3", score))
        parts.append(table(["slice", "model", "scored", "mean", "interval"],
                           [[r["slice"], r["model"], str(r["n_scored"]), cell(r["mean"]),
                             interval_text(r["ci_low"], r["ci_high"]) + (f" ({r['ci_note']})" if r.get("ci_note")
                                                                          else "")] for r in mine],
                           cls="slices", data_score=score))
    comparison = part.get("comparison")
    if comparison and comparison["rows"]:
        holm = comparison.get("holm")
        parts.append(tag("h3", "Comparison per slice"))
        parts.append(tag("p", f"Paired deltas per slice; p (Holm) is adjusted over one family of "
                              f"{comparison.get('family')} comparisons (slices x candidates x scores)." if holm else
                              "Paired deltas per slice; p unadjusted.", cls="note"))
        parts.append(table(["slice", "candidate", "score", "n", "delta", "CI", "p", "p (Holm)", "verdict"],
                           [[r["slice"], r["candidate"], r["score"], str(r["n"]), cell(r["delta"], signed=True),
                             interval_text(r["ci_low"], r["ci_high"], True),
                             tag("td", pval(r["p_value"]), cls="n", data_value=exact(r["p_value"])),
                             tag("td", pval(r["p_adjusted"]), cls="n", data_value=exact(r["p_adjusted"])),
                             r["verdict"] + (f": {r['why']}" if r.get("why") else "")]
                            for r in comparison["rows"]], cls="slice-comparison"))
    return tag("section", *parts, id="slices")


def _share(value: Any, low: Any, high: Any, bare: bool = False) -> str:
    if exact(value) is None:
        return "-"
    if bare:
        return f"{value:.1%}"
    if exact(low) is None or exact(high) is None:
        return f"{value:.1%} (too few for an interval)"
    return f"{value:.1%} [{low:.1%}, {high:.1%}]"


def failures_section(part: dict[str, Any] | None) -> Markup | None:
    """Failure modes: each mode's rates per model and examples; the paired change of each rate with a comparison."""
    if not part:
        return None
    parts: list[Any] = [tag("h2", "Failure modes"), tag("p", part["method"], cls="note"), tag("p", (
        "Rates: share of each model's scored cells with a failing judgement in the mode, Wilson 95% interval. "
        "Unscored cells are neither failures nor cells."), cls="note")]
    for mode in part["modes"]:
        parts.append(tag("h3", f"mode {mode['mode']}: {mode['name']} ({mode['size']} judgements)"))
        if mode["words"]:
            parts.append(tag("p", "words: " + ", ".join(mode["words"]), cls="note"))
        rates = [r for r in part["rates"] if r["mode"] == mode["mode"]]
        parts.append(table(["model", "rate", "failing", "cells"],
                           [[r["model"], _share(r["rate"], r["low"], r["high"]), str(r["failing"]), str(r["cells"])]
                            for r in rates], cls="failure-rates"))
        for ex in mode["examples"]:
            parts.append(tag("div", f"e.g. {ex.get('datum_id')} / {ex.get('model')} / {ex.get('unit')}: "
                                    f"{ex.get('text')}", cls="note text"))
    comparison = part.get("comparison")
    if comparison and comparison["rows"]:
        parts.append(tag("h3", f"Compared with the baseline (Holm family of {comparison['family']} tests)"))
        parts.append(table(["candidate", "mode", "baseline rate", "candidate rate", "difference", "interval", "p",
                            "Holm p", "flagged", "note"],
                           [[r["candidate"], f"{r['mode']} {r['name']}", _share(r["baseline_rate"], None, None, True),
                             _share(r["candidate_rate"], None, None, True),
                             "-" if exact(r["difference"]) is None else f"{r['difference']:+.1%}",
                             "-" if exact(r["low"]) is None else f"[{r['low']:+.1%}, {r['high']:+.1%}]",
                             pval(r["p"]), pval(r["p_holm"]), "yes" if r["flagged"] else "",
                             "; ".join(t for t in (r.get("change") or "", r.get("note") or "") if t)]
                            for r in comparison["rows"]], cls="failure-comparison"))
    return tag("section", *parts, id="failures")
