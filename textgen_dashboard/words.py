"""Words for people where the store keeps identifiers: step names, parameter and column names, numbers.

Nothing here changes a value; it only changes how a name or a number is written on a page.
"""

from __future__ import annotations

import math
import re
from typing import Any

from textgen_core.compare.verdicts import NO_DIFFERENCE

#: Abbreviations in step names and identifiers, as words.
_WORDS = {"lam": "lambda", "ref": "reference", "refs": "references", "ctx": "context", "ctxs": "contexts", "pred": "prediction",
          "n": "number of", "ci": "interval", "p": "p", "std": "standard deviation", "id": "id",
          "llm": "LLM", "rpm": "requests per minute", "tpm": "tokens per minute"}
_NUMBERED = re.compile(r"^([a-z]+?)_?(\d+)$")


def step_words(step: Any) -> str:
    """'statements.reference.ref1' -> 'statements · reference 1': a judge step as words."""
    parts: list[str] = []
    for token in str(step).replace("/", ".").split("."):
        numbered = _NUMBERED.match(token)
        if numbered:
            word = _WORDS.get(numbered.group(1), numbered.group(1).replace("_", " "))
            token = f"{word} {numbered.group(2)}"
        else:
            token = _WORDS.get(token, token.replace("_", " "))
        if parts and token.startswith(parts[-1] + " "):  # 'reference · reference 1' -> 'reference 1'
            parts[-1] = token
        elif not parts or parts[-1] != token:
            parts.append(token)
    return " · ".join(parts)


#: Identifiers whose words are not their parts read one by one.
_PHRASES = {"datum_id": "Datum", "run_id": "Run", "dataset_id": "Dataset", "n": "n", "p": "p", "p_holm": "p (Holm)",
            "p_value": "p", "p_adjusted": "p (adjusted)", "ci_low": "95% CI low", "ci_high": "95% CI high",
            "judge_ci_low": "Judge 95% CI low", "judge_ci_high": "Judge 95% CI high", "ci_note": "Why no interval",
            "ci_method": "Interval method", "lam": "λ", "lam_planned": "λ planned", "n_scored": "Scored",
            "n_unscored": "Unscored", "n_empty": "Empty", "n_missing": "Missing", "n_labels": "Labels",
            "n_judged": "Judged", "n_paired": "Pairs", "n_matches": "Matches", "n_rows": "Rows", "n_runs": "Runs",
            "labels_needed": "Labels needed", "roc_auc": "ROC AUC", "duration_s": "Duration (s)",
            "judge_calls": "Judge calls", "created_at": "Created", "order_inconsistent": "Order-inconsistent",
            "rouge_types": "ROUGE types", "use_stemmer": "Use stemmer", "mde": "Smallest detectable difference",
            "pearson_p": "Pearson p", "spearman_p": "Spearman p", "weighted_kappa": "Weighted κ", "kappa": "κ",
            "max_tokens": "Max tokens", "n_column": "n column", "c_column": "c column", "k": "k",
            "n_iter": "Iterations", "n_components": "Components", "fn_rule": "False-negative rule",
            "max_len": "Max length", "min_len": "Min length", "min_df": "Min document frequency", "idf": "IDF",
            "lang": "Language", "pr_thresholds": "PR thresholds", "num_layers": "Layers", "ngram_max": "Largest n-gram",
            "sublinear_tf": "Sublinear TF", "roc": "ROC"}


def name_words(name: Any) -> str:
    """'rouge_types' -> 'ROUGE types', 'n_labels' -> 'Labels', 'lam_planned' -> 'λ planned': an identifier as a
    label. Names that already hold words (a space, a capital, a sign) are left as they are."""
    text = str(name)
    if text in _PHRASES:
        return _PHRASES[text]
    if not re.fullmatch(r"[a-z][a-z0-9_]*", text):  # already words ('95% CI low', 'judge only'), or not a name
        return text
    tokens = [_WORDS.get(t, t) for t in text.split("_") if t]
    if tokens[0] == "number of" and len(tokens) > 1:  # 'n_rows' -> 'Rows', not 'Number of rows' ('n' is a count)
        tokens = tokens[1:]
    text = " ".join(tokens)
    return text[:1].upper() + text[1:]


def header_words(columns: Any, keep: Any = ()) -> dict[str, str]:
    """{column: its label} of a table's columns for the pages' tables; ``keep``: columns whose names are data
    (models, scores, labels of a pivot) and stay as they are."""
    kept = {str(k) for k in keep}
    labels = {str(c): _header(name_words(c)) for c in columns if str(c) not in kept}
    return {column: label for column, label in labels.items() if label != column}


def _header(label: str) -> str:
    """A table header starts lower case, as the pages' hand-written headers do ('mean', 'why unscored');
    an acronym ('ROUGE types', 'CI') keeps its capitals."""
    return label if label[:2].isupper() else label[:1].lower() + label[1:]


def number_text(value: Any, digits: int = 4) -> str:
    """A number as people read it: fixed decimals ('0.0000', never '8.68e-234'), thousands separated,
    '' for a missing value."""
    if value is None or isinstance(value, bool):
        return "" if value is None else str(value)
    try:
        number = float(value)
    except (TypeError, ValueError):
        return str(value)
    if math.isnan(number):
        return ""
    if math.isinf(number):
        return "∞" if number > 0 else "-∞"
    if number.is_integer() and abs(number) >= 1:
        return f"{number:,.0f}"
    if abs(number) >= 1e6:
        return f"{number:,.0f}"
    text = f"{number:.{digits}f}"
    return "0." + "0" * digits if text.startswith("-") and float(text) == 0 else text


def interval_text(low: Any, high: Any) -> str:
    """'[-0.0267, +0.0375]' for a delta's interval; 'too few' when there is none."""
    if low is None or high is None or math.isnan(float(low)) or math.isnan(float(high)):
        return "too few"
    return f"[{float(low):+.4f}, {float(high):+.4f}]"


def verdict_words(verdict: str, low: Any, high: Any) -> str:
    """A verdict as the pages write it: a difference the test did not detect is 'not significant', with the
    interval of the differences the data still allow; never 'no difference', which reads as 'equal'."""
    if verdict == NO_DIFFERENCE:
        return f"not significant, delta in {interval_text(low, high)}"
    return verdict
