"""A headless system Chromium for the browser tests (Playwright drives it; no browser download)."""

from __future__ import annotations

import os
import shutil
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator

import pytest

#: Debian's chromium-headless-shell when installed (the same Blink and V8 as its chromium package, without the
#: browser's UI layers: the headless build Playwright itself runs; a launch costs ~0.3 CPU-s against ~1.2, and the
#: journey test's Chromium 39 CPU-s against 45), else the full chromium; TEXTGEN_EVAL_CHROMIUM chooses another.
HEADLESS_SHELL = "/usr/bin/chromium-headless-shell"
CHROMIUM = os.environ.get("TEXTGEN_EVAL_CHROMIUM") or (HEADLESS_SHELL if Path(HEADLESS_SHELL).is_file()
                                                      else "/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking", "--disable-component-update",
                 "--no-first-run", "--disable-sync", "--disable-quic"]
WAIT_MS = 45_000  # a page's first visit imports its modules: seconds on a busy 2-core machine
# A long wait (a page's first load, a run finishing) is cheaper as ``locator.wait_for(timeout=...)`` than as
# ``expect(locator).to_be_visible(...)``: Chromium spends ~0.017 CPU-s per second waited against ~0.09.


def require_browser() -> None:
    """Skip when Chromium is absent, except under CI=true, where that is a failure."""
    if Path(CHROMIUM).is_file() or shutil.which(CHROMIUM):
        return
    message = f"the browser test needs chromium at {CHROMIUM}"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(message + " (CI=true: install it with apt-get install chromium-headless-shell, or chromium)")
    pytest.skip(message)


@contextmanager
def browser_context(*, loopback_only: bool = False) -> Iterator[Any]:
    """A headless system-Chromium context with the suite's window size and wait; closed on the way out.

    With ``loopback_only``, a request to any host but 127.0.0.1 goes to a proxy on a closed local port, so it fails
    and nothing leaves the machine: a browser-wide block that, unlike a Playwright route, leaves the page cache on
    (a route turns it off, and every page load then fetches and compiles Streamlit's scripts again)."""
    from playwright.sync_api import expect, sync_playwright

    from local_servers import free_port

    expect.set_options(timeout=WAIT_MS)  # assertions wait as long as actions (their own default is 5 s)
    proxy = {"server": f"http://127.0.0.1:{free_port()}", "bypass": "127.0.0.1"} if loopback_only else None
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True,
                                             proxy=proxy)
        try:
            context = browser.new_context(viewport={"width": 1400, "height": 1000})
            context.set_default_timeout(WAIT_MS)
            context.add_init_script(script=_NO_ANIMATIONS)
            yield context
        finally:
            browser.close()


#: Every page of the context is drawn without CSS animations: while a script runs, Streamlit's spinners, skeletons
#: and status icon animate on every frame, ~0.08 CPU-s of Chromium per second of run (0.70 against 0.22 over a
#: 6-second run with a spinner); what a page shows, and every step's wait, stay the same (transitions are kept).
_NO_ANIMATIONS = """(() => {
    const still = () => {
        const style = document.createElement('style');
        style.textContent = '*, *::before, *::after { animation: none !important; }';
        document.head.appendChild(style);
    };
    if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', still);
    else still();
})();"""

#: True once the app's script run has ended and nothing on the page is left over from an earlier run
#: (Streamlit marks its app root with the script's state and greys stale elements with data-stale).
_RUN_DONE = """() => {
    const app = document.querySelector('[data-testid="stApp"]');
    return app !== null && app.getAttribute('data-test-script-state') === 'notRunning'
        && document.querySelector('[data-stale="true"]') === null
        && document.querySelector('[data-testid="stSkeleton"]') === null;
}"""


def wait_for_run(page: Any, timeout: float | None = None) -> None:
    """Wait until the page's script run has finished and every element shown is from it: a condition,
    instead of sleeping a fixed time for late tables and charts. Polled every 100 ms, not on every animation
    frame (Playwright's default): a frame-by-frame wait costs Chromium ~0.1 CPU-s per second waited, this ~0.006."""
    page.wait_for_function(_RUN_DONE, timeout=timeout, polling=100)


def wait_for_address(page: Any, *parts: str, timeout: float | None = None) -> None:
    """Wait until the page's address (its query string) holds every one of ``parts``, such as ``run=3``; polled
    every 100 ms like :func:`wait_for_run`."""
    page.wait_for_function("parts => parts.every(p => location.search.includes(p))", arg=list(parts),
                           timeout=timeout, polling=100)
