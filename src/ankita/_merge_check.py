"""A merge read by the contradiction judge before it is made: two facts near-identical in
words or meaning may still tell one state against another ("I finished the website project" /
"I'm still working on the website project"), and a merge would fold the newer into history
(docs/decisions.md, "The contradiction judge")."""

from __future__ import annotations

from collections.abc import Sequence

from ankita._config import Settings
from ankita._errors import JudgeError
from ankita._models import Fact
from ankita.analysis._comparison import CONFLICT, Comparison, judged
from ankita.embed._judge import ContradictionJudge

Candidate = tuple[Comparison, Fact]


def best_first(merges: Sequence[Candidate]) -> list[Candidate]:
    """Merge candidates, best first; of equal scores the fact stored first (ids are random,
    creation is not)."""
    return sorted(merges, key=lambda cf: (-cf[0].score, cf[1].created_at, cf[1].id))


def repeated(old: str, new: str) -> bool:
    """Whether `new` says `old` again word for word (case and spacing aside): a text read
    against itself contradicts nothing, so the judge is not asked (it would cost a third of
    such a write)."""
    return " ".join(old.split()).casefold() == " ".join(new.split()).casefold()


def unless_contradicted(
    judge: ContradictionJudge, settings: Settings, text: str, ordered: Sequence[Candidate]
) -> tuple[Candidate | None, list[Candidate], str | None]:
    """Of merge candidates `ordered` best first (`best_first`), the first the judge does not
    read as a contradiction of `text`; the ones before it that it does, now conflicts; and the
    judge's error, if it failed (then the best merge stands: a failing judge never blocks a
    write). At most `judge_candidates` are read; a repeat of the text is not (`repeated`)."""
    refused: list[Candidate] = []
    for comparison, fact in ordered[: settings.judge_candidates]:
        if repeated(fact.text, text):
            return (comparison, fact), refused, None
        try:
            (probability,) = judge.contradiction([(fact.text, text)])
        except JudgeError as exc:
            return ordered[0], [], str(exc)
        read = judged(comparison, probability, settings)
        if read.action != CONFLICT:
            return (read, fact), refused, None
        refused.append((read, fact))
    return None, refused, None
