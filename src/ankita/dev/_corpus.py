"""Facts to measure with: generated short facts of one user, generated long facts in the style
of a real memory stream (LoCoMo's observations), or a user's own corpus, in order."""

from __future__ import annotations

import random
from collections.abc import Iterator
from typing import Protocol

from ankita._errors import InvalidInput

_SYLLABLES = [
    "ka",
    "lo",
    "mi",
    "ra",
    "ten",
    "vo",
    "sun",
    "bel",
    "dor",
    "ia",
    "qu",
    "zen",
    "mar",
    "os",
    "ti",
    "fen",
    "gra",
    "lu",
    "pe",
    "sha",
    "wy",
    "no",
    "ber",
    "cal",
]
_NOUNS = [
    "coffee",
    "tea",
    "jazz",
    "blues",
    "chess",
    "climbing",
    "running",
    "sushi",
    "pizza",
    "dark mode",
    "light mode",
    "tabs",
    "spaces",
    "trains",
    "planes",
    "podcasts",
    "novels",
    "hiking",
    "yoga",
    "piano",
    "guitar",
    "cycling",
    "gardening",
    "baking",
    "painting",
]
# A few people hold a relation one has one of; the rest are people one has several of.
_SINGLE_RELATIONS = [
    "sister",
    "brother",
    "son",
    "daughter",
    "partner",
    "manager",
    "dentist",
    "mentor",
    "landlord",
]
_SEVERAL_RELATIONS = ["friend", "colleague", "neighbour", "cousin", "classmate"]
_DAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
_PAST_HOMES = 12  # places one has lived in, over a life


def _name(rng: random.Random, parts: int) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(parts)).capitalize()


def _names(rng: random.Random, parts: int, count: int, suffix: str = "") -> list[str]:
    """`count` different names: each stands for one person, place or thing."""
    seen: dict[str, None] = {}
    while len(seen) < count:
        # A longer name once the short ones run out, so no two things share a name.
        seen[_name(rng, parts + len(seen) // len(_SYLLABLES) ** parts) + suffix] = None
    return list(seen)


class FactGenerator:
    """One user's facts over years: people, places, tools and projects whose number grows with
    the store, each with attributes that stay put (a person's relation, home and age; a
    project's database, version and deadline), so a fresh fact mostly adds to what is known or
    restates it. Repeats (merges), changed values of earlier facts (mostly conflicts) and
    stated changes or negations are mixed in at fixed rates (8%, 6%, 4%), so conflicts do not
    grow denser as the store grows."""

    def __init__(self, seed: int, size: int) -> None:
        r = self.rng = random.Random(seed)
        # About one person, place and project per four facts: most fresh facts are new.
        width = max(50, size // 4)
        self.places = _names(r, 3, width, "burg")
        self.people = _names(r, 3, width)
        self.tools = _names(r, 2, width // 2, "DB")
        self.topics = _names(r, 3, width)
        self.relation = {
            p: _SINGLE_RELATIONS[i] if i < len(_SINGLE_RELATIONS) else r.choice(_SEVERAL_RELATIONS)
            for i, p in enumerate(self.people)
        }
        self.home = {p: r.choice(self.places) for p in self.people}
        self.age = {p: r.randint(18, 90) for p in self.people}
        self.database = {t: r.choice(self.tools) for t in self.topics}
        self.version = {t: r.randint(1, 20) for t in self.topics}
        self.deadline = {t: r.choice(_DAYS) for t in self.topics}
        self.lived = {p: r.randint(2, 15) for p in self.places[:_PAST_HOMES]}
        self.practice = {n: (r.randint(2, 9), r.choice(self.places)) for n in _NOUNS}
        self.history: list[tuple[str, str]] = []

    def _fresh(self) -> tuple[str, str]:
        r = self.rng
        person, topic, noun = r.choice(self.people), r.choice(self.topics), r.choice(_NOUNS)
        relation, tool = self.relation[person], self.database[topic]
        lived = r.choice(list(self.lived))
        times, where = self.practice[noun]
        other = r.choice([n for n in _NOUNS if n != noun])
        options = [
            ("location", f"My {relation} {person} lives in {self.home[person]}"),
            ("location", f"I lived in {lived} for {self.lived[lived]} years"),
            ("relationship", f"My {relation} is called {person}"),
            ("relationship", f"{person} is my {relation}"),
            ("tool", f"I use {tool} for the {topic} project"),
            ("tool", f"The {topic} service stores its data in {tool}"),
            ("preference", f"I like {noun} with {person}"),
            ("preference", f"{person} prefers {noun} over {other}"),
            ("habit", f"I go {noun} with {person} on {r.choice(_DAYS)}s"),
            ("habit", f"I practise {noun} {times} times a week in {where}"),
            ("work", f"I work on {topic} with {person}"),
            ("work", f"The {topic} deadline is {self.deadline[topic]}"),
            ("project", f"The {topic} release uses {tool} version {self.version[topic]}"),
            ("health", f"{person} is allergic to {noun}"),
            ("identity", f"{person} is {self.age[person]} years old"),
        ]
        kind, text = r.choice(options)
        return text, kind

    def _polar(self) -> tuple[str, str]:
        """A stated change or a negation ("moved to", "no longer", "not") about one person or
        project, so its conflicts stay few. With vectors it is the costly case: it may meet any
        close fact of its kind."""
        r = self.rng
        person, topic, noun = r.choice(self.people), r.choice(self.topics), r.choice(_NOUNS)
        options = [
            ("location", f"My {self.relation[person]} {person} moved to {r.choice(self.places)}"),
            ("tool", f"The {topic} service switched to {r.choice(self.tools)}"),
            ("preference", f"I no longer like {noun} with {person}"),
            ("preference", f"{person} does not like {noun}"),
            ("habit", f"I stopped going {noun} with {person}"),
            ("work", f"I quit working on {topic}"),
            ("health", f"{person} is not allergic to {noun}"),
        ]
        kind, text = r.choice(options)
        return text, kind

    def next(self) -> tuple[str, str]:
        roll = self.rng.random()
        if self.history and roll < 0.08:  # a repeat: must merge
            return self.rng.choice(self.history)
        if self.history and roll < 0.14:  # a changed value: usually a conflict
            text, kind = self.rng.choice(self.history)
            words = text.split()
            i = self.rng.randrange(len(words))
            words[i] = self.rng.choice(self.places + self.people)
            return " ".join(words), kind
        fact = self._polar() if roll < 0.18 else self._fresh()
        self.history.append(fact)
        return fact


class Facts(Protocol):
    def next(self) -> tuple[str, str]: ...


# Pools for long third-person facts like a real stream's: one person's many related doings,
# feelings and plans, several clauses each; a few people; contradictions rare.
_EVENTS = [
    "a pride parade",
    "a support group",
    "a pottery class",
    "a charity run",
    "a school event",
    "a concert",
    "a family reunion",
    "a camping trip",
    "a book club",
    "a dance competition",
    "a job fair",
    "a volunteering day",
    "a yoga retreat",
    "a cooking class",
    "an art show",
    "a museum tour",
    "a hiking trip",
    "a road trip",
    "a fundraiser",
    "a wedding",
    "a workshop on mental health",
    "a farmers market",
    "a beach day",
    "a music festival",
    "a community meeting",
    "a game night",
]
_ACTIVITIES = [
    "painting",
    "running",
    "pottery",
    "volunteering at the shelter",
    "swimming",
    "playing the violin",
    "reading novels",
    "baking bread",
    "gardening",
    "hiking",
    "dancing",
    "writing poems",
    "learning the piano",
    "cycling to work",
    "yoga",
    "photography",
    "coaching the kids' team",
    "mentoring students",
    "knitting",
    "playing chess",
    "camping with the family",
    "going to the gym",
    "meditating",
    "learning Spanish",
    "restoring old furniture",
    "birdwatching",
]
_FEELINGS = [
    "accepted",
    "proud",
    "relaxed",
    "inspired",
    "grateful",
    "overwhelmed",
    "happy",
    "nervous but excited",
    "at peace",
    "motivated",
    "connected to others",
    "tired",
    "hopeful",
    "free",
    "supported",
    "creative",
    "calm",
    "curious",
    "fulfilled",
]
_WHEN = [
    "last week",
    "last weekend",
    "yesterday",
    "two weeks ago",
    "last month",
    "a few days ago",
    "in the spring",
    "over the summer",
    "on Sunday",
    "last year",
    "before the conversation",
    "recently",
    "three years ago",
    "on her birthday",
]
_REASONS = [
    "to support the community",
    "because it helps with stress",
    "to spend more time with the kids",
    "as a way to express herself",
    "to make a difference",
    "because a friend recommended it",
    "to stay healthy",
    "to meet new people",
    "after a tough year",
    "to honour a family tradition",
    "to learn something new",
    "because it reminds him of childhood",
]
_VALUES = [
    "friendship",
    "family time",
    "honesty",
    "creativity",
    "self-care",
    "kindness",
    "courage",
    "community",
    "learning",
    "nature",
]
_PLANS = [
    "open a small studio",
    "adopt a child",
    "run a marathon",
    "go back to school",
    "start a podcast",
    "travel to Japan",
    "write a memoir",
    "move closer to family",
    "volunteer abroad",
    "launch an online store",
    "learn to sail",
]
_FUTURE = [
    "next month",
    "next year",
    "this summer",
    "after the holidays",
    "soon",
    "within two years",
]
_REL = [
    "sister",
    "brother",
    "mother",
    "father",
    "son",
    "daughter",
    "husband",
    "wife",
    "best friend",
    "mentor",
    "neighbour",
    "grandmother",
]
_ADJ = [
    "inspiring",
    "moving",
    "fun",
    "hard but worth it",
    "beautiful",
    "exhausting",
    "meaningful",
    "surprising",
    "relaxing",
    "special",
]


class RealStyleGenerator:
    """Long facts of a few people, in the style of a real memory stream: what each did, felt,
    values and plans, in one or two clauses. Repeats (8%), a changed time or feeling of an
    earlier fact (6%) and stated starts and stops (4%) are mixed in."""

    def __init__(self, seed: int, size: int) -> None:
        r = self.rng = random.Random(seed)
        self.people = _names(r, 2, max(4, size // 100))
        self.history: list[tuple[str, str]] = []

    def _fresh(self) -> str:
        r = self.rng
        p, q = r.sample(self.people, 2)
        options = [
            f"{p} went to {r.choice(_EVENTS)} {r.choice(_WHEN)} and felt {r.choice(_FEELINGS)}.",
            f"{p} is {r.choice(_ACTIVITIES)} {r.choice(_REASONS)}.",
            f"{p} values {r.choice(_VALUES)} and finds {r.choice(_ACTIVITIES)} {r.choice(_ADJ)}.",
            f"{p}'s {r.choice(_REL)} took up {r.choice(_ACTIVITIES)} {r.choice(_WHEN)}, which "
            f"{q} found {r.choice(_ADJ)}.",
            f"{p} plans to {r.choice(_PLANS)} {r.choice(_FUTURE)} {r.choice(_REASONS)}.",
            f"{p} has been {r.choice(_ACTIVITIES)} for {r.randint(2, 15)} years and feels "
            f"{r.choice(_FEELINGS)} doing it.",
            f"{p} shared a photo from {r.choice(_EVENTS)} {r.choice(_WHEN)} with {q}.",
            f"{p} told {q} that {r.choice(_ACTIVITIES)} makes them feel {r.choice(_FEELINGS)}.",
        ]
        return r.choice(options)

    def _polar(self) -> str:
        r = self.rng
        p = r.choice(self.people)
        return r.choice(
            [
                f"{p} started {r.choice(_ACTIVITIES)} {r.choice(_WHEN)}.",
                f"{p} stopped {r.choice(_ACTIVITIES)} because of an injury.",
                f"{p} no longer enjoys {r.choice(_ACTIVITIES)}.",
            ]
        )

    def next(self) -> tuple[str, str]:
        r = self.rng
        roll = r.random()
        if self.history and roll < 0.08:
            return r.choice(self.history)
        if self.history and roll < 0.14:
            text, kind = r.choice(self.history)
            for pool in (_WHEN, _FEELINGS):
                for old in pool:
                    if old in text:
                        return text.replace(old, r.choice([x for x in pool if x != old]), 1), kind
        fact = (self._polar() if roll < 0.18 else self._fresh(), "fact")
        self.history.append(fact)
        return fact


class CorpusFacts:
    """A user's own facts, in file order (`_stream.load_streams`: LoCoMo JSON or JSONL)."""

    def __init__(self, path: str, needed: int) -> None:
        self._texts: Iterator[str] = iter(corpus_texts(path, needed))

    def next(self) -> tuple[str, str]:
        return next(self._texts), "fact"


def corpus_texts(path: str, needed: int) -> list[str]:
    """The facts of a corpus file, refused if there are fewer than `needed`."""
    from ankita.dev._stream import load_streams

    texts = [text for stream in load_streams(path) for text, _ in stream.facts]
    if len(texts) < needed:
        raise InvalidInput(
            f"{path} holds {len(texts)} facts; this bench needs {needed} (the largest size "
            "and three times --writes): use smaller --facts or --writes"
        )
    return texts


STYLES = ("short", "real")


def make_facts(
    style: str, seed: int, size: int, corpus: str | None = None, needed: int = 0
) -> Facts:
    """The facts a bench run writes: a corpus if given, else generated in `style`."""
    if corpus is not None:
        return CorpusFacts(corpus, needed)
    if style == "real":
        return RealStyleGenerator(seed, size)
    if style == "short":
        return FactGenerator(seed, size)
    raise InvalidInput(f"style must be one of {', '.join(STYLES)}")
