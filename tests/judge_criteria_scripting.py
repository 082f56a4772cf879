"""A scripted judge for custom judge metrics (issue 22), polite or impolite; built-in steps go to ScriptedJudge.

Rules, each checkable by hand from the row:

* rating: the number of sentences of the Answer block, clipped to the scale.
* labels: the first label (in the definition's order) that the answer mentions, case-insensitively; else the
  last label.
* yes/no: "yes" iff the answer holds a digit.

``impolite=True`` gives the same rulings the way a small local judge writes them: the first reply to each
request lacks its "reason" or wraps everything under the metric's name (an echoed key) -- both are re-asked
once -- and the answer to the re-ask puts the verdict first, writes ratings as "4", "4.0" or 4.0, and labels
in capitals. Scores must not change.
"""

from __future__ import annotations

import json
import re
import threading
import zlib
from collections import Counter
from typing import Any

from judge_scripting import request_schema
from scripted_judge import ScriptedJudge, blocks, sentences

FRAME = "Judge the data below by an analyst's criterion"


def is_custom(request: dict) -> bool:
    return request["messages"][0]["content"].startswith(FRAME)


def ruling(request: dict) -> tuple[str, Any]:
    """(reply field, verdict) our rules give a custom metric's request."""
    schema = request_schema(request) or {}
    field = next(k for k in (schema.get("properties") or {}) if k != "reason")
    choices = schema["properties"][field]["enum"]
    answer = blocks(request["messages"][1]["content"]).get("Answer", "")
    if field == "score":
        return field, max(min(choices), min(max(choices), len(sentences(answer))))
    if field == "label":
        return field, next((c for c in choices if c.lower() in answer.lower()), choices[-1])
    return field, "yes" if re.search(r"\d", answer) else "no"


class CriteriaJudge:
    """Responder for :class:`judge_server.JudgeServer`; counts custom requests and attempts."""

    def __init__(self, *, impolite: bool = False) -> None:
        self.impolite = impolite
        self.builtin = ScriptedJudge(impolite=impolite)
        self.calls: Counter[str] = Counter()
        self._lock = threading.Lock()

    def __call__(self, request: dict) -> Any:
        if not is_custom(request):
            return self.builtin(request)
        field, verdict = ruling(request)
        first = len(request["messages"]) <= 2
        with self._lock:
            self.calls["first" if first else "again"] += 1
        if not self.impolite:
            return {"reason": "scripted", field: verdict}
        user = request["messages"][1]["content"]
        flip = zlib.crc32(user.encode()) % 2
        if first:
            name = re.search(r'criterion, ("[^"]*")', request["messages"][0]["content"])
            return {field: verdict} if flip else {json.loads(name.group(1)) if name else "metric":
                                                  {"reason": "echoed", field: verdict}}
        if field == "score":
            written: Any = [str(verdict), f"{verdict}.0", float(verdict)][zlib.crc32(user.encode()) % 3]
        else:
            written = str(verdict).upper()
        return {field: written, "reason": "scripted"}
