"""Comparisons outside the write: what remembering one text after another would do, the
newer side of flagged pairs, and whether an undo would bring back a second copy."""

from __future__ import annotations

from collections.abc import Sequence

from ankita._config import Settings
from ankita._errors import InvalidInput, NotFound, UndoError
from ankita._merge_check import repeated
from ankita._models import Event
from ankita._validate import validate_id
from ankita._write import Writer
from ankita.analysis._comparison import MERGE, Comparison, judge_asks, judged
from ankita.analysis._decision import compare_texts
from ankita.analysis._plain import older_newer
from ankita.analysis._profile import profile_of
from ankita.analysis._similarity import cosine
from ankita.search._candidates import CandidateSearch
from ankita.store._sql import SQLStore


def compare_pair(writer: Writer, a: str, b: str, kind: str) -> Comparison:
    """As a write would decide: b as a whole or one of its sentences against a's vector; in
    the multilingual space when either text is in another language and the memory has one."""
    settings, space = writer.settings, writer.multilingual
    cos: float | None = None
    model = writer.embedder.model_id if writer.embedder is not None else None
    if space is not None and (profile_of(a).language, profile_of(b).language) != ("en", "en"):
        va, vb = space.vectors([a, b])
        if va is not None and vb is not None:
            cos, model = cosine(va, vb), space.model
    else:
        va = writer.embed(a)[0]
        vb, parts, _ = writer.embed(b)
        if va is not None and vb is not None:
            cos = max(cosine(p, va) for p in (vb, *parts))
    comparison = compare_texts(b, kind, a, kind, settings, cos, model, True, writer.novelty)
    # As the write does: the judge reads a pair the rules left apart (`judge_asks`), and a
    # merge before it is made (`_merge_check`) where the new text has a vector.
    reads_merge = (
        comparison.action == MERGE and model is not None and vb is not None and not repeated(a, b)
    )
    if writer.judge is None or not (reads_merge or judge_asks(comparison, settings)):
        return comparison
    return judged(comparison, writer.judge.contradiction([(a, b)])[0], settings)


def newer_sides(store: SQLStore, user: str, pairs: object) -> list[tuple[str, str]]:
    """(keep, over) for each flagged pair, keeping the side said last; every pair checked
    before any is settled, so a bad one changes nothing."""
    if not isinstance(pairs, (list, tuple)) or not 1 <= len(pairs) <= 1000:
        raise InvalidInput("pairs must be a list of 1 to 1000 [a, b] pairs")
    chosen: list[tuple[str, str]] = []
    for pair in pairs:
        if not isinstance(pair, (list, tuple)) or len(pair) != 2:
            raise InvalidInput("each pair must be [a, b]")
        a, b = validate_id(pair[0]), validate_id(pair[1])
        fa, fb = store.get_fact(user, a), store.get_fact(user, b)
        if fa is None or fb is None or b not in fa.conflicts_with:
            raise NotFound(f"{a} and {b} are not a flagged pair of user {user!r}")
        older, newer = older_newer(fa, fb)
        chosen.append((newer.id, older.id))
    # A fact kept in one pair and superseded in another would depend on the order.
    both = {keep for keep, _ in chosen} & {over for _, over in chosen}
    if both:
        raise InvalidInput(
            f"{min(both)} is the newer side of one pair and the older of "
            "another; settle those pairs one at a time"
        )
    return chosen


def refuse_second_copy(
    search: CandidateSearch, settings: Settings, store: SQLStore, user: str, group: Sequence[Event]
) -> None:
    """Undoing a forget must not bring back a fact that was said again since: the store would
    then hold two copies of one fact, which a write can never make."""
    for item in group:
        if item.type != "forget" or item.undone_by is not None:
            continue
        text, kind = item.data["fact"]["text"], item.data["fact"]["kind"]
        for other in search.candidates(store, text, kind, (), None):
            same = compare_texts(text, kind, other.text, other.kind, settings, None, None)
            if other.id != item.fact_id and same.action == MERGE:
                raise UndoError(
                    f"cannot restore {item.fact_id}: {other.id} "
                    f"('{other.text}') was written since and says the same"
                )
