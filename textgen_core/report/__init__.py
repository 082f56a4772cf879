"""One file to send: a stored run (and its comparison) as a self-contained HTML page, or its JSON twin.

``build_report`` reads the store through the functions the CLI prints (never
judging again) into plain data; ``render_html`` draws it as one page that loads
nothing from anywhere; ``write_report`` writes either form. See docs/report.md.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ..errors import TextgenError
from ..store import Store
from .content import SCHEMA, ReportOptions, build_report, compare_option, secrets_of
from .page import render_html

FORMATS = ("html", "json")

__all__ = ["FORMATS", "SCHEMA", "ReportOptions", "build_report", "compare_option", "render_html", "report_text",
           "secrets_of", "write_report"]


def report_text(report: dict[str, Any], fmt: str = "html") -> str:
    """The report as the text of an HTML page or of a JSON document."""
    if fmt == "json":
        return json.dumps(report, ensure_ascii=False, allow_nan=False, indent=1) + "\n"
    if fmt == "html":
        return render_html(report)
    raise TextgenError(f"report format must be one of {', '.join(FORMATS)}, got {fmt!r}")


def write_report(store: Store, run_id: int, path: str | Path, options: ReportOptions | None = None,
                 fmt: str = "html") -> Path:
    """Build the report of ``run_id`` and write it to ``path`` (written whole, then moved into place)."""
    text = report_text(build_report(store, run_id, options), fmt)
    path = Path(path)
    partial = path.with_name(path.name + ".partial")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial.write_text(text, encoding="utf-8")
        partial.replace(path)
    except OSError as exc:
        partial.unlink(missing_ok=True)
        raise TextgenError(f"cannot write {path}: {exc.strerror or exc}") from None
    return path
