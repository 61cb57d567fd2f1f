"""`ankita eval`: run labelled pairs through the real write path and score the decisions."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

from ankita._errors import InvalidInput
from ankita._jsonl import read_jsonl, read_text
from ankita._memory import Memory
from ankita.embed._embedders import Embedder

LABELS = ("duplicate", "conflict", "neither")
_ACTION_TO_LABEL = {"merged": "duplicate", "conflict": "conflict", "created": "neither"}


def builtin_pairs_path() -> Path:
    """The labelled pairs that ship with Ankita (written for this project)."""
    return Path(str(resources.files("ankita") / "data" / "pairs.jsonl"))


def builtin_multilingual_path() -> Path:
    """Labelled pairs in twelve languages besides English (written for this project)."""
    return Path(str(resources.files("ankita") / "data" / "pairs_multilingual.jsonl"))


def builtin_stream_path() -> Path:
    """A short memory stream that ships with Ankita (written for this project)."""
    return Path(str(resources.files("ankita") / "data" / "stream.jsonl"))


def builtin_stream_labels_path() -> Path:
    """Labelled pairs of the built-in stream."""
    return Path(str(resources.files("ankita") / "data" / "stream_labels.jsonl"))


def _check_pair(row: dict[str, Any]) -> None:
    if not all(isinstance(row.get(k), str) for k in ("a", "b", "label")):
        raise InvalidInput("needs string fields a, b and label")
    if row["label"] not in LABELS:
        raise InvalidInput(f"label must be one of {', '.join(LABELS)}")


def load_pairs(path: str | Path) -> list[dict[str, Any]]:
    """Read a JSONL file of {"a", "b", "label", "kind"?}; refuse malformed lines clearly."""
    pairs = read_jsonl(read_text(path).splitlines(), str(path), _check_pair)
    if not pairs:
        raise InvalidInput(f"{path}: no pairs")
    return pairs


class Precomputed(Embedder):
    """Vectors for a known set of texts, embedded in batches up front (eval speed); the same
    model id as the wrapped embedder, so scores are exactly what the write path would see."""

    def __init__(self, inner: Embedder, texts: Iterable[str], batch_size: int = 64) -> None:
        self.inner = inner
        self.model_id = inner.model_id
        unique = sorted({t.strip() for t in texts})
        self.cache: dict[str, list[float]] = {}
        for start in range(0, len(unique), batch_size):
            chunk = unique[start : start + batch_size]
            self.cache.update(zip(chunk, inner.embed_checked(chunk), strict=True))

    def embed_batch(self, texts: Sequence[str]) -> list[list[float]]:
        missing = [t for t in texts if t not in self.cache]
        if missing:
            self.cache.update(zip(missing, self.inner.embed_checked(missing), strict=True))
        return [self.cache[t] for t in texts]


def predict(pair: dict[str, Any], make_memory: Callable[[], Memory]) -> tuple[str, float, bool]:
    """A fresh store remembers a, then b; the action of b is the prediction (with the score
    it was decided on). A possible conflict is a conflict here (both kept, the pair flagged,
    as the label means), with False for "not sure"."""
    kind = pair.get("kind") or "fact"
    with make_memory() as memory:
        memory.remember(pair["a"], kind=kind)
        result = memory.remember(pair["b"], kind=kind)
        if result.possible_conflicts and result.action == "created":
            return "conflict", result.score, False
        return _ACTION_TO_LABEL[result.action], result.score, True


def score(gold: Iterable[str], predicted: Iterable[str], embedder: str) -> dict[str, Any]:
    """Accuracy, macro-F1, wrong-merge rate, per-label figures and the confusion matrix."""
    gold, predicted = list(gold), list(predicted)
    present = [label for label in LABELS if label in gold]
    confusion = {g: {p: 0 for p in LABELS} for g in present}
    for g, p in zip(gold, predicted, strict=True):
        confusion[g][p] += 1
    labels = {}
    raw_f1 = []
    for label in present:
        tp = confusion[label][label]
        predicted_n = sum(1 for p in predicted if p == label)
        support = sum(1 for g in gold if g == label)
        precision = tp / predicted_n if predicted_n else 0.0
        recall = tp / support if support else 0.0
        f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
        raw_f1.append(f1)
        labels[label] = {
            "precision": round(precision, 4),
            "recall": round(recall, 4),
            "f1": round(f1, 4),
            "support": support,
        }
    non_dup = [p for g, p in zip(gold, predicted, strict=True) if g != "duplicate"]
    return {
        "pairs": len(gold),
        "accuracy": round(sum(g == p for g, p in zip(gold, predicted, strict=True)) / len(gold), 4),
        "macro_f1": round(sum(raw_f1) / len(raw_f1), 4),
        "wrong_merge_rate": round(sum(p == "duplicate" for p in non_dup) / len(non_dup), 4)
        if non_dup
        else 0.0,
        "labels": labels,
        "confusion": confusion,
        "embedder": embedder,
    }


def evaluate(
    pairs: list[dict[str, Any]], make_memory: Callable[[], Memory], embedder: str
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The SPEC §9 report, plus every pair with its prediction (for --errors)."""
    decided = [predict(p, make_memory) for p in pairs]
    predictions = [label for label, _, _ in decided]
    gold = [p["label"] for p in pairs]
    report = score(gold, predictions, embedder)
    # The same, counting only sure conflicts as conflicts (what raises recall's notice).
    sure = [label if sure or label != "conflict" else "neither" for label, _, sure in decided]
    report["macro_f1_sure_only"] = score(gold, sure, embedder)["macro_f1"]
    report["possible_conflicts"] = sum(1 for _, _, sure in decided if not sure)
    rows = [
        {**p, "predicted": q, "score": round(s, 4), "sure": sure}
        for p, (q, s, sure) in zip(pairs, decided, strict=True)
    ]
    return report, rows


def by_source(rows: list[dict[str, Any]], embedder: str) -> dict[str, dict[str, Any]]:
    """The same figures per `source` field (pairs without one count as "unknown")."""
    groups: dict[str, list[dict[str, Any]]] = {}
    for row in rows:
        groups.setdefault(str(row.get("source") or "unknown"), []).append(row)
    out = {}
    for source, members in sorted(groups.items()):
        report = score([r["label"] for r in members], [r["predicted"] for r in members], embedder)
        out[source] = {k: report[k] for k in ("pairs", "accuracy", "macro_f1", "wrong_merge_rate")}
    return out
