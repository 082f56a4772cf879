"""The Upload page saving a million-row CSV: peak memory and time, streamed against read whole.

    python bench/upload.py [--rows 1000000] [--whole]

Writes bench/scale.py's synthetic CSV (~180 MB at a million rows, like issue 12's
file) to a temporary folder, then in a fresh process per way runs the Upload page
through Streamlit's AppTest as a user would: the file's bytes in session state (as
the uploader leaves them), preview, mapping, Save. Prints each process's peak
resident memory (ru_maxrss) and wall time. ``--whole`` also measures the old way
(the file read whole by pandas, checked, then saved), which takes a few GB.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))


def _child(way: str, csv_path: str, db_path: str) -> None:
    import os

    os.environ["TEXTGEN_EVAL_DB"] = db_path
    from streamlit import config
    from streamlit.testing.v1 import AppTest

    from textgen_dashboard import app_path, state, upload_stream

    if way == "whole":  # the page as it was: every upload read whole
        upload_stream.LARGE_BYTES = upload_stream.LARGE_ROWS = 1 << 62
    config.set_option("server.maxUploadSize", 1024)  # bench/scale.py's million rows are 202 MB (limit 200)
    started = time.perf_counter()
    at = AppTest.from_file(str(app_path().parent / "views/upload.py"), default_timeout=3600)
    at.session_state[state.UPLOAD_FILE] = (Path(csv_path).name, Path(csv_path).read_bytes())
    at.run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    next(b for b in at.button if b.label == "Save dataset").click().run()
    assert not at.exception and not at.error, [e.value for e in [*at.exception, *at.error]]
    saved = next(s.value for s in at.success if "Saved" in s.value)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB -> GiB
    print(f"{way:8s} peak RSS {peak:.2f} GB, {time.perf_counter() - started:.1f} s: {saved}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--whole", action="store_true", help="also measure the file read whole (the old way)")
    parser.add_argument("--child", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(*args.child)
        return
    from scale import write_csv

    with tempfile.TemporaryDirectory(prefix="textgen-bench-upload-") as folder:
        csv_path = Path(folder) / "outputs.csv"
        write_csv(csv_path, args.rows)
        print(f"{args.rows:,} rows, {csv_path.stat().st_size / 2**20:.0f} MB CSV", flush=True)
        for way in ["streamed"] + (["whole"] if args.whole else []):
            db = Path(folder) / f"{way}.duckdb"
            subprocess.run([sys.executable, __file__, "--child", way, str(csv_path), str(db)], check=True)


if __name__ == "__main__":
    main()
