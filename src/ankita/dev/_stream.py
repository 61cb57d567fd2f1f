"""`ankita eval --stream`: write a real memory stream in order and score what it merged and
flagged against labelled pairs (docs/decisions.md, "On a stream")."""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ankita._errors import InvalidInput
from ankita._jsonl import parse_json, read_jsonl, read_text
from ankita._memory import Memory

STREAM_LABELS = ("duplicate", "conflict", "neither")
_LINKS = {"conflict": "conflict_links", "possible": "possible_links", "merge": "merges"}


@dataclass(frozen=True)
class Stream:
    """One memory written in order: its facts, each with the evidence ids it came from."""

    name: str
    facts: tuple[tuple[str, frozenset[str]], ...]
    # (question, evidence ids, category) where the source has questions (LoCoMo's `qa`).
    questions: tuple[tuple[str, frozenset[str], int], ...] = ()
    # Per question, the group it is scored in apart (a language pair such as "hi>en"), if any.
    groups: tuple[str, ...] = ()


def _session_number(key: str) -> int:
    found = re.search(r"\d+", key)
    return int(found.group()) if found else 0


def _locomo(data: list[Any], where: str) -> list[Stream]:
    """LoCoMo's own format: per conversation, `observation` per session and speaker, each a
    list of [fact, dia_id or ids]; sessions in their numeric order, as they were spoken."""
    streams = []
    for number, conv in enumerate(data):
        observation = conv.get("observation") if isinstance(conv, dict) else None
        if not isinstance(observation, dict):
            raise InvalidInput(f"{where}: conversation {number} has no 'observation' object")
        facts = []
        for session in sorted(observation, key=_session_number):
            speakers = observation[session]
            if not isinstance(speakers, dict):
                raise InvalidInput(f"{where}: {session} of conversation {number} is no object")
            for items in speakers.values():
                for item in items:
                    if not (isinstance(item, list) and item and isinstance(item[0], str)):
                        raise InvalidInput(
                            f"{where}: {session} of conversation {number} "
                            "holds an item that is not [fact, id]"
                        )
                    ids = item[1] if len(item) > 1 else []
                    ids = ids if isinstance(ids, list) else [ids]
                    evidence = frozenset(x.strip() for x in ids if isinstance(x, str))
                    if item[0].strip():
                        facts.append((item[0].strip(), evidence))
        questions = tuple(
            (q["question"], frozenset(str(e).strip() for e in q["evidence"]), int(q["category"]))
            for q in conv.get("qa", ())
            if isinstance(q, dict)
            and q.get("category") in (1, 2, 3, 4)
            and isinstance(q.get("question"), str)
            and q.get("evidence")
        )
        streams.append(
            Stream(str(conv.get("sample_id") or f"conv-{number}"), tuple(facts), questions)
        )
    return streams


def _check_line(row: dict[str, Any]) -> None:
    if not isinstance(row.get("text"), str) or not row["text"].strip():
        raise InvalidInput("needs a non-empty string field 'text'")
    if not isinstance(row.get("stream", ""), str):
        raise InvalidInput("'stream' must be a string")


def load_streams(path: str | Path) -> list[Stream]:
    """LoCoMo JSON (a list of conversations), or JSONL of {"text", "stream"?, "evidence"?}:
    lines of one `stream` name are one memory, in file order."""
    text = read_text(path)
    if text.lstrip().startswith("["):
        data = parse_json(text, str(path))
        streams = _locomo(data, str(path))
    else:
        rows = read_jsonl(text.splitlines(), str(path), _check_line)
        grouped: dict[str, list[tuple[str, frozenset[str]]]] = {}
        for row in rows:
            evidence = row.get("evidence") or []
            evidence = evidence if isinstance(evidence, list) else [evidence]
            grouped.setdefault(row.get("stream") or "stream", []).append(
                (row["text"].strip(), frozenset(str(e) for e in evidence))
            )
        streams = [Stream(name, tuple(facts)) for name, facts in grouped.items()]
    if not any(s.facts for s in streams):
        raise InvalidInput(f"{path}: no facts")
    return streams


def select(streams: list[Stream], which: str | None) -> list[Stream]:
    """`which` is "0-2", "1" or "0,2" (positions), or None for all."""
    if not which:
        return streams
    chosen: list[int] = []
    for part in which.split(","):
        low, _, high = part.strip().partition("-")
        if not low.isdigit() or (high and not high.isdigit()):
            raise InvalidInput(f"--convs: '{which}' is not like 0-2 or 0,3")
        chosen.extend(range(int(low), int(high or low) + 1))
    if any(i >= len(streams) for i in chosen):
        raise InvalidInput(f"--convs: '{which}' asks past the {len(streams)} streams in the file")
    return [streams[i] for i in chosen]


def _check_label(row: dict[str, Any]) -> None:
    if not all(isinstance(row.get(k), str) for k in ("a", "b", "label")):
        raise InvalidInput("needs string fields a, b and label")
    if row["label"] not in STREAM_LABELS:
        raise InvalidInput(f"label must be one of {', '.join(STREAM_LABELS)}")


def load_labels(path: str | Path) -> dict[tuple[str, str, str], str]:
    """{(stream, a, b): label}; `conv` or `stream` names the stream ("" when neither)."""
    rows = read_jsonl(read_text(path).splitlines(), str(path), _check_label)
    return {
        (str(r.get("conv") or r.get("stream") or ""), r["a"].strip(), r["b"].strip()): r["label"]
        for r in rows
    }


def _per_1k(count: int, facts: int) -> float:
    return round(1000 * count / facts, 1) if facts else 0.0


def _share(part: int, whole: int) -> float | None:
    return round(part / whole, 3) if whole else None


def percentile(values: list[float], q: float) -> float:
    """The q-quantile of the values (the sample at that rank), 0 for none."""
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2) if ordered else 0.0


_COUNTS = (
    "facts",
    "conflict_writes",
    "merge_writes",
    "conflict_links",
    "merges",
    "conflict_labelled",
    "conflict_true",
    "merge_labelled",
    "merge_true",
    "false_links",
    "possible_writes",
    "possible_links",
    "possible_labelled",
    "possible_true",
)


@dataclass
class _Tally:
    """What one or more streams' writes did: counts, the labelled keys each action reached
    (a pair merged or flagged twice counts once for recall), and each write's milliseconds."""

    names: set[str]
    counts: dict[str, int]
    seen: set[tuple[tuple[str, str, str], str]]
    write_ms: list[float]

    @classmethod
    def empty(cls, *names: str) -> _Tally:
        return cls(set(names), dict.fromkeys(_COUNTS, 0), set(), [])

    def add(self, other: _Tally) -> None:
        self.names |= other.names
        self.seen |= other.seen
        self.write_ms += other.write_ms
        for k, v in other.counts.items():
            self.counts[k] += v


def _write_stream(
    stream: Stream,
    labels: dict[tuple[str, str, str], str],
    make_memory: Callable[[Stream], Memory],
) -> tuple[_Tally, list[dict[str, Any]]]:
    """One stream written in order into its own fresh memory, each merge and link scored."""
    tally = _Tally.empty(stream.name)
    counts, seen = tally.counts, tally.seen
    flagged: list[dict[str, Any]] = []
    original: dict[str, str] = {}  # fact id -> the text it was created with
    with make_memory(stream) as memory:
        for text, _ in stream.facts:
            started = time.perf_counter()
            result = memory.remember(text)
            tally.write_ms.append(1000 * (time.perf_counter() - started))
            counts["facts"] += 1
            if result.action != "merged":
                original[result.fact.id] = text
            # Sure conflicts, possible ones (scored apart: they raise no notice), merges.
            groups: list[tuple[list[str], str, str]] = []
            if result.action == "conflict":
                counts["conflict_writes"] += 1
                groups.append((list(result.conflicts_with), "conflict", "conflict"))
            if result.possible_conflicts:
                counts["possible_writes"] += 1
                groups.append((list(result.possible_conflicts), "possible", "conflict"))
            if result.action == "merged":
                counts["merge_writes"] += 1
                assert result.merged_into is not None
                groups.append(([result.merged_into], "merge", "duplicate"))
            for other, action, want in ((o, a, w) for os_, a, w in groups for o in os_):
                # The stored text, or the text it was created with (a merge may have grown
                # it); under this stream's name, or none.
                stored = memory.get(other).text
                candidates = [
                    (name, a, text)
                    for name in (stream.name, "")
                    for a in (stored, original.get(other, stored))
                ]
                key = next((k for k in candidates if k in labels), candidates[0])
                label = labels.get(key)
                counts[_LINKS[action]] += 1
                if label is not None:
                    counts[f"{action}_labelled"] += 1
                    counts[f"{action}_true"] += label == want
                    counts["false_links"] += action == "conflict" and label != "conflict"
                seen.add((key, action))
                flagged.append(
                    {
                        "stream": stream.name,
                        "a": key[1],
                        "b": text,
                        "action": action,
                        "label": label,
                        "reason": result.reason,
                    }
                )
    return tally, flagged


def _report(tally: _Tally, labels: dict[tuple[str, str, str], str]) -> dict[str, Any]:
    counts, seen = tally.counts, tally.seen
    facts = counts["facts"]
    mine = {k: v for k, v in labels.items() if k[0] in tally.names or not k[0]}
    wanted = {
        label: {k for k, v in mine.items() if v == label} for label in ("conflict", "duplicate")
    }
    got = {
        label: {k for k, action in seen if action == kind}
        for label, kind in (
            ("conflict", "conflict"),
            ("duplicate", "merge"),
            ("possible", "possible"),
        )
    }
    return {
        "streams": len(tally.names),
        "facts": facts,
        "conflict_writes_per_1k": _per_1k(counts["conflict_writes"], facts),
        "conflict_links_per_1k": _per_1k(counts["conflict_links"], facts),
        # Links on pairs a person labelled duplicate or neither: false alarms for certain.
        "false_conflict_links_per_1k": _per_1k(counts["false_links"], facts),
        "merges_per_1k": _per_1k(counts["merges"], facts),
        "possible_conflicts_per_1k": _per_1k(counts["possible_links"], facts),
        "possible_precision": _share(counts["possible_true"], counts["possible_labelled"]),
        "conflict_precision": _share(counts["conflict_true"], counts["conflict_labelled"]),
        "merge_precision": _share(counts["merge_true"], counts["merge_labelled"]),
        "conflict_recall": _share(
            len(wanted["conflict"] & got["conflict"]), len(wanted["conflict"])
        ),
        "conflict_recall_with_possible": _share(
            len(wanted["conflict"] & (got["conflict"] | got["possible"])), len(wanted["conflict"])
        ),
        "duplicate_recall": _share(
            len(wanted["duplicate"] & got["duplicate"]), len(wanted["duplicate"])
        ),
        "labelled_true_conflicts": len(wanted["conflict"]),
        "labelled_true_duplicates": len(wanted["duplicate"]),
        "flagged_unlabelled": sum(1 for key, _ in seen if key not in labels),
        # Decisions a person labelled otherwise that act on the store or the notice: sure
        # links on pairs labelled duplicate or neither, and merges of pairs not duplicates.
        "wrong_per_1k": _per_1k(
            counts["false_links"] + counts["merge_labelled"] - counts["merge_true"], facts
        ),
        "write_p50_ms": percentile(tally.write_ms, 0.5),
        "write_p95_ms": percentile(tally.write_ms, 0.95),
        **counts,
    }


def run_stream(
    streams: Iterable[Stream],
    labels: dict[tuple[str, str, str], str],
    make_memory: Callable[[Stream], Memory],
    by_stream: bool = False,
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """Write every stream in order into its own fresh memory; score each merge and each
    conflict link by the label of its pair (the stored fact's text, or the text it was created
    with, against the new one). Returns the report and every flagged pair; with `by_stream`,
    the report's `by_stream` holds each stream's own figures, worst first (`wrong_per_1k`,
    then merge precision), as a list of {stream, ...figures}."""
    pooled = _Tally.empty()
    parts: list[tuple[str, _Tally]] = []
    flagged: list[dict[str, Any]] = []
    for stream in streams:
        tally, found = _write_stream(stream, labels, make_memory)
        pooled.add(tally)
        parts.append((stream.name, tally))
        flagged += found
    report = _report(pooled, labels)
    if by_stream:
        each = [{"stream": name, **_report(t, labels)} for name, t in parts]
        report["by_stream"] = sorted(
            each,
            key=lambda r: (
                -r["wrong_per_1k"],
                r["merge_precision"] if r["merge_precision"] is not None else 1.0,
            ),
        )
    return report, flagged
