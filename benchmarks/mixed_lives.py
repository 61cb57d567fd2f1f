"""Two lives under one name: a probe of conflicts on text nobody tuned on, with no labels.

Each pair of LoCoMo conversations (A, B) is written as one stream: A's observations in order,
then B's with B's two speakers renamed to A's. Every link between a fact of A's life and a fact
of B's is between two facts that were never said of one person, so each is read by hand: a
sure conflict there is either two lives disagreeing on one single-valued thing (where a flag
is right) or a false one. Links inside one life are the conversation's own.

    python benchmarks/mixed_lives.py DEV/locomo/locomo_dev.json --pairs 0:2 1:3 --embedder none
"""

from __future__ import annotations

import argparse
import json
import re
import tempfile
from pathlib import Path

from ankita import Memory


def observations(conv: dict) -> list[str]:
    """A conversation's observation facts in session order, as `ankita eval --stream` reads."""
    sessions = conv["observation"]
    out = []
    for key in sorted(sessions, key=lambda k: int(re.search(r"\d+", k).group())):
        for items in sessions[key].values():
            out += [item[0].strip() for item in items if item and item[0].strip()]
    return out


def renamed(text: str, names: dict[str, str]) -> str:
    for old, new in names.items():
        text = re.sub(rf"\b{re.escape(old)}\b", new, text)
    return text


def mix(data: list[dict], a: int, b: int, embedder: str, show: bool) -> dict[str, float]:
    speakers = [(c["conversation"]["speaker_a"], c["conversation"]["speaker_b"]) for c in data]
    names = dict(zip(speakers[b], speakers[a], strict=True))
    lives = [(t, "A") for t in observations(data[a])]
    lives += [(renamed(t, names), "B") for t in observations(data[b])]
    life: dict[str, str] = {}
    counts = {"facts": len(lives), "sure across": 0, "possible across": 0, "merges across": 0}
    with tempfile.TemporaryDirectory() as tmp:
        with Memory(Path(tmp) / "mixed.db", embedder=embedder) as memory:
            for text, side in lives:
                result = memory.remember(text)
                if result.merged_into:
                    if life.get(result.merged_into) not in (None, side):
                        counts["merges across"] += 1
                        if show:
                            print(f"merge    | {memory.get(result.merged_into).text} | {text}")
                    continue
                life[result.fact.id] = side
                for kind, ids in (
                    ("sure", result.conflicts_with),
                    ("possible", result.possible_conflicts),
                ):
                    for other in ids:
                        if life.get(other) != side:
                            counts[f"{kind} across"] += 1
                            if show:
                                print(f"{kind:8} | {memory.get(other).text} | {text}")
    per_1k = {k: round(1000 * v / len(lives), 1) for k, v in counts.items() if k != "facts"}
    return {"facts": len(lives), **counts, **{f"{k} per 1k": v for k, v in per_1k.items()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("locomo", help="LoCoMo JSON (its `observation` per conversation)")
    parser.add_argument("--pairs", nargs="+", default=["0:2", "1:3"], help="A:B indices")
    parser.add_argument("--embedder", default="local")
    parser.add_argument("--show", action="store_true", help="list every link across lives")
    args = parser.parse_args()
    data = json.loads(Path(args.locomo).read_text(encoding="utf-8"))
    for pair in args.pairs:
        a, b = (int(x) for x in pair.split(":"))
        print(json.dumps({"pair": pair, **mix(data, a, b, args.embedder, args.show)}))


if __name__ == "__main__":
    main()
