"""Recall (SPEC §6): relevance, pins, staleness, conflict partners and the notice."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta

from ankita._config import Settings
from ankita._models import NOTICE, Fact, Recall, RecalledFact
from ankita.analysis._similarity import match_words
from ankita.analysis._text import content_words, search_words
from ankita.search._vectors import Nearby
from ankita.store._sql import SQLStore

STALE_FACTOR = 0.5  # a stale fact needs twice the relevance to outrank a fresh one
SEARCH_WIDTH = 200
SEMANTIC_FLOOR = 0.2  # raw cosine below this is noise for every model we measured


def is_stale(fact: Fact, now: datetime, settings: Settings) -> bool:
    """Unpinned and not confirmed for `stale_after_days`; pins never go stale."""
    if fact.pinned:
        return False
    confirmed = datetime.fromisoformat(fact.last_confirmed_at)
    return now - confirmed > timedelta(days=settings.stale_after_days)


# How a fact's relevance is made of its scores (docs/decisions.md, "Recall"): tuned on the
# LoCoMo dev conversations with `ankita eval --recall`. With vectors the cosine leads, and the
# query's words in the fact (bm25, relative to the best match) break its near-ties; without,
# the share of the query's words a fact holds and its bm25 count alike.
DENSE_WEIGHTS = (0.8, 0.1, 0.3)  # cosine, word coverage, bm25
LEXICAL_WEIGHTS = (0.0, 0.5, 0.5)


def fuse(english: float, multilingual: float | None) -> float:
    """One cosine from both spaces: e5's query cosines sit about 0.72-0.9, so they are moved
    onto MiniLM's scale (0.75 -> 0.2, 0.9 -> 0.8) before the higher of the two counts."""
    if multilingual is None:
        return english
    return max(english, min(1.0, max(0.0, (multilingual - 0.7) * 4.0)))


def _semantic_scores(
    semantic: tuple[str, Nearby] | None, across: Nearby | None
) -> Callable[[str], float]:
    """A fact's raw cosine with the query (at or above the floor), else 0; with the
    multilingual space, the higher of the two once moved onto one scale."""
    if semantic is None and across is None:
        return lambda fact_id: 0.0
    nearby = semantic[1] if semantic is not None else None

    def similar(fact_id: str) -> float:
        cos = nearby.get(fact_id) if nearby is not None else None
        english = cos if cos is not None else 0.0
        return fuse(english, across.get(fact_id)) if across is not None else english

    return similar


def recall(
    store: SQLStore,
    user: str,
    query: str,
    limit: int,
    kinds: Sequence[str] | None,
    settings: Settings,
    now: datetime,
    semantic: tuple[str, Nearby] | None = None,
    across: Nearby | None = None,
) -> Recall:
    query_words = content_words(query)
    match = sorted(search_words(query))
    ranked: dict[str, float] = {}
    hits = store.search(user, match, SEARCH_WIDTH) if match else []
    best_rank = min((r for _, r in hits), default=-1.0) or -1.0
    for fact, rank in hits:
        ranked[fact.id] = rank / best_rank if best_rank else 0.0
    similar = _semantic_scores(semantic, across)
    dense = semantic is not None or across is not None
    w_cos, w_cover, w_bm25 = DENSE_WEIGHTS if dense else LEXICAL_WEIGHTS
    # The nearest facts by meaning join the lexical hits, even with no word in common.
    close = semantic[1].best(SEARCH_WIDTH) if semantic else []
    if across is not None:
        close = list(dict.fromkeys([*close, *across.best(SEARCH_WIDTH)]))
    if match or close:
        # Without their conflict links: only the few chosen below need them, and a dense
        # conflict graph makes loading them for every candidate the costly part of recall.
        # The lexical hits come with their facts; only the other close ones are read.
        candidates = [f for f, _ in hits] + [
            f
            for f in store.facts_by_ids(user, sorted(set(close) - ranked.keys()), links=False)
            if f.status == "active"
        ]
    else:
        # Nothing to search for ("what do you know?"): the most recently confirmed facts.
        candidates = store.recent_facts(user, limit, kinds)
    pinned = store.pinned_facts(user, kinds)

    def relevance(fact: Fact) -> float:
        coverage = (
            len(match_words(query_words, content_words(fact.text))) / len(query_words)
            if query_words
            else 0.0
        )
        score = w_cos * similar(fact.id) + w_cover * coverage + w_bm25 * ranked.get(fact.id, 0.0)
        return score * (STALE_FACTOR if is_stale(fact, now, settings) else 1.0)

    pool = [f for f in candidates if not kinds or f.kind in kinds]
    # Ties go to the fact confirmed last (what the user said most recently), then the id.
    pool.sort(key=lambda f: (f.last_confirmed_at, f.id), reverse=True)
    pool.sort(key=lambda f: -relevance(f))
    top = pool[:limit]
    linked = {f.id: f for f in store.facts_by_ids(user, sorted(f.id for f in top))}
    chosen: dict[str, tuple[Fact, float, bool]] = {}
    for fact in top:
        chosen[fact.id] = (linked.get(fact.id, fact), relevance(fact), False)
    for fact in pinned:
        chosen.setdefault(fact.id, (fact, relevance(fact), False))
    # Conflict partners come along even if they did not match: the model must see both sides.
    partner_ids = [
        p for fact, _, _ in list(chosen.values()) for p in fact.conflicts_with if p not in chosen
    ]
    for partner in store.facts_by_ids(user, sorted(set(partner_ids))):
        if partner.status == "active":
            chosen[partner.id] = (partner, relevance(partner), True)
    # Ties as in the pool: the fact confirmed last, then the id (ids are random, so an
    # order by id alone made the same memory answer in a different order from run to run).
    items = sorted(chosen.values(), key=lambda t: (t[0].last_confirmed_at, t[0].id), reverse=True)
    items.sort(key=lambda t: (t[2], -t[1]))
    ids = set(chosen)
    pairs = sorted(
        {tuple(sorted((f.id, p))) for f, _, _ in items for p in f.conflicts_with if p in ids}
    )
    facts = tuple(
        RecalledFact(
            fact=f,
            score=round(s, 6),
            stale=is_stale(f, now, settings),
            pinned=f.pinned,
            conflicting=any(p in ids for p in f.conflicts_with),
            via_conflict=via,
        )
        for f, s, via in items
    )
    conflicts = tuple((a, b) for a, b in pairs)
    # The notice asks the user which is current: only when the query itself reached both
    # sides. A pinned fact comes along on every recall and a partner is pulled in to be
    # seen, so neither raises it on a query about something else (docs/decisions.md).
    asked = {f.id for f in top}
    about = any(a in asked and b in asked for a, b in conflicts)
    return Recall(query=query, facts=facts, conflicts=conflicts, notice=NOTICE if about else None)
