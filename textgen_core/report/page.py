"""The report as one self-contained HTML page, drawn from its JSON data (:func:`.content.build_report`).

Everything goes through :mod:`.markup` (escaped) and :mod:`.svg` (charts); the
style and the filtering script are inlined from :mod:`.assets` and the page's
Content-Security-Policy forbids loading anything else. Numbers are printed as the
CLI prints them (4 decimals); each numeric cell also carries its exact value in
``data-value`` for tools and tests.
"""

from __future__ import annotations

import json
from typing import Any

from .assets import POLICY, SCRIPT, STYLE
from .markup import Markup, exact, join, num, tag, void
from .page_parts import (calibration_section, cell, classification_section, comparison_section, failures_section,
                         interval_text, panel_section, people_section, slices_section, table)
from .svg import interval_chart

def facts(pairs: list[tuple[str, Any]]) -> Markup:
    return tag("dl", *[join([tag("dt", k), tag("dd", v)]) for k, v in pairs if v not in (None, "", [])],
               cls="facts")


def render_html(report: dict[str, Any]) -> str:
    """The whole page."""
    run = report["run"]
    title = f"Run {run['id']}: {run['dataset'].get('name') or 'dataset ' + str(run['dataset']['id'])}"
    body = [
        tag("h1", title),
        tag("p", f"textgen-eval report, generated {report['generated_at']} from the stored run (nothing was "
                 "judged again). It needs no connection: everything it shows is in this file.", cls="sub"),
        run_section(run),
        warnings_section(report["warnings"]),
        summary_section(report["summary"]),
        comparison_section(report.get("comparison")),
        calibration_section(report.get("calibration")),
        panel_section(report.get("panel")),
        people_section(report.get("human_agreement") or []),
        classification_section(report.get("classification") or {}),
        slices_section(report.get("slices")),
        failures_section(report.get("failure_modes")),
        datum_section(report["datums"]),
    ]
    head = tag("head", void("meta", charset="utf-8"), void("meta", http_equiv="Content-Security-Policy", content=POLICY),
               void("meta", name="viewport", content="width=device-width, initial-scale=1"),
               void("meta", name="referrer", content="no-referrer"),
               tag("title", title), Markup(f"<style>{STYLE}</style>"))
    page = tag("html", head, tag("body", *body, Markup(f"<script>{SCRIPT}</script>")), lang="en")
    return "<!DOCTYPE html>\n" + page + "\n"


def run_section(run: dict[str, Any]) -> Markup:
    dataset = run["dataset"]
    judge = run.get("judge") or {}
    usage = run.get("usage") or {}
    shown = [
        ("Dataset", f"{dataset.get('family') or dataset.get('name')}"
                    + (f", version {dataset['version']}" if dataset.get("version") is not None else "")
                    + f" (stored as {dataset.get('name')}, id {dataset['id']})"),
        ("Run name", dataset.get("run_name")), ("Tags", ", ".join(dataset.get("run_tags") or [])),
        ("Note", dataset.get("run_note")),
        ("Status", run["status"] + (f": {run['error']}" if run.get("error") else "")),
        ("Models", ", ".join(run["models"])),
        ("Started", run.get("created_at")), ("Finished", run.get("finished_at")), ("Scoring time", run.get("duration")),
    ]
    if judge:
        shown += [("Judge model", judge.get("model")), ("Judge endpoint", judge.get("base_url")),
                  ("Temperature / seed", f"{judge.get('temperature')} / {judge.get('seed')}"),
                  ("Prompt versions", ", ".join(judge.get("prompt_versions") or [])),
                  ("Judge fingerprint", tag("span", json.dumps(judge.get("fingerprint") or {}, sort_keys=True,
                                                               ensure_ascii=False), cls="mono"))]
        if judge.get("panel"):
            shown.append(("Judge panel", tag("span", json.dumps(judge["panel"], ensure_ascii=False, sort_keys=True),
                                             cls="mono")))
    shown += [("Judge calls", usage.get("judge_calls")), ("Tokens (prompt / completion)",
              f"{usage.get('prompt_tokens') or 0} / {usage.get('completion_tokens') or 0}"),
              ("Cost", "unknown (no prices given)" if usage.get("cost") is None else f"{usage['cost']:.4f}"),
              ("textgen-eval", run.get("textgen_eval_version"))]
    metrics = table(["metric", "parameters", "signature"],
                    [[m["name"], tag("td", json.dumps(m["params"], ensure_ascii=False, sort_keys=True), cls="mono"),
                      tag("td", m["signature"], cls="mono")] for m in run["metrics"]])
    return tag("section", tag("h2", "What was run"), facts(shown), tag("h3", "Metrics"), metrics, id="run")


def warnings_section(warnings: list[str]) -> Markup | None:
    if not warnings:
        return None
    return tag("section", tag("h2", "Warnings"), *[tag("div", w, cls="warn") for w in warnings], id="warnings")


def summary_section(summary: dict[str, Any]) -> Markup:
    rows = summary["rows"]
    parts: list[Any] = [tag("h2", "Scores"), tag("p", (
        f"Per score and model: the mean of the scored cells with its {summary['confidence']:.0%} interval (Wilson for "
        "0/1 scores, else bootstrap percentile, or the t interval clipped to the range from 1,000 values on; "
        "'too few' below two scored values), and the datums scored / unscored / empty / missing. Unscored and "
        "missing cells are not in the mean."), cls="note")]
    if not rows:
        parts.append(tag("p", "This run has no scores."))
    order = {m: i for i, m in enumerate(summary["models"])}
    for score in summary["scores"]:
        mine = sorted((r for r in rows if r["score"] == score), key=lambda r: order.get(r["model"], len(order)))
        scale = summary["scales"].get(score) or ""
        parts.append(tag("h3", score + (f" ({scale})" if scale else "")))
        body = [[r["model"], cell(r["mean"]), tag("td", interval_text(r["ci_low"], r["ci_high"]), cls="n"),
                 f"{r['n_scored']}/{r['n_unscored']}/{r['n_empty']}/{r['n_missing']}", cell(r["median"]),
                 cell(r["std"]), r.get("ci_method") or ""] for r in mine]
        parts.append(table(["model", "mean", f"{summary['confidence']:.0%} interval", "scored/unscored/empty/missing",
                            "median", "std", "interval method"], body, cls="summary", data_score=score))
        bounds = _bounds(scale, mine)
        parts.append(interval_chart(mine, label="model", value="mean", low="ci_low", high="ci_high", bounds=bounds,
                                    title=f"{score}: mean and interval per model"))
        for r in mine:
            if r.get("ci_note"):
                parts.append(tag("p", f"{r['model']}: no interval - {r['ci_note']}", cls="note"))
        why = summary["why_unscored"].get(score)
        if why:
            parts.append(tag("p", f"why unscored: {why}", cls="note"))
    if summary.get("corpus"):
        parts.append(tag("h3", "Corpus-level scores (over all of a model's rows, not averaged)"))
        parts.append(table(["score", "model", "value"], [[r["score"], r["model"], cell(r["value"])]
                                                          for r in summary["corpus"]]))
    return tag("section", *parts, id="scores")


def _bounds(scale: str, rows: list[dict[str, Any]]) -> tuple[float | None, float | None]:
    """The axis of a score's chart: its declared range ('0-1, higher is better') where it has one."""
    span = scale.split(",")[0].strip()
    low, sep, high = span.partition("-")
    try:
        return (float(low), float(high)) if sep and high else (float(low.split()[0]), None)
    except (ValueError, IndexError):
        return None, None


def datum_section(datums: dict[str, Any]) -> Markup:
    scores, rows = datums["scores"], datums["rows"]
    tags = sorted({t for r in rows for t in r["shown_as"]})
    filters = tag(
        "div",
        tag("label", "Text", void("input", type="search", id="f-text", placeholder="id, query, prediction, reason…")),
        tag("label", "Model", tag("select", tag("option", "every model", value=""),
                                  *[tag("option", m, value=m) for m in datums["models"]], id="f-model")),
        tag("label", "Score", tag("select", tag("option", "any score", value=""),
                                  *[tag("option", s, value=str(i)) for i, s in enumerate(scores)], id="f-score")),
        tag("label", "min", void("input", type="number", step="any", id="f-min")),
        tag("label", "max", void("input", type="number", step="any", id="f-max")),
        tag("label", "Only unscored", void("input", type="checkbox", id="f-unscored")),
        tag("label", "Shown as", tag("select", tag("option", "any", value=""),
                                     *[tag("option", t, value=t) for t in tags], id="f-why")) if tags else
        void("input", type="hidden", id="f-why", value=""),
        tag("span", "", id="f-count", cls="note"),
        cls="filters", role="search")
    head = tag("thead", tag("tr", *[tag("th", h) for h in ("datum", "model", "scores", "query", "prediction",
                                                           "references")]))
    bodies = [_datum_row(r, scores) for r in rows]
    return tag("section", tag("h2", "Rows"), tag("p", datums["note"], cls="note"),
               tag("p", "Filter the rows below in this page (no server needed). Texts longer than "
                        f"{datums['text_limit']} characters are cut, saying so; each row lists at most "
                        f"{datums['verdicts_limit']} judge verdicts.", cls="note noprint"),
               filters, tag("table", head, *bodies, id="datum-table"), id="datums", cls="major")


def _datum_row(row: dict[str, Any], scores: list[str]) -> Markup:
    attrs: dict[str, Any] = {"data_model": row["model"], "data_why": "|" + "|".join(row["shown_as"]) + "|"}
    lines = []
    any_unscored = False
    for i, score in enumerate(scores):
        found = row["scores"].get(score)
        if found is None:
            continue
        if found["value"] is None:
            any_unscored = True
            attrs[f"data_u{i}"] = "1"
            lines.append(tag("div", f"{score}: unscored ({found['reason']})", cls="unscored"))
        else:
            attrs[f"data_s{i}"] = exact(found["value"])
            lines.append(tag("div", f"{score}: {num(found['value'])}"))
    attrs["data_unscored"] = "1" if any_unscored else "0"
    first = tag("tr",
                tag("td", tag("div", row["datum_id"], cls="mono"),
                    tag("div", ", ".join(row["shown_as"]), cls="tags") if row["shown_as"] else None),
                tag("td", row["model"]), tag("td", *lines, cls="scores"),
                tag("td", row["query"] or "", cls="text"), tag("td", row["prediction"] or "", cls="text"),
                tag("td", *[tag("div", ref) for ref in row["references"]], cls="text"))
    rows = [first]
    if row["verdicts"] or row["metadata"]:
        inner = []
        if row["metadata"]:
            inner.append(tag("div", "metadata: " + "; ".join(f"{k}: {v}" for k, v in row["metadata"].items()),
                             cls="note"))
        if row["verdicts"]:
            inner.append(table(["metric", "step", "item", "verdict", "reason"],
                               [[v["metric"], v["step"], tag("td", v["item"] or "", cls="text"), v["verdict"] or "",
                                 tag("td", v["reason"] or "", cls="text")] for v in row["verdicts"]], cls="verdicts"))
        if row["verdicts_left_out"]:
            inner.append(tag("p", f"{row['verdicts_left_out']} more verdicts left out of the report.", cls="note"))
        label = f"{len(row['verdicts']) + row['verdicts_left_out']} judge verdicts" if row["verdicts"] else "metadata"
        rows.append(tag("tr", tag("td", tag("details", tag("summary", label), *inner), colspan="6")))
    return tag("tbody", *rows, cls="row", **attrs)
