"""Generated personal facts with shared vocabulary, for scale tests and `ankita bench`-like runs.

The mix is deliberate: repeats and paraphrases (merges), one value swapped (conflicts), negation,
numbers, opposites, change of state and compatible neighbours.
"""

from __future__ import annotations

import random

SUBJECTS = ["I", "My sister", "My brother", "My manager", "My partner", "My best friend"]
PLACES = ["Berlin", "Munich", "Lyon", "Lisbon", "Kyoto", "Prague", "Vienna", "Toronto"]
THINGS = [
    "Postgres",
    "SQLite",
    "Neovim",
    "Emacs",
    "jazz",
    "blues",
    "green tea",
    "coffee",
    "dark mode",
    "light mode",
    "Rust",
    "Python",
    "chess",
    "climbing",
    "sushi",
    "pizza",
]
NAMES = ["Leo", "Max", "Ines", "Clara", "Sam", "Alex", "Miso", "Tofu"]
DAYS = ["Monday", "Tuesday", "Friday", "Saturday", "Sunday"]
RELATIONS = ["son", "daughter", "cat", "dog", "partner", "manager"]


def fact(rng: random.Random) -> tuple[str, str]:
    s, p, t, n = (rng.choice(SUBJECTS), rng.choice(PLACES), rng.choice(THINGS), rng.choice(NAMES))
    templates = [
        ("location", f"{s} lives in {p}"),
        ("location", f"{s} moved to {p}"),
        ("location", f"{s} is living in {p}"),
        ("preference", f"{s} likes {t}"),
        ("preference", f"{s} prefers {t} over {rng.choice(THINGS)}"),
        ("preference", f"{s} loves {t}"),
        ("preference", f"{s} hates {t}"),
        ("preference", f"{s} doesn't like {t}"),
        ("tool", f"I use {t} at work"),
        ("tool", f"I switched from {t} to {rng.choice(THINGS)}"),
        ("tool", f"I stopped using {t}"),
        ("relationship", f"My {rng.choice(RELATIONS)} is called {n}"),
        ("relationship", f"{n} is my {rng.choice(RELATIONS)}'s name"),
        ("identity", f"I'm {rng.randint(20, 60)}"),
        ("identity", f"I am {rng.randint(20, 60)} years old"),
        ("habit", f"I go climbing on {rng.choice(DAYS)}s"),
        ("habit", f"I drink {t} every morning"),
        ("habit", f"I run {rng.randint(2, 12)} km every {rng.choice(DAYS)}"),
        ("work", f"{s} works at {rng.choice(['Spotify', 'Deezer', 'a bakery', 'the museum'])}"),
        ("work", f"{s} no longer works at {rng.choice(['Spotify', 'Deezer', 'a bakery'])}"),
        # Named subjects, sentence-initial words, acronyms and names with an opposite.
        ("relationship", f"{n} is {rng.randint(20, 60)} years old"),
        ("relationship", f"{n} lives in {p}"),
        ("relationship", f"{n} doesn't live in {p} anymore"),
        ("relationship", f"{n} {rng.choice(['loves', 'hates'])} {t}"),
        ("location", f"I lived in {p} for {rng.randint(2, 9)} years"),
        # Named changes, which meet each other only through a name (`_index.Field.NAME_BOUND`).
        ("location", f"My {rng.choice(['friend', 'sister'])} {n} moved to {p}"),
        (
            "location",
            f"I'm {rng.choice(['', 'not '])}moving to the "
            f"{rng.choice(['United Kingdom', 'UK', 'USA', 'United States'])}",
        ),
        ("preference", f"{rng.choice(['Dark', 'Light'])} mode is what {n} prefers"),
        ("habit", f"{t.capitalize()} is what I drink on {rng.choice(DAYS)}s"),
        ("habit", f"{n} drinks {t.lower()} on {rng.choice(DAYS)}s"),
        ("tool", f"I drive a {rng.choice(['Toyota', 'Honda', 'Volvo'])}"),
        ("tool", f"I switched to driving a {rng.choice(['Toyota', 'Honda', 'Volvo'])}"),
        # The user's own facts that name a person other facts are about.
        ("location", f"I moved in with my {rng.choice(['sister', 'brother', 'partner'])}"),
        ("location", f"I no longer live with my {rng.choice(['sister', 'manager'])} in {p}"),
        # Chat turns of several clauses, each of which may decide alone.
        ("preference", f"Oh nice, {s.lower() if s != 'I' else s} loves {t}"),
        ("preference", f"I like {t}, but I don't like {rng.choice(THINGS)}"),
        ("habit", f"Ha. I drink {t} every morning and I hate {rng.choice(THINGS)}!"),
        ("tool", f"Sure, I stopped using {t} because it was slow"),
        ("preference", f"{n} hates {t}. I never liked it either"),
    ]
    kind, text = rng.choice(templates)
    return text, kind


def facts(n: int, seed: int) -> list[tuple[str, str]]:
    rng = random.Random(seed)
    return [fact(rng) for _ in range(n)]
