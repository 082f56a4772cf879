"""Short human names for a run's failure modes, one judge call per mode (``failures RUN --name-with-judge``).

The judge reads a mode's distinctive words (its c-TF-IDF name) and a few of its judgements' reasons and
proposes a name of a few words ("invents a refund policy"). The word name stays: the judge's name is stored
beside it (``failure_modes.judge_name``), and a mode keeps only its word name, with the reason, when the
judge's name is empty, too long, or the call failed or was stopped by the spending cap. The calls are
estimated before they are made, admitted by the run's spending cap (``--max-calls``, ``--max-cost``, counted
with what the run already spent), added to the run's judge usage, and cached: naming again makes no call.
"""

from __future__ import annotations

import asyncio
import html
import re
from dataclasses import dataclass, field
from typing import Any, Sequence

from ..judge.budget import CapReached, SpendingCap
from ..judge.client import JudgeClient, Unscored
from ..judge.engine import run_sync
from ..judge.prompting import STRING, Request, fence, messages, strict_object
from ..judge.settings import JudgeSettings
from ..store import Store
from .modes import FailureModes, stored_modes

#: The prompt's version: part of every naming request's cache key.
VERSION = "failure_name/1"
#: Longest judge name kept (characters, after markup is removed); a longer one keeps the word name.
MAX_NAME = 60
#: Reasons shown to the judge per mode, and the characters kept of each.
EXAMPLES = 5
EXAMPLE_CHARS = 300

SYSTEM = """\
An evaluation grouped the reasons a judge gave for failing answers into failure modes. You are shown one \
mode: its most distinctive words and a few of its reasons. Give the mode a short name, two to six plain \
words, that says how the answers fail, for example "invents a refund policy" or "answers a different \
question". Plain text only: no quotes, no formatting, no final full stop. Reply with JSON only: \
{"name": "..."}."""

_TAG = re.compile(r"<[^>]{0,200}>")
_MARKS = re.compile(r"[*_`#>\[\]|~]+")


@dataclass
class Naming:
    """What naming did: each mode's judge name (None: the word name is kept) and, when kept, why."""

    names: dict[int, str | None] = field(default_factory=dict)
    notes: dict[int, str] = field(default_factory=dict)
    calls: int = 0
    cached: int = 0


def request(words: Sequence[str], examples: Sequence[str]) -> Request:
    """The naming request of one mode: its distinctive words and up to :data:`EXAMPLES` reasons, fenced."""
    shown = [e if len(e) <= EXAMPLE_CHARS else e[:EXAMPLE_CHARS - 3] + "..." for e in examples[:EXAMPLES]]
    body = fence("Distinctive words", ", ".join(words) or "(none)") + "\n\n" + "\n\n".join(
        fence(f"Reason {i}", text) for i, text in enumerate(shown, start=1))
    return Request("failure_name", VERSION, messages(SYSTEM, body), strict_object({"name": STRING}),
                   placeholder={"name": "a short name of four words"})


def clean(raw: Any) -> tuple[str | None, str | None]:
    """(the name to keep, None) or (None, why the word name stays): markup is removed, spaces collapsed."""
    if not isinstance(raw, str):
        return None, "the judge's reply holds no name"
    text = _MARKS.sub(" ", _TAG.sub(" ", html.unescape(raw)))
    text = " ".join(text.split()).strip(" \"'.,;:")
    if not text:
        return None, "the judge's name was empty" + (" once its markup was removed" if raw.strip() else "")
    if len(text) > MAX_NAME:
        return None, f"the judge's name was {len(text)} characters long (at most {MAX_NAME} are kept)"
    return text, None


def requests_of(modes: FailureModes) -> dict[int, Request]:
    """One naming request per mode (the unsorted judgements, mode -1, are no mode and are not named)."""
    out = {}
    for mode, words in zip(modes.modes["mode"], modes.modes["words"]):
        if int(mode) < 0:
            continue
        examples = [str(t) for t in modes.examples(int(mode), EXAMPLES)["text"]]
        out[int(mode)] = request([str(w) for w in words], examples)
    return out


@dataclass(frozen=True)
class Estimate:
    modes: int
    calls: int
    cached: int
    prompt_tokens: int
    completion_tokens: int
    cost: float | None


def estimate(modes: FailureModes, settings: JudgeSettings, store: Store) -> Estimate:
    """Calls naming would make (the cached ones are free), their estimated tokens and cost; nothing is sent."""
    client = JudgeClient(settings, store)
    asks = requests_of(modes)
    keys = {m: client.cache_key(list(r.messages), r.schema, prompt_version=r.version) for m, r in asks.items()}
    cached = set(client.cached_values(list(keys.values())))
    fresh = [asks[m] for m, k in keys.items() if k not in cached]
    prompt = sum(r.prompt_tokens for r in fresh)
    reply = sum(min(r.reply_tokens, settings.max_tokens) for r in fresh)
    return Estimate(len(asks), len(fresh), len(asks) - len(fresh), prompt, reply, settings.price(prompt, reply))


def name_modes(store: Store, run_id: int, modes: FailureModes, settings: JudgeSettings) -> tuple[FailureModes, Naming]:
    """Ask the judge for each mode's name, store the names beside the word names, return the modes re-read.

    The run's spending cap admits each call; the usage is added to the run's. Calls that fail, are stopped by
    the cap, or give an unusable name leave the word name, with the reason stored in the modes' parameters.
    """
    run = store.get_run(run_id)
    base = JudgeClient(settings, store)
    cap = SpendingCap.for_run(settings, lambda: base.usage, run)
    client = base.for_run(cap=cap)
    asks = requests_of(modes)
    naming = Naming()

    async def one(mode: int, req: Request) -> None:
        try:
            reply = await client.ask(list(req.messages), req.schema, schema_name=req.step, prompt_version=req.version)
        except Unscored as exc:
            naming.names[mode], naming.notes[mode] = None, f"the judge call failed: {exc.reason}"
            return
        except CapReached as exc:
            naming.names[mode], naming.notes[mode] = None, f"not asked: {exc}"
            return
        naming.cached += reply.cached
        name, why = clean(reply.value.get("name") if isinstance(reply.value, dict) else None)
        naming.names[mode] = name
        if why is not None:
            naming.notes[mode] = why

    async def all_modes() -> None:
        try:
            await asyncio.gather(*(one(m, r) for m, r in sorted(asks.items())))
        finally:
            await client.aclose()

    run_sync(all_modes)
    used = client.usage
    naming.calls = used.calls
    if used.calls or used.prompt_tokens or used.completion_tokens:  # the naming is part of what the run spent
        store.judge_writer.put_usage(run_id, used.calls, used.prompt_tokens, used.completion_tokens, client.cost())
    client.flush()
    store.judge_writer.flush()
    _store_names(store, run_id, modes, naming, settings)
    return stored_modes(store, run_id) or modes, naming


def _store_names(store: Store, run_id: int, modes: FailureModes, naming: Naming, settings: JudgeSettings) -> None:
    """Write the modes again, whole, through their one write path, with the judge names and why any is missing."""
    from .modes import METHOD

    params = {k: v for k, v in modes.params.items() if k != "method"}
    params["judge_names"] = {"model": settings.model, "endpoint": settings.endpoint, "version": VERSION,
                             "notes": {str(m): note for m, note in sorted(naming.notes.items())}}
    table = store.failures.failure_modes(run_id)
    rows = [(int(r.mode), r.name, list(r.words) if r.words is not None else [], int(r.size),
             naming.names.get(int(r.mode))) for r in table.itertuples()]
    before = [r.judge_name if isinstance(r.judge_name, str) else None for r in table.itertuples()]
    if before == [row[4] for row in rows] and modes.params.get("judge_names") == params["judge_names"]:
        return  # named as they are stored (every reply from the cache): nothing to write again
    members = store.failures.failure_members(run_id)
    store.failures.write_failure_modes(run_id, str(modes.params.get("method") or METHOD), params, rows,
                                       list(members[["mode", "datum_id", "model", "unit", "step", "item_index",
                                                     "text"]].itertuples(index=False, name=None)))
