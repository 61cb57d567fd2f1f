"""The review page at `/`, end to end in Debian's Chromium driven by Playwright.

Set ANKITA_SCREENSHOT_DIR to a folder to save the conflicts view there (docs/ uses it).
"""

import os
import random
import re
import string
from pathlib import Path

import httpx
import pytest

from ankita import Memory
from ankita.dev._browser import CHROMIUM, CHROMIUM_ARGS
from ankita.server._guards import create_token
from ankita.server._server import create_app
from ankita.store._sqlite import SQLiteStore
from live import LiveServer

sync_api = pytest.importorskip("playwright.sync_api")
if not Path(CHROMIUM).exists():
    if os.environ.get("CI"):
        raise RuntimeError(f"{CHROMIUM} is missing: .ci/run installs Debian's chromium")
    pytest.skip(f"needs Debian's chromium at {CHROMIUM}", allow_module_level=True)


# A browser per module: the full suite runs these; the quick loop (-m "not slow") leaves them.
pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=list(CHROMIUM_ARGS))
        yield browser
        browser.close()


@pytest.fixture
def served(db_path):
    server = LiveServer(create_app(db_path, embedder="none", anonymous=True))
    yield server
    server.stop()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1100, "height": 800})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # Chromium logs every 401 as a console error; the page handles those by asking for a token.
    page.on(
        "console",
        lambda msg: (
            errors.append(msg.text)
            if msg.type == "error" and "status of 401" not in msg.text
            else None
        ),
    )
    yield page
    context.close()
    assert errors == [], f"the page logged errors: {errors}"


def token_for(db_path, user):
    store = SQLiteStore(db_path)
    try:
        return create_token(store, user)
    finally:
        store.close()


def sign_in(page, url, token):
    page.goto(url + "/")
    page.get_by_label("API token").fill(token)
    page.get_by_role("button", name="Use token").click()
    sync_api.expect(page.locator("#who")).to_have_text("memory of alice")


def test_resolve_a_conflict_by_clicking_then_undo_it(db_path, served, page):
    token = token_for(db_path, "alice")
    with httpx.Client(
        base_url=served.url, timeout=10, headers={"Authorization": f"Bearer {token}"}
    ) as api:
        old = api.post("/v1/facts", json={"text": "I live in Berlin", "kind": "location"}).json()
        new = api.post("/v1/facts", json={"text": "I live in Munich", "kind": "location"}).json()
    assert new["action"] == "conflict" and new["conflicts_with"] == [old["fact"]["id"]]
    berlin, munich = old["fact"]["id"], new["fact"]["id"]

    sign_in(page, served.url, token)
    page.locator("#nav-conflicts").click()
    pair = page.get_by_role("article", name="Conflict 1")
    # Older on the left, newer on the right, and the reason in plain words.
    sync_api.expect(pair.locator(".side.older .text")).to_have_text("I live in Berlin")
    sync_api.expect(pair.locator(".side.newer .text")).to_have_text("I live in Munich")
    sync_api.expect(pair.locator(".side.newer .side-label")).to_contain_text("Newer · last said")
    sync_api.expect(pair.locator(".reason")).to_contain_text(
        "you said “I live in Berlin”; later the same day, “I live in Munich”."
    )
    if os.environ.get("ANKITA_SCREENSHOT_DIR"):
        page.screenshot(
            path=str(Path(os.environ["ANKITA_SCREENSHOT_DIR"]) / "review.png"), full_page=True
        )

    pair.get_by_role("button", name="Keep this: I live in Munich").click()
    sync_api.expect(page.locator("#status")).to_contain_text("is superseded")
    sync_api.expect(page.locator("#conflicts-list")).to_have_text(
        "No conflicts. Nothing to settle."
    )

    with Memory(db_path, user="alice", embedder="none") as memory:
        assert memory.get(munich).status == "active"
        assert memory.get(berlin).status == "superseded"
        assert memory.conflicts() == []

    # The status line links to the superseded fact's history, told in words with the other
    # fact's text (never the fact's own id as its partner); undo the resolve from there.
    page.locator("#status").get_by_role("link", name="Undo from its history").click()
    sync_api.expect(page.locator("#fact-title")).to_have_text("Fact")
    history = page.locator("#history")
    sync_api.expect(history).to_contain_text("Flagged against “I live in Munich”")
    sync_api.expect(history).to_contain_text("Superseded: you kept “I live in Munich” instead")
    lines = history.locator("li > span:first-child").all_inner_texts()
    assert len(lines) == 3 and not any(berlin in line or munich in line for line in lines)
    undo = page.get_by_role("button", name=re.compile(r"Undo event \d+: Superseded"))
    undo.click()
    sync_api.expect(page.locator("#status")).to_contain_text("Undid resolve")
    sync_api.expect(page.locator("#conflict-count")).to_have_text("1")

    with Memory(db_path, user="alice", embedder="none") as memory:
        assert memory.get(munich).status == "active"
        assert memory.get(berlin).status == "active"
        assert [(c.a.id, c.b.id) for c in memory.conflicts()] == [tuple(sorted((berlin, munich)))]


def test_keep_both_clears_the_flag(db_path, served, page):
    with Memory(db_path, user="default", embedder="none") as memory:
        memory.remember("I love jazz")
        memory.remember("I hate jazz")
        assert len(memory.conflicts()) == 1
    page.goto(served.url + "/#conflicts")  # single-user mode: no token needed on loopback
    page.get_by_role("button", name="Keep both").click()
    sync_api.expect(page.locator("#status")).to_contain_text("Kept both")
    with Memory(db_path, user="default", embedder="none") as memory:
        assert memory.conflicts() == []
        assert [f.status for f in memory.list()] == ["active", "active"]


def test_possible_conflicts_are_shown_apart_and_promoted(db_path, served, page):
    with Memory(db_path, user="default", embedder="none") as memory:
        memory.remember("Leo does not like cats.")
        memory.remember("Leo feeds the neighbour's cat every morning.")
        assert memory.conflicts() == [] and len(memory.conflicts(possible=True)) == 1
    page.goto(served.url + "/#conflicts")
    sync_api.expect(page.locator("#conflicts-list")).to_contain_text("No conflicts")
    page.get_by_label("possible conflicts").check()
    sync_api.expect(page.locator("#conflicts-list .pair")).to_have_count(1)
    page.get_by_role("button", name="It is a conflict").click()
    sync_api.expect(page.locator("#status")).to_contain_text("Now a conflict")
    with Memory(db_path, user="default", embedder="none") as memory:
        assert len(memory.conflicts()) == 1 and memory.conflicts(possible=True) == []


def test_facts_table_searches_sorts_pins_edits_and_forgets(db_path, served, page):
    with Memory(db_path, user="default", embedder="none") as memory:
        tea = memory.remember("I drink green tea every morning", kind="preference").fact
        memory.remember("My sister lives in Lyon", kind="family")
        memory.remember("I use Postgres at work", kind="tool")
        memory.remember("I use Postgres at work", kind="tool")  # said twice
    page.goto(served.url + "/")
    rows = page.locator("#facts-list tr")
    sync_api.expect(rows).to_have_count(3)
    # The kind filter counts the whole store, not the rows shown.
    assert page.locator("#kind-filter option").all_inner_texts() == [
        "all kinds",
        "family (1)",
        "preference (1)",
        "tool (1)",
    ]

    page.get_by_label("Search").fill("LYON")
    sync_api.expect(rows).to_have_count(1)
    sync_api.expect(rows).to_contain_text("My sister lives in Lyon")
    page.get_by_label("Search").fill("")
    sync_api.expect(rows).to_have_count(3)

    page.get_by_role("button", name="Fact", exact=True).click()  # sort by text, A first
    sync_api.expect(rows.first.locator(".text")).to_have_text("I drink green tea every morning")
    sync_api.expect(page.locator('th[data-sort="text"]')).to_have_attribute(
        "aria-sort", "ascending"
    )
    page.get_by_role("button", name="Said", exact=True).click()  # most said first
    sync_api.expect(rows.first.locator(".text")).to_have_text("I use Postgres at work")

    page.get_by_role("button", name="Pin: I drink green tea every morning").click()
    sync_api.expect(page.locator(f'[data-id="{tea.id}"] .badge.pinned')).to_be_visible()
    sync_api.expect(rows.first).to_have_attribute("data-id", tea.id)  # pinned first
    page.get_by_label("Show").select_option("pinned")
    sync_api.expect(rows).to_have_count(1)
    page.get_by_label("Show").select_option("active")

    # Edit: a new write through the normal path, its decision shown.
    page.get_by_role("button", name="Edit: My sister lives in Lyon").click()
    sync_api.expect(page.locator("#add-text")).to_have_value("My sister lives in Lyon")
    page.locator("#add-text").fill("My sister lives in Paris")
    page.get_by_role("button", name="Save as a new write").click()
    sync_api.expect(page.locator("#add-result")).to_contain_text(
        "Stored “My sister lives in Paris” and flagged it against 1 fact"
    )
    sync_api.expect(page.locator("#conflict-count")).to_have_text("1")
    page.locator("#add-result").get_by_role("link", name="Settle it").click()
    sync_api.expect(page.get_by_role("article", name="Conflict 1")).to_contain_text(
        "My sister lives in Lyon"
    )
    page.locator("#nav-facts").click()

    # Forget asks first; Cancel (which has focus) changes nothing.
    page.get_by_role("button", name="Forget: I use Postgres at work").click()
    page.keyboard.press("Enter")
    sync_api.expect(rows).to_have_count(4)
    page.get_by_role("button", name="Forget: I use Postgres at work").click()
    page.get_by_role("dialog").get_by_role("button", name="Forget").click()
    sync_api.expect(rows).to_have_count(3)

    with Memory(db_path, user="default", embedder="none") as memory:
        assert memory.get(tea.id).pinned
        assert sorted(f.text for f in memory.list()) == [
            "I drink green tea every morning",
            "My sister lives in Lyon",
            "My sister lives in Paris",
        ]


def test_pages_of_facts_and_conflicts_with_totals_and_bulk_keep_newer(db_path, served, page):
    with Memory(db_path, user="default", embedder="none") as memory:
        rng = random.Random(7)
        word = lambda: "".join(rng.choice(string.ascii_lowercase) for _ in range(7))  # noqa: E731
        memory.import_rows([{"text": f"{word()} {word()} {word()} {word()}"} for _ in range(120)])
        notes = memory.count()
        assert memory.conflict_count() == 0
        pairs = []
        names = []
        for _ in range(25):
            names.append(word().capitalize())
            old = memory.remember(f"{names[-1]} meets us on Friday").fact
            new = memory.remember(f"{names[-1]} does not meet us on Friday").fact
            assert new.conflicts_with == (old.id,)
            pairs.append((old.id, new.id))
        assert memory.conflict_count() == 25
    total = notes + 50
    assert total == 170
    page.goto(served.url + "/")
    sync_api.expect(page.locator("#facts-summary")).to_have_text(f"{total} facts.")
    sync_api.expect(page.locator("#facts-page")).to_have_text(f"1–50 of {total}")
    sync_api.expect(page.locator("#facts-list tr")).to_have_count(50)
    page.get_by_role("button", name="Next page").click()
    sync_api.expect(page.locator("#facts-page")).to_have_text(f"51–100 of {total}")
    page.get_by_role("button", name="Next page").click()
    sync_api.expect(page.locator("#facts-page")).to_have_text(f"101–150 of {total}")
    page.get_by_role("button", name="Next page").click()
    sync_api.expect(page.locator("#facts-page")).to_have_text(f"151–{total} of {total}")
    sync_api.expect(page.locator("#facts-list tr")).to_have_count(total - 150)
    sync_api.expect(page.get_by_role("button", name="Next page")).to_be_disabled()

    # One request for a page of conflicts, however many pairs it shows.
    asked: list[str] = []
    page.on("request", lambda r: asked.append(r.url) if "/v1/" in r.url else None)
    page.locator("#nav-conflicts").click()
    sync_api.expect(page.locator("#conflicts-page")).to_have_text("1–20 of 25")
    sync_api.expect(page.locator("#conflicts-list .pair")).to_have_count(20)
    assert len([u for u in asked if "/v1/conflicts?" in u and "limit=20" in u]) == 1
    assert not [u for u in asked if "/history" in u]
    # Newest flag first.
    sync_api.expect(
        page.locator("#conflicts-list .pair").first.locator(".side.newer .text")
    ).to_have_text(f"{names[-1]} does not meet us on Friday")

    page.get_by_label("select all on this page").check()
    page.get_by_role("button", name="Keep newer for 20 selected").click()
    sync_api.expect(page.locator("#status")).to_contain_text("Kept the newer side of 20 pairs")
    sync_api.expect(page.locator("#conflict-count")).to_have_text("5")
    sync_api.expect(page.locator("#conflicts-list .pair")).to_have_count(5)
    with Memory(db_path, user="default", embedder="none") as memory:
        assert memory.conflict_count() == 5
        settled = [(memory.get(o).status, memory.get(n).status) for o, n in pairs[5:]]
        assert settled == [("superseded", "active")] * 20
        assert all(memory.get(o).status == "active" for o, _ in pairs[:5])


def test_a_conflict_badge_leads_to_its_pair(db_path, served, page):
    with Memory(db_path, user="default", embedder="none") as memory:
        memory.remember("I love jazz")
        jazz = memory.remember("I hate jazz").fact
        memory.remember("I drink tea")
        memory.remember("I do not drink tea")
    page.goto(served.url + "/")
    page.get_by_role("link", name="Conflicts of: I hate jazz").click()
    sync_api.expect(page).to_have_url(re.compile(f"#conflicts/{jazz.id}$"))
    cards = page.locator("#conflicts-list .pair")
    sync_api.expect(cards).to_have_count(1)
    sync_api.expect(cards).to_contain_text("I love jazz")
    sync_api.expect(page.locator("#conflicts-summary")).to_have_text("1 pair of this fact.")


def test_the_recall_preview_shows_the_facts_and_the_notice(db_path, served, page):
    with Memory(db_path, user="default", embedder="none") as memory:
        memory.remember("My sister lives in Lyon")
        memory.remember("My sister lives in Paris")
        memory.remember("I drink green tea", pinned=True)
    page.goto(served.url + "/#ask")
    page.get_by_label("Question").fill("where does my sister live?")
    page.get_by_role("button", name="Recall").click()
    items = page.locator("#ask-list li")
    sync_api.expect(items).to_have_count(3)
    sync_api.expect(page.locator("#ask-list")).to_contain_text("pinned")
    sync_api.expect(page.locator("#ask-notice")).to_contain_text("The companion would also be told")
    page.get_by_label("Question").fill("tea")
    page.get_by_role("button", name="Recall").click()
    sync_api.expect(page.locator("#ask-notice")).to_have_text(
        "No notice: nothing recalled disagrees."
    )


def test_forget_token_leaves_nothing_of_the_last_user(db_path, served, page):
    token = token_for(db_path, "alice")
    with Memory(db_path, user="alice", embedder="none") as memory:
        memory.remember("Alice keeps a secret diary", kind="secret")
        memory.remember("I love jazz")
        memory.remember("I hate jazz")
    sign_in(page, served.url, token)
    sync_api.expect(page.locator("#facts-list")).to_contain_text("secret diary")
    page.get_by_role("button", name="Forget token").click()
    sync_api.expect(page.get_by_label("API token")).to_be_visible()
    content = page.evaluate(
        "document.querySelector('main').textContent + document.querySelector('header').textContent"
    )
    assert "secret diary" not in content and "jazz" not in content
    assert page.locator("#kind-filter option").all_inner_texts() == ["all kinds"]
    assert page.locator("#conflict-count").inner_text() == ""


def test_page_is_usable_on_a_phone_and_by_keyboard(db_path, served, browser):
    with Memory(db_path, user="default", embedder="none") as memory:
        memory.remember("I prefer dark mode")
        memory.remember("I prefer light mode")
    context = browser.new_context(viewport={"width": 375, "height": 740}, is_mobile=True)
    page = context.new_page()
    page.goto(served.url + "/#conflicts")
    pair = page.get_by_role("article", name="Conflict 1")
    sync_api.expect(pair).to_be_visible()
    # Nothing wider than the screen: no sideways scrolling on a phone.
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    sides = pair.locator(".side")
    assert sides.nth(0).bounding_box()["y"] < sides.nth(1).bounding_box()["y"]  # stacked
    # The first choice can be made without scrolling.
    keep = pair.get_by_role("button", name="Keep this: I prefer dark mode")
    box = keep.bounding_box()
    assert box["y"] + box["height"] <= 740

    # Tab from the top reaches the skip link, then the views; Enter follows a link.
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    sync_api.expect(page.locator("#facts-title")).to_be_focused()
    # The facts table becomes one card a row: still nothing wider than the screen.
    sync_api.expect(page.locator("#facts-list tr")).to_have_count(2)
    assert page.evaluate("document.documentElement.scrollWidth") <= 375
    context.close()


def test_page_loads_nothing_from_elsewhere_and_sets_a_strict_policy(served, page):
    requested: list[str] = []
    page.on("request", lambda request: requested.append(request.url))
    response = page.goto(served.url + "/")
    sync_api.expect(page.locator("#facts-summary")).to_have_text("No facts yet.")
    assert all(url.startswith(served.url) for url in requested), requested
    policy = response.headers["content-security-policy"]
    assert "default-src 'none'" in policy and "script-src 'self'" in policy


def test_a_bad_token_is_refused_and_the_form_comes_back(db_path, served, page):
    token_for(db_path, "alice")  # once a token exists, every request needs one
    page.goto(served.url + "/")
    sync_api.expect(page.get_by_label("API token")).to_be_visible()
    page.get_by_label("API token").fill("ank_wrong")
    page.get_by_role("button", name="Use token").click()
    sync_api.expect(page.locator("#status")).to_contain_text("valid token")
    sync_api.expect(page.get_by_label("API token")).to_be_visible()


def test_settings_view_edits_the_personality_card(db_path, served, page):
    import json

    from ankita.companion._paths import persona_path

    page.goto(served.url + "/#settings")
    sync_api.expect(page.get_by_label("Name")).to_have_value("Ankita")
    page.get_by_label("Name").fill("Mira")
    page.get_by_label("Teasing").select_option("playful")
    page.get_by_label("Language").fill("German")
    page.get_by_role("button", name="Save").click()
    sync_api.expect(page.locator("#status")).to_contain_text("Saved Mira's personality.")
    card = json.loads(persona_path().read_text())
    assert card["data"]["name"] == "Mira"
    assert card["data"]["extensions"]["ankita"]["teasing"] == "playful"
    assert card["data"]["extensions"]["ankita"]["language"] == "German"
    assert card["data"]["mes_example"].startswith("<START>")  # fields not on the form kept


def test_tasks_view_shows_a_finished_run_without_reload(db_path, served, page):
    from ankita.companion._paths import tasks_db_path
    from ankita.companion.tasks._scheduler import Scheduler

    tasks = Scheduler(tasks_db_path(), lambda job: "Time to stretch!")
    job = tasks.add("stretch", "every 1h", "Remind me to stretch")
    page.goto(served.url + "/#tasks")
    sync_api.expect(page.locator("#tasks-list")).to_contain_text("stretch")
    sync_api.expect(page.locator("#runs-list li")).to_have_count(0)
    run = tasks.run_now(job.id)  # another process would do this: `ankita tasks run`
    # No reload: the page polls for new runs every second.
    sync_api.expect(page.locator(f'[data-run="{run.id}"]')).to_contain_text(
        "ok · Time to stretch!", timeout=5000
    )
    tasks.close()
