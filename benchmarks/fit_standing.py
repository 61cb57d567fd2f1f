"""Fit the weights that tell a sure conflict from a possible one, and judge them leaving one
source out at a time (docs/decisions.md, "Sure and possible conflicts").

    python benchmarks/fit_standing.py --pairs A.jsonl B.jsonl ... --locomo LABELS.jsonl
        [--multilingual] [--embedders local none] [--l2 1.0]

Each pair file is one source, each LoCoMo conversation one more, and the shipped multilingual
pairs one more with --multilingual; the flags of every embedder named are pooled (a source
is held out under all of them at once). Prints the fitted weights (paste them into
`analysis/_standing.py`), then per source how its flags fall with weights fitted on the
others, worst first, then the same with the full fit.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from ankita._memory import Memory
from ankita.analysis._standing import POSSIBLE_LINE, SURE_LINE
from ankita.dev._eval import builtin_multilingual_path, load_pairs
from ankita.dev._fit import fit, flagged_rows, leave_one_out, split, weights_table


def _line(name: str, s: dict) -> str:
    return (
        f"{name:<28} flags {s['flags']:>4} (real {s['real']:>3})  "
        f"sure {s['sure']:>4} (real {s['sure_real']:>3})  "
        f"possible {s['possible']:>4} (real {s['possible_real']:>3})  "
        f"dropped {s['dropped']:>4} (real {s['dropped_real']:>3})"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pairs", nargs="*", default=[])
    parser.add_argument("--locomo", help="LoCoMo labels: {conv, a, b, label} per line")
    parser.add_argument("--multilingual", action="store_true")
    parser.add_argument("--embedders", nargs="+", default=["local", "none"])
    parser.add_argument("--judge", default=None)
    parser.add_argument("--l2", type=float, default=1.0)
    parser.add_argument("--rows", help="write every flagged row here (JSONL)")
    args = parser.parse_args()
    sources: list[tuple[str, list[dict]]] = [(Path(p).stem, load_pairs(p)) for p in args.pairs]
    if args.locomo:
        by_conv: dict[str, list[dict]] = {}
        for line in Path(args.locomo).read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                by_conv.setdefault(row["conv"], []).append(row)
        sources += sorted(by_conv.items())
    if args.multilingual:
        sources.append(("multilingual", load_pairs(builtin_multilingual_path())))
    rows = []
    for embedder in args.embedders:
        with Memory(":memory:", embedder=embedder, judge=args.judge) as memory:
            for name, pairs in sources:
                found = flagged_rows(memory, pairs, name)
                print(
                    f"{embedder} {name}: {len(pairs)} pairs, {len(found)} flagged", file=sys.stderr
                )
                rows += found
    if args.rows:
        with open(args.rows, "w", encoding="utf-8") as out:
            for r in rows:
                out.write(json.dumps(r.__dict__) + "\n")
    lines = (SURE_LINE, POSSIBLE_LINE)
    weights = fit(rows, args.l2)
    print("weights:", ", ".join(f"{n} {w:+.3f}" for n, w in weights_table(weights)))
    print("WEIGHTS = (" + ", ".join(str(w) for w in weights) + ")")
    print(f"\nleave one source out (lines: sure {lines[0]}, possible {lines[1]}), worst first:")
    for name, s in leave_one_out(rows, lines, args.l2):
        print(_line(name, s))
    print("\nfitted on all:")
    for name in dict.fromkeys(r.source for r in rows):
        print(_line(name, split([r for r in rows if r.source == name], weights, lines)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
