"""What the review page reads and writes, on both backends and over loopback HTTP: pages with
totals, sort orders and filters, kind counts, conflicts newest first and in plain words, keeping
the newer side of many pairs, and history told with the facts' texts."""

import httpx
import pytest

from ankita import InvalidInput, NotFound
from ankita.server._guards import create_token
from ankita.server._server import create_app
from ankita.store._open import open_store
from live import LiveServer


def conflict_pair(memory, name, clock):
    old = memory.remember(f"{name} meets us on Friday").fact
    clock.advance(days=1)
    new = memory.remember(f"{name} does not meet us on Friday").fact
    assert new.conflicts_with == (old.id,)
    return old, new


def test_a_page_of_facts_with_its_total_order_and_filters(memory, clock):
    for text, kind in [
        ("Zebras live in Kenya", "place"),
        ("apples grow on trees", "fact"),
        ("Mango season is in May", "fact"),
    ]:
        memory.remember(text, kind=kind)
        clock.advance(hours=1)
    memory.remember("apples grow on trees")  # said twice
    pinned = memory.remember("I use Postgres", kind="tool", pinned=True).fact
    texts = lambda facts: [f.text for f in facts]  # noqa: E731
    assert texts(memory.list(order="text")) == [
        "apples grow on trees",
        "I use Postgres",
        "Mango season is in May",
        "Zebras live in Kenya",
    ]  # case does not sort capitals first
    assert texts(memory.list(order="mentions", descending=True))[0] == "apples grow on trees"
    assert texts(memory.list(order="text", pinned_first=True))[0] == "I use Postgres"
    assert texts(memory.list(limit=2, offset=1)) == [
        "apples grow on trees",
        "Mango season is in May",
    ]
    assert memory.count() == 4 and memory.count(kind="fact") == 2
    assert memory.count(only="pinned") == 1 == len(memory.list(only="pinned"))
    assert memory.list(only="pinned")[0].id == pinned.id
    assert memory.kinds() == {"fact": 2, "place": 1, "tool": 1}
    with pytest.raises(InvalidInput, match="order must be one of"):
        memory.list(order="text; DROP TABLE facts")
    with pytest.raises(InvalidInput, match="only must be"):
        memory.list(only="everything")
    assert memory.count() == 4


def test_conflicts_newest_first_in_plain_words_and_of_one_fact(memory, clock):
    first = conflict_pair(memory, "Ottoline", clock)
    clock.advance(days=1)
    second = conflict_pair(memory, "Barnaby", clock)
    assert memory.count(only="conflicting") == 4
    pairs = memory.conflicts()
    assert [{p.a.id, p.b.id} for p in pairs] == [{f.id for f in second}, {f.id for f in first}]
    top = pairs[0].to_dict()
    assert top["newer"] == second[1].id and top["older"] == second[0].id
    assert top["explanation"] == (
        f"On {second[0].created_at[:10]} you said “Barnaby meets us on Friday”; later, on "
        f"{second[1].created_at[:10]}, “Barnaby does not meet us on Friday”. One says the "
        "opposite of the other."
    )
    assert [p.b.id for p in memory.conflicts(limit=1, offset=1)] in ([first[0].id], [first[1].id])
    only_first = memory.conflicts(fact=first[0].id)
    assert len(only_first) == 1 == memory.conflict_count(fact=first[0].id)
    assert memory.conflict_count() == 2


def test_keep_newer_settles_each_pair_or_none(memory, clock):
    a = conflict_pair(memory, "Ottoline", clock)
    b = conflict_pair(memory, "Barnaby", clock)
    # A pair that is not flagged: nothing at all changes.
    with pytest.raises(NotFound):
        memory.keep_newer([(a[0].id, a[1].id), (a[0].id, b[1].id)])
    assert memory.conflict_count() == 2
    assert all(memory.get(f.id).status == "active" for f in (*a, *b))
    with pytest.raises(InvalidInput):
        memory.keep_newer([])
    kept = memory.keep_newer([(a[0].id, a[1].id), (b[1].id, b[0].id)])
    assert [f.id for f in kept] == [a[1].id, b[1].id]
    assert memory.conflict_count() == 0
    assert [memory.get(f.id).status for f in (*a, *b)] == ["superseded", "active"] * 2
    # Each pair is its own operation: undoing one leaves the other settled.
    resolve = [e for e in memory.history(a[0].id) if e.type == "resolve"][0]
    memory.undo(resolve.id)
    assert memory.get(a[0].id).status == "active"
    assert memory.get(b[0].id).status == "superseded"


def test_keep_newer_refuses_a_fact_kept_in_one_pair_and_dropped_in_another(memory, clock):
    jazz = memory.remember("I live in Berlin").fact
    clock.advance(days=1)
    hate = memory.remember("I live in Munich").fact
    clock.advance(days=1)
    love_again = memory.remember("I live in Paris").fact
    pairs = [(p.a.id, p.b.id) for p in memory.conflicts()]
    assert len(pairs) == 3
    with pytest.raises(InvalidInput, match="settle those pairs one at a time"):
        memory.keep_newer(pairs)
    assert {memory.get(f.id).status for f in (jazz, hate, love_again)} == {"active"}


def test_history_pages_and_words(memory, clock):
    old, new = conflict_pair(memory, "Ottoline", clock)
    memory.resolve(keep=new.id, over=old.id)
    for _ in range(3):
        memory.remember("Ottoline does not meet us on Friday")
    assert memory.history_count(new.id) == 6
    newest = memory.history(new.id, limit=2, newest_first=True)
    assert [e.type for e in newest] == ["merge", "merge"]
    assert [e.type for e in memory.history(new.id, limit=2, offset=4, newest_first=True)] == [
        "link",
        "create",
    ]
    with pytest.raises(NotFound):
        memory.history("0123456789abcdef")


@pytest.fixture
def alice(db):
    store = open_store(db)
    token = create_token(store, "alice")
    store.close()
    server = LiveServer(create_app(db, embedder="none", anonymous=True))
    with httpx.Client(
        base_url=server.url, timeout=10, headers={"Authorization": f"Bearer {token}"}
    ) as client:
        yield client
    server.stop()


def test_the_review_routes_over_http(alice):
    for text in (
        "Ottoline meets us on Friday",
        "Ottoline does not meet us on Friday",
        "I use Postgres",
        "I drink tea",
    ):
        assert alice.post("/v1/facts", json={"text": text}).status_code == 200
    page = alice.get("/v1/facts", params={"limit": 2, "offset": 1, "sort": "text"})
    assert page.headers["X-Total-Count"] == "4"
    assert [f["text"] for f in page.json()] == [
        "I use Postgres",
        "Ottoline does not meet us on Friday",
    ]
    conflicting = alice.get("/v1/facts", params={"only": "conflicting"})
    assert conflicting.headers["X-Total-Count"] == "2"
    assert alice.get("/v1/kinds").json() == {"fact": 4}
    bad = alice.get("/v1/facts", params={"sort": "id; --"})
    assert bad.status_code == 422 and bad.json()["error"]["code"] == "invalid_request"

    pairs = alice.get("/v1/conflicts", params={"limit": 1})
    assert pairs.headers["X-Total-Count"] == "1"
    pair = pairs.json()[0]
    assert "you said “Ottoline meets us on Friday”" in pair["explanation"]
    older = pair["older"]

    assert (
        alice.post("/v1/conflicts/keep-newer", json={"pairs": [["a", "b", "c"]]}).status_code == 422
    )
    surrogate = b'{"pairs": [["x\\ud800", "y"]]}'  # a lone surrogate, escaped in the JSON
    assert (
        alice.post(
            "/v1/conflicts/keep-newer",
            content=surrogate,
            headers={"Content-Type": "application/json"},
        ).status_code
        == 400
    )
    assert (
        alice.post(
            "/v1/conflicts/keep-newer", json={"pairs": [[pair["a"]["id"], "0" * 16]]}
        ).status_code
        == 404
    )
    done = alice.post(
        "/v1/conflicts/keep-newer", json={"pairs": [[pair["a"]["id"], pair["b"]["id"]]]}
    )
    assert done.status_code == 200 and done.json() == {"kept": [pair["newer"]]}

    history = alice.get(f"/v1/facts/{older}/history", params={"newest_first": "true", "limit": 1})
    assert history.headers["X-Total-Count"] == "3"
    line = history.json()[0]
    assert line["type"] == "resolve" and line["partner"]["id"] == pair["newer"]
    assert line["words"] == ("Superseded: you kept “Ottoline does not meet us on Friday” instead")
