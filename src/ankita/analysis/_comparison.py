"""What comparing one new fact with one stored fact comes to: the decision, the evidence, the
gates it passed, and how the contradiction judge amends it."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cached_property

from ankita._config import Settings
from ankita._models import WordEnum
from ankita.analysis._cues import Finding
from ankita.analysis._similarity import LexicalScore


class Decision(WordEnum):
    """What one new fact should do to one stored fact (`Comparison.action`)."""

    MERGE = "merge"
    CONFLICT = "conflict"
    CREATE = "create"


MERGE, CONFLICT, CREATE = Decision.MERGE, Decision.CONFLICT, Decision.CREATE
MERGE_ONLY_CHECKS = frozenset({"different"})
SEMANTIC_FRAME_CHECKS = frozenset({"negation", "opposites", "change_of_state"})


# A long merge below `novel_merge_line` keeps at most this many new words no old word is close to.
NOVEL_WORDS_KEPT = 2


@dataclass(frozen=True)
class Gates:
    """Every gate of one decision, passed or not, as (wording, passed) rows. Kept as the
    numbers they test and worded when read: a write decides ~100 pairs and words one."""

    score: float
    dedup: float
    conflict_line: float
    old_kind: str
    new_kind: str
    lexical_evidence: bool
    cosine: bool
    languages: tuple[str, ...]
    model_reads: bool
    detect: bool
    findings: bool
    frame_score: float
    apart: tuple[str, str] | None
    different_people: bool
    judge: tuple[tuple[str, bool], ...] = ()  # added by the contradiction judge (`judged`)
    novel: int | None = None  # the new fact's words the old has nothing close to, if read

    @cached_property
    def rows(self) -> tuple[tuple[str, bool], ...]:
        score, dedup, line, apart = self.score, self.dedup, self.conflict_line, self.apart
        new, kept = self.novel, NOVEL_WORDS_KEPT
        novel = (
            ()
            if new is None
            else ((f"new words, none close in the old fact: {new} <= {kept}", new <= kept),)
        )
        return (
            (f"score {score:.2f} >= merge line {dedup:.2f}", score >= dedup),
            (f"score {score:.2f} >= conflict line {line:.2f}", score >= line),
            (f"same kind ({self.old_kind} / {self.new_kind})", self.old_kind == self.new_kind),
            (
                "lexical evidence: >= 3 content words each, >= 2 agree, Jaccard >= 0.5",
                self.lexical_evidence,
            ),
            ("cosine from vectors on both facts", self.cosine),
            (
                f"the model reads the facts' language ({', '.join(self.languages)})",
                self.model_reads,
            ),
            ("disagreement check on", self.detect),
            ("a disagreement found", bool(self.findings)),
            (f"frame related: {self.frame_score:.2f} >= {line:.2f}", self.frame_score >= line),
            (
                "same named subject" + (f" (not: '{apart[0]}' vs '{apart[1]}')" if apart else ""),
                apart is None,
            ),
            ("not about different people", not self.different_people),
            *novel,
            *self.judge,
        )

    def __iter__(self) -> Iterator[tuple[str, bool]]:
        return iter(self.rows)

    def __getitem__(self, index: int) -> tuple[str, bool]:
        return self.rows[index]

    def __len__(self) -> int:
        return len(self.rows)


@dataclass(frozen=True)
class Comparison:
    """Everything known about one pair, and the decision it leads to."""

    action: Decision
    score: float
    method: str  # "lexical" or "embedding:<model>"
    lexical: LexicalScore
    cosine: float | None
    findings: tuple[Finding, ...]
    frame_score: float
    same_kind: bool
    reason: str
    gates: Gates | tuple[tuple[str, bool], ...] = ()  # every gate of the decision, passed or not
    # Neither about different people nor about different named subjects.
    one_subject: bool = True
    # Both facts of one claim each (`one_claim`), or a negation, opposites or a stated change
    # between them: where the judge's reading is worth a question to the user.
    worth_judging: bool = True

    @property
    def rank(self) -> tuple[int, float]:
        """Merges beat conflicts beat the rest; then the higher score wins."""
        order = {MERGE: 2, CONFLICT: 1, CREATE: 0}[self.action]
        return order, self.score


def judge_asks(comparison: Comparison, settings: Settings) -> bool:
    """Whether the contradiction judge reads this pair: one the rules left apart, close in
    meaning (a cosine, at or above the judge's floor), of one kind and about one subject.
    Not a pair whose words differ in one slot ("I use Neovim" / "I use tmux"): the rules read
    two things there, where the model assumes one slot holds one value."""
    return (
        settings.detect_disagreement
        and comparison.action == CREATE
        and comparison.same_kind
        and comparison.one_subject
        and comparison.worth_judging
        and not any(f.check in MERGE_ONLY_CHECKS for f in comparison.findings)
        and comparison.cosine is not None
        and comparison.cosine >= settings.judge_floor
    )


def judge_read(comparison: Comparison) -> bool:
    """Whether the contradiction judge has read this pair (a flag it raised)."""
    return isinstance(comparison.gates, Gates) and bool(comparison.gates.judge)


def cleared(probability: float, settings: Settings) -> str:
    """Why a possible conflict is no conflict, when the judge reads the pair as compatible
    (below `judge_clear_line` in both orders); "" when it does not."""
    line = settings.judge_clear_line
    if probability >= line:
        return ""
    return f"the contradiction judge reads the two as compatible ({probability:.2f} < {line:.2f})"


def judged(comparison: Comparison, probability: float, settings: Settings) -> Comparison:
    """The comparison once the judge has read it (a pair the rules left apart, or a merge
    about to be made): a conflict if it reads a contradiction."""
    line = settings.judge_line
    gate = (
        f"contradiction judge: {probability:.3f} >= {line:.2f} (both orders)",
        probability >= line,
    )
    gates = (
        replace(comparison.gates, judge=(*comparison.gates.judge, gate))
        if isinstance(comparison.gates, Gates)
        else (*comparison.gates, gate)
    )
    if probability < line:
        return replace(comparison, gates=gates)
    said = (
        "the contradiction judge reads them as contradicting "
        f"({probability:.3f} >= {line:.2f} both ways)"
    )
    if comparison.action == MERGE:
        # Near-identical words or meaning, one state told against another ("I finished the
        # website project" / "I'm still working on the website project"): no duplicate.
        return replace(
            comparison,
            action=CONFLICT,
            gates=gates,
            reason=f"near-identical (score {comparison.score:.2f}) but {said}",
        )
    assert comparison.cosine is not None  # judge_asks holds
    return replace(
        comparison,
        action=CONFLICT,
        gates=gates,
        reason=f"close in meaning (cosine {comparison.cosine:.2f}) and {said}",
    )
