"""Once: the one piece that asks the same request once, with each caller's rule as parameters."""

from __future__ import annotations

import asyncio

import pytest

from textgen_core.judge.once import Once


class Work:
    """Counts how often it was made; each call waits for ``release`` and then answers or fails."""

    def __init__(self, fail: int = 0) -> None:
        self.made = 0
        self.fail = fail
        self.release = asyncio.Event()
        self.cancelled = 0

    async def __call__(self) -> str:
        self.made += 1
        try:
            await self.release.wait()
        except asyncio.CancelledError:
            self.cancelled += 1
            raise
        if self.made <= self.fail:
            raise ValueError(f"attempt {self.made} failed")
        return f"answer {self.made}"


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 10))


def test_concurrent_callers_share_one_piece_of_work_and_only_the_first_made_it() -> None:
    async def main():
        once, work = Once(remember=False, share_failure=False), Work()
        calls = [asyncio.create_task(once.run("k", work)) for _ in range(5)]
        await asyncio.sleep(0)
        work.release.set()
        return await asyncio.gather(*calls), work.made

    results, made = run(main())
    assert made == 1
    assert results == [("answer 1", True)] + [("answer 1", False)] * 4


def test_in_flight_only_forgets_a_finished_answer_and_remember_keeps_it() -> None:
    async def main(remember: bool):
        once, work = Once(remember=remember, share_failure=True), Work()
        work.release.set()
        await once.run("k", work)
        await asyncio.sleep(0)  # the done callback has run
        second = await once.run("k", work)
        return second, work.made

    assert run(main(False)) == (("answer 2", True), 2)
    assert run(main(True)) == (("answer 1", False), 1)


def test_a_shared_failure_reaches_every_caller_once() -> None:
    async def main():
        once, work = Once(remember=True, share_failure=True), Work(fail=1)
        calls = [asyncio.create_task(once.run("k", work)) for _ in range(3)]
        await asyncio.sleep(0)
        work.release.set()
        results = await asyncio.gather(*calls, return_exceptions=True)
        again = await asyncio.gather(once.run("k", work), return_exceptions=True)
        return results + again, work.made

    results, made = run(main())
    assert made == 1
    assert [str(r) for r in results] == ["attempt 1 failed"] * 4


def test_a_caller_that_waited_for_a_failed_attempt_makes_its_own() -> None:
    async def main():
        once, work = Once(remember=False, share_failure=False), Work(fail=1)
        first = asyncio.create_task(once.run("k", work))
        second = asyncio.create_task(once.run("k", work))
        await asyncio.sleep(0)
        work.release.set()
        return await asyncio.gather(first, second, return_exceptions=True), work.made

    (first, second), made = run(main())
    assert str(first) == "attempt 1 failed"
    assert second == ("answer 2", True)
    assert made == 2


def test_one_cancelled_caller_does_not_cancel_the_work_for_the_others() -> None:
    async def main():
        once, work = Once(remember=True, share_failure=True), Work()
        leaving = asyncio.create_task(once.run("k", work))
        staying = asyncio.create_task(once.run("k", work))
        await asyncio.sleep(0)
        leaving.cancel()
        await asyncio.sleep(0)
        work.release.set()
        return await staying, leaving.cancelled(), work.cancelled

    assert run(main()) == (("answer 1", False), True, 0)


def test_the_work_is_cancelled_when_its_last_caller_leaves_and_a_later_caller_starts_afresh() -> None:
    async def main():
        once, work = Once(remember=True, share_failure=True), Work()
        only = asyncio.create_task(once.run("k", work))
        await asyncio.sleep(0.01)
        only.cancel()
        with pytest.raises(asyncio.CancelledError):
            await only
        await asyncio.sleep(0)
        cancelled = work.cancelled
        work.release.set()
        return cancelled, await once.run("k", work), work.made

    assert run(main()) == (1, ("answer 2", True), 2)


def test_cancel_pending_stops_what_nobody_awaits_and_marks_failures_seen() -> None:
    async def main():
        once = Once(remember=True, share_failure=True)
        failing, pending = Work(fail=1), Work()
        failing.release.set()
        with pytest.raises(ValueError):
            await once.run("bad", failing)
        task = asyncio.create_task(once.run("slow", pending))
        await asyncio.sleep(0.01)
        once.cancel_pending()
        with pytest.raises(asyncio.CancelledError):
            await task
        return pending.cancelled

    assert run(main()) == 1
