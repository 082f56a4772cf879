"""The one place where the same request is asked once: callers with an equal key share one piece of work.

Three callers need it, each with its own rule, given as parameters:

* a datum group's steps (:class:`~.asker.ClientAsker`): ``remember=True, share_failure=True``: a statement
  extraction serves every model's row, and if it fails every cell that needs it is unscored with its reason;
* an estimate's dry asks (:class:`~.asker.DryAsker`): the same, per group;
* the client (identical asks of different groups in flight together): ``remember=False, share_failure=False``:
  once the first is answered the cache serves, and a caller that waited for a failed attempt makes its own.

The work runs as a task of its own, so a cancelled caller does not cancel it for the others; it is
cancelled when its last caller leaves, and by :meth:`Once.cancel_pending`.
"""

from __future__ import annotations

import asyncio
from typing import Any, Awaitable, Callable, Hashable


class Once:
    def __init__(self, *, remember: bool, share_failure: bool) -> None:
        self.remember, self.share_failure = remember, share_failure
        self._work: dict[Hashable, tuple[asyncio.Future, list[int]]] = {}

    async def run(self, key: Hashable, make: Callable[[], Awaitable[Any]]) -> tuple[Any, bool]:
        """(result, True when this caller's call made it) of the work under ``key``."""
        while True:
            entry = self._work.get(key)
            first = entry is None
            if entry is None:
                task = asyncio.ensure_future(make())
                entry = self._work[key] = (task, [0])
                if not self.remember:
                    task.add_done_callback(lambda done, k=key: self._forget(k, done))
            task, waiting = entry
            waiting[0] += 1
            try:
                return await asyncio.shield(task), first
            except asyncio.CancelledError:
                if not task.done() and waiting[0] == 1:  # its last caller left: nobody needs the work
                    task.cancel()
                    self._forget(key, task)
                raise
            except Exception:
                if first or self.share_failure:
                    raise
                self._forget(key, task)  # a waiter tries again: the next caller makes new work
            finally:
                waiting[0] -= 1

    def _forget(self, key: Hashable, task: asyncio.Future) -> None:
        if self._work.get(key, (None,))[0] is task:
            del self._work[key]

    def cancel_pending(self) -> None:
        """Cancel the work nobody waits for any more; mark finished failures as seen."""
        for task, _ in self._work.values():
            if not task.done():
                task.cancel()
            elif not task.cancelled():
                task.exception()
