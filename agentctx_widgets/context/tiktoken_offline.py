"""tiktoken encodings without the network: from memory, tiktoken's own cache, or the copy the
bpe-openai wheel ships (the ``tiktoken`` extra). tiktoken downloads an encoding on first use; a notebook
(or CI) must never do that behind the user's back, so exact counts exist only when one of these has it.
Used by ``%agentctx usage`` and bench/estimate.py.
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

ENCODING_URL = "https://openaipublic.blob.core.windows.net/encodings/{name}.tiktoken"
"""Where tiktoken would download ``name`` from: its cache file is named by this URL's SHA-1."""


def _tiktoken_cache_dir() -> str:
    """Where tiktoken looks for downloaded encodings ("" means it caches nothing)."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        return os.environ["TIKTOKEN_CACHE_DIR"]
    if "DATA_GYM_CACHE_DIR" in os.environ:
        return os.environ["DATA_GYM_CACHE_DIR"]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _cache_key(name: str) -> str:
    return hashlib.sha1(ENCODING_URL.format(name=name).encode()).hexdigest()


def _encoding_cached(name: str) -> bool:
    """Is tiktoken's file for encoding ``name`` on disk (so get_encoding will not download)?"""
    cache_dir = _tiktoken_cache_dir()
    return bool(cache_dir) and os.path.exists(os.path.join(cache_dir, _cache_key(name)))


def packaged_encoding_file(name: str) -> Path | None:
    """``<name>.tiktoken.gz`` as shipped inside the bpe-openai wheel (the tiktoken extra), if installed."""
    spec = importlib.util.find_spec("bpe_openai")
    if spec is None or not spec.submodule_search_locations:
        return None
    for location in spec.submodule_search_locations:
        packed = Path(location) / "data" / f"{name}.tiktoken.gz"
        if packed.is_file():
            return packed
    return None


_unpack_lock = threading.Lock()


def _load_packaged(tiktoken: Any, name: str, packed: Path) -> Any:
    """Load ``name`` from the packaged file: unpack it into a temporary directory under the name tiktoken
    looks for, point tiktoken there for this one call (it still checks the SHA-256), and remove the
    directory once tiktoken holds the encoding in memory (a 3.6 MB file per kernel was left in /tmp)."""
    with _unpack_lock, tempfile.TemporaryDirectory(prefix="agentctx-tiktoken-") as folder:
        (Path(folder) / _cache_key(name)).write_bytes(gzip.decompress(packed.read_bytes()))
        saved = os.environ.get("TIKTOKEN_CACHE_DIR")
        os.environ["TIKTOKEN_CACHE_DIR"] = folder
        try:
            return tiktoken.get_encoding(name)
        finally:
            if saved is None:
                del os.environ["TIKTOKEN_CACHE_DIR"]
            else:
                os.environ["TIKTOKEN_CACHE_DIR"] = saved


def offline_encoding(name: str) -> Any:
    """tiktoken's encoding ``name`` if it can be had without the network, else None (never downloads)."""
    try:
        import tiktoken
        from tiktoken import registry
    except ImportError:
        return None
    try:
        if name in getattr(registry, "ENCODINGS", {}) or _encoding_cached(name):
            return tiktoken.get_encoding(name)
        packed = packaged_encoding_file(name)
        return None if packed is None else _load_packaged(tiktoken, name, packed)
    except Exception:  # noqa: BLE001 - a broken cache or a bad packaged file: exact counts are optional
        return None
