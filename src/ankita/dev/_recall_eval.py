"""`ankita eval --recall`: write each conversation's facts through the normal write path, ask
its questions, and score whether the recalled facts hold the evidence (docs/decisions.md,
"Recall")."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from ankita._errors import InvalidInput
from ankita._jsonl import parse_json, read_text
from ankita._memory import Memory
from ankita.dev._stream import Stream, load_streams, percentile

CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "open-domain", 4: "single-hop"}


def _fact_of(item: Any, number: int, where: str) -> tuple[str, frozenset[str]]:
    """A fact as a string (its id is its position), {"text", "id"?} or [text, id]."""
    ids: Any
    if isinstance(item, str):
        text, ids = item, str(number)
    elif isinstance(item, dict) and isinstance(item.get("text"), str):
        text, ids = item["text"], item.get("id", str(number))
    elif isinstance(item, list) and item and isinstance(item[0], str):
        text, ids = item[0], item[1] if len(item) > 1 else str(number)
    else:
        raise InvalidInput(f"{where}: fact {number} is not a string, {{text, id}} or [text, id]")
    ids = ids if isinstance(ids, list) else [ids]
    if not text.strip():
        raise InvalidInput(f"{where}: fact {number} is empty")
    return text.strip(), frozenset(str(i) for i in ids)


def _question_of(item: Any, number: int, where: str) -> tuple[str, frozenset[str], int]:
    if not (
        isinstance(item, dict)
        and isinstance(item.get("question"), str)
        and isinstance(item.get("evidence"), list)
        and item["evidence"]
    ):
        raise InvalidInput(
            f"{where}: question {number} needs a string 'question' and a non-empty list 'evidence'"
        )
    category = item.get("category", 4)
    if category not in CATEGORIES:
        raise InvalidInput(f"{where}: question {number}: category must be 1 to 4")
    return item["question"], frozenset(str(e) for e in item["evidence"]), int(category)


def _group_of(item: dict[str, Any], number: int, where: str) -> str:
    """The language pair a question is scored in ("hi>en": a fact said in Hindi, asked in
    English), from its "languages" field; "" without one."""
    group = item.get("languages", "")
    if not isinstance(group, str) or len(group) > 40:
        raise InvalidInput(f"{where}: question {number}: 'languages' must be a short string")
    return group


def load_recall_set(path: str | Path) -> list[Stream]:
    """LoCoMo JSON (its observations and questions of categories 1-4), or JSONL with one
    conversation a line: {"facts": [...], "questions": [{"question", "evidence", "category"?}]}."""
    text = read_text(path)
    if text.lstrip().startswith("["):
        streams = load_streams(path)
    else:
        streams = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            where = f"{path}:{number}"
            row = parse_json(line, where)
            if not (
                isinstance(row, dict)
                and isinstance(row.get("facts"), list)
                and isinstance(row.get("questions"), list)
            ):
                raise InvalidInput(f"{where}: needs lists 'facts' and 'questions'")
            facts = tuple(_fact_of(f, i, where) for i, f in enumerate(row["facts"]))
            questions = tuple(_question_of(q, i, where) for i, q in enumerate(row["questions"]))
            groups = tuple(_group_of(q, i, where) for i, q in enumerate(row["questions"]))
            name = str(row.get("name") or f"line-{number}")
            streams.append(Stream(name, facts, questions, groups if any(groups) else ()))
    if not any(s.questions for s in streams):
        raise InvalidInput(f"{path}: no questions with evidence")
    return streams


def run_recall(
    streams: Iterable[Stream],
    make_memory: Callable[[Stream], Memory],
    ks: Sequence[int] = (5, 10),
    by_stream: bool = False,
) -> dict[str, Any]:
    """hit@k (any evidence id among the top k recalled facts) and full@k (all of them),
    overall and per category, with recall latency. A fact that absorbed others through a
    merge answers for all their ids; conflict partners recall brings along do not count.
    With `by_stream`, `by_stream` lists each stream's figures, worst first (by hit@k at the
    smallest k)."""
    rows: list[tuple[int, dict[str, bool]]] = []
    groups: list[str] = []
    asked: list[str] = []  # per question, the stream it was asked of
    took: list[float] = []
    facts = 0
    for stream in streams:
        with make_memory(stream) as memory:
            ids: dict[str, set[str]] = {}
            for text, evidence in stream.facts:
                result = memory.remember(text)
                ids.setdefault(result.merged_into or result.fact.id, set()).update(evidence)
            facts += len(stream.facts)
            # Questions are asked once the store is settled: any multilingual backfill done.
            space = memory.multilingual
            if space is not None and space.in_use(memory.store):
                memory.reindex(multilingual=True)
            groups += stream.groups or [""] * len(stream.questions)
            asked += [stream.name] * len(stream.questions)
            for question, evidence, category in stream.questions:
                started = time.perf_counter()
                recalled = memory.recall(question, limit=max(ks))
                took.append(1000 * (time.perf_counter() - started))
                ranked = [ids.get(f.fact.id, set()) for f in recalled.facts if not f.via_conflict]
                marks = {}
                for k in ks:
                    got = set().union(*ranked[:k])
                    marks[f"hit@{k}"] = bool(got & evidence)
                    marks[f"full@{k}"] = evidence <= got
                rows.append((category, marks))
    if not rows:
        raise InvalidInput("no questions to ask")
    report: dict[str, Any] = {"facts": facts, "questions": len(rows)}
    for key in rows[0][1]:
        report[key] = round(sum(m[key] for _, m in rows) / len(rows), 4)
        for category, name in CATEGORIES.items():
            in_category = [m[key] for c, m in rows if c == category]
            if in_category:
                report[f"{key}:{name}"] = round(sum(in_category) / len(in_category), 4)
    if any(groups):
        report["by_group"] = dict(sorted(_split(groups, rows).items()))
    if by_stream:
        first = f"hit@{min(ks)}"
        report["by_stream"] = sorted(
            ({"stream": name, **figures} for name, figures in _split(asked, rows).items()),
            key=lambda r: r[first],
        )
    report["recall_p50_ms"] = percentile(took, 0.5)
    report["recall_p95_ms"] = percentile(took, 0.95)
    return report


def _split(keys: list[str], rows: list[tuple[int, dict[str, bool]]]) -> dict[str, dict[str, Any]]:
    """The questions and their hit@k and full@k figures per key, one key per question."""
    by: dict[str, list[dict[str, bool]]] = {}
    for key, (_, marks) in zip(keys, rows, strict=True):
        by.setdefault(key, []).append(marks)
    return {
        key: {
            "questions": len(marks),
            **{k: round(sum(m[k] for m in marks) / len(marks), 4) for k in marks[0]},
        }
        for key, marks in by.items()
    }
