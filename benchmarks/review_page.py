"""The review page on a real-sized memory, in Debian's chromium: first paint and each action.

Builds a store with `ankita import` (by default 10,000 facts of which 1,000 make 500 flagged
pairs), serves it with `ankita serve`, and drives the page with Playwright. Each figure is the
median of `--repeat` runs, in ms, beside a reference measured in the same run: the same page
on an empty store. Prints JSON.

    python benchmarks/review_page.py [--facts 10000] [--conflicts 500] [--repeat 3]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import statistics
import string
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from _served import serve

from ankita.dev._browser import CHROMIUM, CHROMIUM_ARGS


def facts_file(folder: Path, facts: int, conflicts: int, seed: int = 1) -> Path:
    """Unrelated facts of random words, then `conflicts` pairs a person's fact and its denial."""
    rng = random.Random(seed)

    def word() -> str:
        return "".join(rng.choice(string.ascii_lowercase) for _ in range(7))

    lines = [
        {
            "text": f"{word()} {word()} {word()} {word()}",
            "kind": rng.choice(["fact", "preference", "tool", "place", "person"]),
        }
        for _ in range(facts - 2 * conflicts)
    ]
    for _ in range(conflicts):
        name = word().capitalize()
        lines.append({"text": f"{name} meets us on Friday"})
        lines.append({"text": f"{name} does not meet us on Friday"})
    path = folder / "facts.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def timed(action: Callable[[], None]) -> float:
    started = time.perf_counter()
    action()
    return 1000 * (time.perf_counter() - started)


def measure(page, base: str, full: bool) -> dict[str, float]:  # type: ignore[no-untyped-def]
    from playwright.sync_api import expect

    out: dict[str, float] = {}
    rows = page.locator("#facts-list tr")
    summary = page.locator("#facts-summary")

    def first_paint() -> None:
        page.goto(base + "/")
        expect(summary).not_to_have_text("")

    out["first_paint"] = timed(first_paint)
    if not full:
        return out
    page_line = page.locator("#facts-page")

    def next_page() -> None:
        before = page_line.inner_text()
        page.get_by_role("button", name="Next page").first.click()
        expect(page_line).not_to_have_text(before)

    out["next_page"] = timed(next_page)

    def sort() -> None:
        page.get_by_role("button", name="Fact", exact=True).click()
        expect(page.locator('th[data-sort="text"][aria-sort]')).to_have_count(1)

    out["sort_by_text"] = timed(sort)

    def search() -> None:
        page.get_by_label("Search").fill("friday")
        page.get_by_label("Search").press("Enter")
        expect(summary).to_contain_text("match")

    out["search"] = timed(search)
    page.get_by_label("Search").fill("")

    def pin() -> None:
        button = rows.get_by_role("button", name=re.compile("^Pin: ")).first
        label = button.get_attribute("aria-label") or ""
        button.click()
        expect(page.get_by_role("button", name="Unpin" + label[3:], exact=True)).to_have_count(1)
        expect(page.locator("#status")).to_contain_text("Pinned")

    out["pin"] = timed(pin)

    def conflicts() -> None:
        page.locator("#nav-conflicts").click()
        expect(page.locator("#conflicts-list .pair")).to_have_count(20)

    out["open_conflicts"] = timed(conflicts)

    # An action is done when its message is shown: the page says it after drawing anew.
    status = page.locator("#status")

    def keep_this() -> None:
        page.locator("#conflicts-list .pair").first.get_by_role(
            "button", name="Keep this:"
        ).first.click()
        expect(status).to_contain_text("is superseded")

    out["keep_this"] = timed(keep_this)

    def bulk() -> None:
        page.get_by_label("select all on this page").check()
        page.get_by_role("button", name="Keep newer for 20 selected").click()
        expect(status).to_contain_text("Kept the newer side of 20 pairs")

    out["keep_newer_20"] = timed(bulk)

    def ask() -> None:
        page.locator("#nav-ask").click()
        page.get_by_label("Question").fill("who meets us on Friday?")
        page.get_by_role("button", name="Recall").click()
        expect(page.locator("#ask-notice")).not_to_have_text("")

    out["recall_preview"] = timed(ask)
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--conflicts", type=int, default=500)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    if args.conflicts < 21:
        # One pair is resolved before the bulk action, which then needs a full page of 20.
        parser.error("--conflicts must be at least 21: the bulk action keeps 20 after one")
    from playwright.sync_api import sync_playwright

    folder = Path(tempfile.mkdtemp(prefix="ankita-review-"))
    db, empty = str(folder / "big.db"), str(folder / "empty.db")
    source = facts_file(folder, args.facts, args.conflicts)
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "ankita", "--db", db, "--embedder", "none", "import", str(source)],
        check=True,
        capture_output=True,
    )
    built = time.perf_counter() - started
    runs: dict[str, list[float]] = {}
    reference: list[float] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        for _ in range(args.repeat):
            for path, full in ((empty, False), (db, True)):
                server, base = serve(path)
                try:
                    context = browser.new_context(viewport={"width": 1100, "height": 800})
                    figures = measure(context.new_page(), base, full)
                    context.close()
                finally:
                    server.terminate()
                    server.wait(10)
                if full:
                    for key, value in figures.items():
                        runs.setdefault(key, []).append(value)
                else:
                    reference.append(figures["first_paint"])
        browser.close()
    print(
        json.dumps(
            {
                "facts": args.facts,
                "conflicts": args.conflicts,
                "repeat": args.repeat,
                "import_s": round(built, 1),
                "reference_first_paint_empty_store_ms": round(statistics.median(reference), 1),
                "median_ms": {k: round(statistics.median(v), 1) for k, v in runs.items()},
                "max_ms": {k: round(max(v), 1) for k, v in runs.items()},
            },
            indent=2,
        )
    )


if __name__ == "__main__":
    main()
