"""`textgen-eval sample`: write the bundled sample dataset to a file, to try every command on."""

from __future__ import annotations

import argparse
import shutil
from pathlib import Path

from ..datasets import read_table, sample_dataset_path
from ..export import write_table


def register(sub: argparse._SubParsersAction) -> None:
    sample = sub.add_parser("sample", help="write the bundled sample dataset (QA, two models, human ratings) to a file")
    sample.add_argument("--out", default="outputs.csv", help="file to write: .csv (as shipped), .jsonl or .parquet "
                        "(default: %(default)s)")
    sample.set_defaults(handler=_sample)


def _sample(args: argparse.Namespace) -> int:
    out = Path(args.out)
    source = sample_dataset_path()
    if out.suffix.lower() == ".csv":
        out.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, out)  # byte for byte: the file the dashboard's sample loads
    else:
        write_table(read_table(source), out)
    print(f"wrote {out}: the bundled sample dataset")
    return 0
