"""The judge request path can be followed (#33): the calls from a metric's ask to the HTTP call are counted,
and the transport is a type chosen when the client is built.

How the calls are counted: a profile hook records every function of textgen_core entered (each frame once:
a coroutine resumed is not a new call; comprehensions and lambdas count) from the moment ``ClientAsker.ask``
is entered until the openai client's ``post`` is, on the second request of a loop (the first also makes the
loop's HTTP pool and the schema's validator, once per process).
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import openai

from judge_server import JudgeServer
from textgen_core.judge import JudgeClient, JudgeSettings
from textgen_core.judge.asker import ClientAsker, Gate
from textgen_core.judge.batch import Batcher
from textgen_core.judge.budget import SpendingCap
from textgen_core.judge.metrics import faithfulness
from textgen_core.judge.transport import BatchTransport, DirectTransport

PACKAGE = str(Path(__file__).resolve().parents[2] / "textgen_core")
#: The most calls one request may take from the asker to the HTTP call (issue 33; 60 before, 75 cold).
MOST = 30


def calls_to_the_socket(client: JudgeClient) -> list[str]:
    post = openai.AsyncOpenAI.post.__code__
    seen: list[object] = []  # frames are kept, so that no id is reused by a later frame
    entered: list[str] = []
    state = {"on": False, "done": False}

    def hook(frame, event, arg) -> None:  # noqa: ANN001 - sys.setprofile's signature
        if event != "call" or state["done"]:
            return
        code = frame.f_code
        state["on"] = state["on"] or code is ClientAsker.ask.__code__
        if not state["on"]:
            return
        if code is post:
            state["done"] = True
        elif code.co_filename.startswith(PACKAGE) and all(frame is not f for f in seen):
            seen.append(frame)
            entered.append(f"{code.co_filename[len(PACKAGE) + 1:]}:{code.co_qualname}")

    async def main() -> None:
        try:
            await ClientAsker(client, Gate()).ask(faithfulness.request(["Rome is in Italy."], ["Rome is in Italy."]))
            sys.setprofile(hook)
            try:
                await ClientAsker(client, Gate()).ask(faithfulness.request(["Paris is in France."], ["Paris."]))
            finally:
                sys.setprofile(None)
        finally:
            await client.aclose()

    asyncio.run(main())
    assert state["done"], "the request never reached the openai client's post"
    return entered


def test_one_request_takes_at_most_30_calls_from_the_ask_to_the_http_call(judge_server: JudgeServer,
                                                                          judge_settings: JudgeSettings) -> None:
    entered = calls_to_the_socket(JudgeClient(judge_settings))
    assert len(entered) <= MOST, "\n".join(entered)
    assert entered[0] == "judge/asker.py:ClientAsker.ask" and entered[-1] == "judge/transport.py:_send"


def test_the_transport_is_chosen_at_construction_and_a_runs_client_learns_alone(judge_settings) -> None:
    parent = JudgeClient(judge_settings)
    assert type(parent.transport) is DirectTransport and parent.transport.cap is None
    cap = SpendingCap(judge_settings, lambda: parent.usage)
    batched = parent.for_run(batcher=Batcher(judge_settings), cap=cap)
    capped = parent.for_run(cap=cap)
    assert type(batched.transport) is BatchTransport and batched.transport.cap is cap
    assert type(capped.transport) is DirectTransport and capped.transport.cap is cap
    # The run's client starts from the parent's response mode but never changes the parent's object.
    assert batched.response_mode == ("json_schema", True)  # batch mode starts from its mode as confirmed
    assert parent.response_mode == ("json_schema", False)  # the parent's is left as it was
    assert batched.shared is parent.shared  # usage and cache are the parent's
