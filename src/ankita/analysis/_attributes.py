"""Single-valued attributes of the user (pure): where they live, age, marital status, name,
employer, birthday, favourite X, the name of one of their people or animals. Two first-person
facts that give one attribute different values disagree, however different their wording ("I
live in Alaska" / "I live with my husband in Ohio"); so do two facts that open with one name
and give that person's home or employer. Patterns are general English, matched on tokens,
clause by clause.
"""

from __future__ import annotations

from ankita.analysis._cues import MANY
from ankita.analysis._lexicon import NEGATIONS, STOP_WORDS
from ankita.analysis._profile import Text, per_text
from ankita.analysis._reported import stated
from ankita.analysis._subjects import subject
from ankita.analysis._text import clauses, number_value, stem

_STOP_VALUE = {
    "and",
    "but",
    "with",
    "because",
    "where",
    "so",
    "since",
    "for",
    "while",
    "who",
    "which",
    "that",
    "when",
    "as",
    "to",
    "now",
    "then",
    "after",
    "before",
    "until",
}
_DECADES = {
    "teens": 10,
    "twenties": 20,
    "thirties": 30,
    "forties": 40,
    "fifties": 50,
    "sixties": 60,
    "seventies": 70,
    "eighties": 80,
    "nineties": 90,
}
_MARRIED = {"married", "wife", "husband", "spouse"}
_ENGAGED = {"engaged", "fiance", "fiancee", "fiancé", "fiancée"}
_SINGLE = {"single", "divorced", "widowed", "widow", "widower"}
_LIVE = {"live", "lives", "living", "reside", "based"}
_MOVED = {"moved", "relocated"}
# Words that open a thing one moves to that is not a named place.
_NOT_A_PLACE = {"a", "an", "my", "our", "his", "her", "their", "another", "new", "be", "work"}


def _value(tokens: tuple[str, ...], start: int) -> tuple[str, ...]:
    """Content words from `start` to the first joining word: the value of an attribute."""
    out = []
    for word in tokens[start:]:
        if word in _STOP_VALUE:
            break
        if word not in STOP_WORDS:
            out.append(stem(word))
    return tuple(out)


def _age(clause: tuple[str, ...]) -> str | None:
    """'i am 28', 'i am a 56 year old woman', 'i turned 18', 'i am in my thirties'."""
    for i, word in enumerate(clause[:-1]):
        if word == "i" and clause[i + 1] in ("am", "turned", "turn"):
            rest = [w for w in clause[i + 2 :] if w not in ("a", "an", "just", "almost", "over")]
            if len(rest) >= 3 and rest[0] == "in" and rest[1] == "my" and rest[2] in _DECADES:
                return f"{_DECADES[rest[2]]}s"
            if not rest:
                return None
            first = number_value(tuple(rest), 0)
            if first is None:
                return None
            total = int("".join(c for c in first if c.isdigit()) or 0)
            # "twenty eight": a tens word followed by a units word.
            if len(rest) > 1 and total % 10 == 0 and total >= 20:
                second = number_value(tuple(rest), 1)
                if second is not None and second.isdigit() and int(second) < 10:
                    total += int(second)
                    rest = rest[1:]
            after = rest[1:3]
            if (
                not after
                or after[0] in ("year", "years", "yo")
                or (clause[i + 1] in ("turned", "turn"))
            ):
                return str(total)
            if after[0].startswith("years") or after[:2] == ["year", "old"]:
                return str(total)
    return None


def _matches_age(a: str, b: str) -> bool:
    """Same age, or an exact age inside a decade ("34" and "30s")."""
    if a == b:
        return True
    for x, y in ((a, b), (b, a)):
        if x.endswith("s") and y.isdigit():
            decade = int(x[:-1])
            return decade <= int(y) < decade + 10
    return False


@per_text
def attributes(text: str) -> dict[str, tuple[str, ...]]:
    """{attribute: value words} stated about the user (first person, not negated), and
    {"home@<name>" or "employer@<name>": value words} about a person a fact opens with."""
    found: dict[str, tuple[str, ...]] = {}
    said = stated(text)  # what a reported clause states, of the person who said it
    who = subject(said) or ""
    name = who.split()[1] if who.startswith("name ") and len(who.split()) == 2 else ""
    for clause in clauses(said):
        words = set(clause)
        if "i" in words and words & NEGATIONS and words & {"relationship", "married", "dated"}:
            found.setdefault("marital", ("single",))  # "I have never had a relationship"
        if words & NEGATIONS:
            continue  # "I don't live in X" says where the user does not live
        if name and clause[:1] == (name,):
            # A named person's home and employer, read as the user's are ("Priya moved to
            # Manchester" / "Priya lives in Leeds"), kept under the name: not the user's.
            for key, value in _home_and_employer(clause, name):
                found.setdefault(f"{key}@{name}", value)
            continue
        first_person = clause[0] in ("i", "my", "me") or "i" in clause[:3] or "my" in clause[:3]
        if not first_person:
            continue
        age = _age(clause)
        if age is not None:
            found.setdefault("age", (age,))
        for key, value in _home_and_employer(clause, "i"):
            found.setdefault(key, value)
        named = _relation_name(clause)
        if named:
            found.setdefault(f"name:{named[0]}", named[1:])
        for i, word in enumerate(clause):
            if word in ("favorite", "favourite") and i + 1 < len(clause):
                thing = stem(clause[i + 1])
                if i + 2 < len(clause) and clause[i + 2] == "is":
                    value = _value(clause, i + 3)
                else:
                    value = _value(clause[: max(0, i - 2)], 0) if "is" in clause[:i] else ()
                if value:
                    found.setdefault(f"favorite:{thing}", value)
            if (
                word == "name"
                and clause[:1] == ("my",)
                and i == 1
                and i + 2 < len(clause)
                and clause[i + 1] == "is"
            ):
                found.setdefault("name", _value(clause, i + 2)[:1])
            if (
                word == "birthday"
                and "my" in clause[:i]
                and i + 2 < len(clause)
                and clause[i + 1] == "is"
            ):
                value = _value(clause, i + 2)
                if value:
                    found.setdefault("birthday", value)
        status = None
        if words & _MARRIED and ("my" in words or "i" in words):
            status = "married"
        if words & _ENGAGED or ("getting" in words and "married" in words):
            status = "engaged"
        if "i" in words and words & _SINGLE and "am" in words:
            status = "single"
        if status:
            found.setdefault("marital", (status,))
    return {k: v for k, v in found.items() if v}


def _relation_name(clause: tuple[str, ...]) -> tuple[str, ...]:
    """(relation, name) where a clause opens with one of the user's people or animals, named:
    "my wife's name is Ana", "my dog is called Rex". "My" names the one, as with the user's own
    name ("My son is called Leo" / "My son is called Max" disagree); not people one mostly
    has several of ("my colleague"), nor one introduced among others ("I have a cat named")."""
    if clause[:1] != ("my",) or len(clause) < 2 or clause[1] in MANY:
        return ()
    rest = clause[2:]
    if rest[:2] == ("name", "is") or (
        rest[:1] == ("is",) and rest[1:2] in (("called",), ("named",))
    ):
        value = _value(clause, 4)[:1]
        return (stem(clause[1]), *value) if value else ()
    return ()


def _home_and_employer(clause: tuple[str, ...], who: str) -> list[tuple[str, tuple[str, ...]]]:
    """Where `who` ("i", or a name) lives or works, as one clause states it."""
    found = []
    # Who works there: "I work at X", "my job at X", "a full-time job at X", "Priya works at
    # X"; not "my wife works at X" (someone else's job).
    workers = ("i", "my", "a", "full", "part") if who == "i" else (who,)
    for i, word in enumerate(clause):
        # Up to two words between: "I have been living in York", "Priya has just moved to".
        if word in _LIVE and who in clause[max(0, i - 3) : i]:
            # Every place after "in"/"near" ("live with my sister in X", "in X near Y"):
            # two homes disagree only when they share no place word.
            spots = [j for j in range(i + 1, len(clause)) if clause[j] in ("in", "near")]
            value = tuple(w for j in spots for w in _value(clause, j + 1))
            if value:
                found.append(("home", value))
        # A move to a named place states the new home: "I moved to Lisbon" against "I live
        # in Berlin"; not a move to "a bigger team" or "my parents' place".
        if (
            word in _MOVED
            and who in clause[max(0, i - 3) : i]
            and clause[i + 1 : i + 2] == ("to",)
            and clause[i + 2 : i + 3] not in ((), *((w,) for w in _NOT_A_PLACE))
        ):
            value = _value(clause, i + 2)
            if value:
                found.append(("home", value))
        if (
            word in ("work", "works", "job")
            and i + 1 < len(clause)
            and clause[i + 1] in ("at", "for")
            and (clause[i - 1] if i else "") in workers
        ):
            value = _value(clause, i + 2)
            if value:
                found.append(("employer", value))
    return found


def homes(text: Text) -> dict[str, tuple[str, ...]]:
    """{"home" or "home@<name>": place words}: the homes a fact states, by whose they are."""
    return {k: v for k, v in attributes(text).items() if k.split("@")[0] == "home"}


def attribute_conflicts(a: Text, b: Text) -> list[tuple[str, str, str]]:
    """(attribute, value of a, value of b) for every attribute both state differently."""
    from ankita.analysis._similarity import match_words

    out = []
    va, vb = attributes(a), attributes(b)
    for key in sorted(set(va) & set(vb)):
        x, y = va[key], vb[key]
        if key == "age":
            if not _matches_age(x[0], y[0]):
                out.append((key, x[0], y[0]))
        elif not match_words(x, y):
            out.append((key, " ".join(x), " ".join(y)))
    return out


@per_text
def attribute_keys(text: str) -> frozenset[str]:
    return frozenset(attributes(text))
