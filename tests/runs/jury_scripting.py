"""A judge that answers differently each time and per model, for repeated judging and panels (issue 22).

Rules (``k`` counts the earlier first asks of the same prompt by the same model):

* rating: 1 + k % 3 (samples 0, 1, 2 rate 1, 2, 3), but 4 every time when the answer says "steady";
  model "m2" always rates 5.
* labels: the first label the answer mentions (else the last label), as judge_criteria_scripting rules; model
  "m2" says "escalated" where that rule says "resolved".
* yes/no: "yes" iff the answer holds a digit.

``impolite=True``: the first reply to each ask lacks its reason or wraps it under the metric's name (an echoed
key), the re-ask writes the rating as "2", "2.0" or 2.0 and labels in capitals. Votes must not change.
"""

from __future__ import annotations

import json
import re
import threading
import zlib
from collections import Counter
from typing import Any

from judge_criteria_scripting import ruling


class Voter:
    """Responder for :class:`judge_server.JudgeServer`; counts first asks per (model, prompt) and re-asks."""

    def __init__(self, *, impolite: bool = False) -> None:
        self.impolite = impolite
        self.seen: Counter[tuple[str, str]] = Counter()
        self.reasks = 0
        #: (model, text): that model rates an answer holding the text 9, off the scale (the vote is unscored).
        self.off_scale: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def __call__(self, request: dict) -> Any:
        field, verdict = ruling(request)
        model, user = request.get("model", ""), request["messages"][1]["content"]
        asked = request["messages"][0]["content"] + user  # one metric's ask of one answer
        first = len(request["messages"]) <= 2
        with self._lock:
            if first:
                self.seen[(model, asked)] += 1
            else:
                self.reasks += 1
            k = self.seen[(model, asked)] - 1  # a re-ask belongs to the first ask before it
        if field == "score":
            verdict = 5 if model == "m2" else 4 if "steady" in user else 1 + k % 3
            if any(m == model and text in user for m, text in self.off_scale):
                verdict = 9
        elif field == "label" and model == "m2" and verdict == "resolved":
            verdict = "escalated"
        if not self.impolite:
            return {"reason": "scripted", field: verdict}
        flip = zlib.crc32(user.encode()) % 2
        if first:
            name = re.search(r'criterion, ("[^"]*")', request["messages"][0]["content"])
            return {field: verdict} if flip else {json.loads(name.group(1)) if name else "metric":
                                                  {"reason": "echoed", field: verdict}}
        written: Any = ([str(verdict), f"{verdict}.0", float(verdict)][zlib.crc32(user.encode()) % 3]
                        if field == "score" else str(verdict).upper())
        return {field: written, "reason": "scripted"}
