"""Whether a pair needs the disagreement analysis at all: an upper bound of every rule that
could make it a merge or a conflict, read from the two texts' profiles (docs/index.md)."""

from __future__ import annotations

from ankita.analysis._change import ended_said
from ankita.analysis._disagree import has_opposite_pair
from ankita.analysis._profile import Text, as_profile
from ankita.analysis._similarity import SHORT_FACT_WORDS, count_shared
from ankita.analysis._slots import share_a_slot
from ankita.analysis._subjects import (
    named_subjects_differ,
    other_subjects,
    owner_and_owned,
    subject,
)


def could_conflict(old: Text, new: Text, score: float, conflict_line: float) -> bool:
    """False only when no finding could turn this pair into a merge or a conflict, so the
    disagreement analysis can be skipped (the costly part of a write). Every branch is an
    upper bound of one rule of `_decision.compare_texts`; docs/index.md gives the argument."""
    if score >= conflict_line:  # related already (this covers every merge)
        return True
    old, new = as_profile(old), as_profile(new)
    if has_opposite_pair(old, new):  # opposites count as one shared slot
        return True
    if share_a_slot(old, new):  # one value replaced in the same sentence
        return True
    if not old.attribute_keys.isdisjoint(new.attribute_keys):  # one attribute stated twice
        return True
    shared = min(count_shared(old, new), count_shared(new, old))
    # An ending of what the other asserts is one slot whatever else each says (`_decision`).
    if shared and ended_said(old, new):
        return True
    return frames_may_reach(shared, old.core_size, new.core_size, conflict_line)


def frames_may_reach(shared: int, core_a: int, core_b: int, conflict_line: float) -> bool:
    """Could the frames of two facts sharing at most `shared` words, each keeping at least its
    fact's core, reach the conflict line: by the short-fact link, containment or Jaccard?
    Monotone: true for more shared words, false for larger cores (`_index.groups_needed`)."""
    if shared == 0:
        return False
    # Findings only take numbers, days, months and change words out of a frame: the frame
    # keeps at least `core` words, and shares at most `shared`.
    # An `order` finding (>= 3 shared words) also takes two shared words out of both frames.
    order_drop = 2 if shared >= 3 else 0
    if max(core_a, core_b) - order_drop <= SHORT_FACT_WORDS:  # the short-fact link
        return True
    if shared >= 2 and min(core_a, core_b) <= shared:  # containment
        return True
    jaccard = shared / (max(core_a, shared) + max(core_b, shared) - shared)
    return jaccard >= min(0.5, conflict_line)


def named_apart(old: Text, new: Text) -> bool:
    """Both facts open with a name, not the same one, and they do not each name the other's:
    with the disagreement check on, `compare_texts` creates such a pair whatever else they
    share (different people before the merge line; people apart on every conflict path, and
    no clause conflict between different people), so a write need not compare it. Not where
    one opens with what the other's subject owns ("Nate's girlfriend"): a denial of having one
    is about Nate."""
    return (
        named_subjects_differ(old, new)
        and other_subjects(old, new)
        and not owner_and_owned(subject(old) or "", subject(new) or "")
    )
