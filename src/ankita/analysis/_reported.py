"""Reported speech: a fact that tells what its person said ("Audrey mentioned that she moved to
Austin") states it as if the person had said it (docs/decisions.md, "Reported speech")."""

from __future__ import annotations

import re

from ankita.analysis._profile import per_text

# Verbs of saying (lemmas), with the forms a fact about someone tells them in: what they
# report is stated by whoever the fact is about (`stated`, and `_propositions._intended`).
SAYING: dict[str, tuple[str, ...]] = {
    "say": ("said", "says"),
    "mention": ("mentioned", "mentions"),
    "share": ("shared", "shares"),
    "explain": ("explained", "explains"),
    "reveal": ("revealed", "reveals"),
    "admit": ("admitted", "admits"),
    "note": ("noted", "notes"),
    "state": ("stated", "states"),
    "report": ("reported", "reports"),
    "tell": ("told", "tells"),
}
# A fact that opens by reporting what its person said ("Audrey mentioned that she moved to
# Austin", "Lena says her favorite band is ..."): the pronoun that opens the reported clause is
# read as that person. A possessive only after "that" or a form of *say*: "shared her
# excitement" and "mentioned her brother" name what was shared or mentioned. *Tell* takes
# whom it tells first ("told Maria that he ...").
_SAYING = "(?:{})".format(
    "|".join(
        rf"{form}\s+\w+" if lemma == "tell" else form
        for lemma, forms in SAYING.items()
        for form in forms
    )
)
_REPORTED = re.compile(
    rf"^(?P<who>[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)?)\s+(?:also\s+|later\s+|then\s+)?"
    rf"(?P<verb>{_SAYING})(?P<that>\s+that)?\s+(?P<pro>he|she|they|his|her|their)\s+(?P<rest>\S.*)$",
    re.DOTALL,
)


@per_text
def stated(text: str) -> str:
    """What a fact states when it reports what its person said, as if it said it directly:
    "Audrey mentioned that she moved to Austin" -> "Audrey moved to Austin"; else the text."""
    found = _REPORTED.match(text.strip())
    if not found:
        return text
    who, pro = found["who"], found["pro"]
    if who.split()[0].lower() in ("i", "we", "my", "our"):
        return text
    if pro in ("he", "she", "they"):
        return f"{who} {found['rest']}"
    if found["that"] or found["verb"].startswith("sa"):
        return f"{who}'s {found['rest']}"
    return text
