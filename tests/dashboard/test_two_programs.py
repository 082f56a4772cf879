"""One database file, two programs: with `textgen-eval dashboard` serving a file and a browser on it,
CLI commands on the same file work, and the dashboard lists the CLI's new run after a refresh.

The dashboard is its own process; the CLI commands run in the test's process (`cli_main`), which is the other
program holding the file: a new interpreter per command would only add seconds of imports."""

from __future__ import annotations

import os
import subprocess
import sys
from functools import partial
from pathlib import Path

import pytest

from browser_session import WAIT_MS, browser_context, require_browser
from local_servers import free_port, wait_healthy

CLI = [sys.executable, "-m", "textgen_core.cli.main"]


@pytest.mark.timeout(240)
def test_cli_commands_beside_an_open_dashboard(tmp_path: Path, cli_main) -> None:
    from playwright.sync_api import expect

    require_browser()
    db = tmp_path / "shared.duckdb"

    def _cli(db: Path, *args: str, cwd: Path) -> subprocess.CompletedProcess:
        # A short lock timeout: the dashboard must not hold the file, so nothing should have to wait long.
        return cli_main("--db", db, *args, cwd=cwd, env={"TEXTGEN_EVAL_LOCK_TIMEOUT": "10"})

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    # the dashboard starts serving the file while the first run writes it (both start at once: no wait for either)
    dashboard = subprocess.Popen([*CLI, "--db", str(db), "dashboard", "--port", str(port)], cwd=tmp_path,
                                 env=dict(os.environ, STREAMLIT_SERVER_HEADLESS="true"),
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        first = _cli(db, "run", "sample", "--metrics", "exact_match,rouge", cwd=tmp_path)
        assert first.returncode == 0, first.stderr
        wait_healthy(url, dashboard, timeout=60)
        with browser_context() as context:
            page = context.new_page()
            page.goto(f"{url}/runs")
            page.get_by_role("heading", name="Runs").wait_for(timeout=60_000)
            history = page.get_by_test_id("stDataFrame").first
            # the grid draws on a canvas; its cells are also in an aria-hidden table, which these locators read
            cell = partial(history.get_by_role, "gridcell", exact=True, include_hidden=True)
            expect(cell(name="exact_match, rouge")).to_be_attached(timeout=WAIT_MS)

            # the dashboard is open and has read the file: the command line still works on it
            runs = _cli(db, "runs", cwd=tmp_path)
            assert runs.returncode == 0 and "sample-qa" in runs.stdout, runs.stderr
            datasets = _cli(db, "datasets", cwd=tmp_path)
            assert datasets.returncode == 0 and "sample-qa" in datasets.stdout, datasets.stderr
            export = _cli(db, "export", "1", "--out", str(tmp_path / "scores.csv"), cwd=tmp_path)
            assert export.returncode == 0 and (tmp_path / "scores.csv").stat().st_size > 0, export.stderr
            compare = _cli(db, "compare", "1", "--baseline", "model-a", "--resamples", "200", cwd=tmp_path)
            assert compare.returncode == 0 and "model-b" in compare.stdout, compare.stderr
            agreement = _cli(db, "agreement", "1", "--human-column", "human_score", cwd=tmp_path)
            assert agreement.returncode == 0, agreement.stderr
            listing = _cli(db, "metrics", cwd=tmp_path)
            assert listing.returncode == 0 and "rouge" in listing.stdout, listing.stderr
            second = _cli(db, "run", "sample-qa", "--metrics", "bleu", cwd=tmp_path)
            assert second.returncode == 0 and "run 2" in second.stdout, second.stderr

            # the next refresh shows the CLI's run
            page.get_by_role("button", name="Refresh").click()
            expect(cell(name="bleu")).to_be_attached(timeout=WAIT_MS)
            page.screenshot(path=str(tmp_path / "runs.png"), full_page=True)
    finally:
        dashboard.terminate()
        dashboard.wait(timeout=30)
