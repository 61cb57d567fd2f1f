"""`ankita serve` over real loopback HTTP: every route, auth, isolation, bad input."""

import httpx
import pytest

from ankita import ConfigError, Memory
from ankita.server._guards import create_token
from ankita.server._server import check_bind, create_app
from ankita.store._open import open_store
from live import LiveServer


@pytest.fixture
def tokens(db):
    store = open_store(db)
    made = {"alice": create_token(store, "alice"), "bob": create_token(store, "bob")}
    store.close()
    return made


@pytest.fixture
def live(db, tokens):
    server = LiveServer(create_app(db, embedder="none", anonymous=True))
    yield server
    server.stop()


@pytest.fixture
def alice(live, tokens):
    with httpx.Client(
        base_url=live.url, headers={"Authorization": f"Bearer {tokens['alice']}"}, timeout=10
    ) as client:
        yield client


@pytest.fixture
def bob(live, tokens):
    with httpx.Client(
        base_url=live.url, headers={"Authorization": f"Bearer {tokens['bob']}"}, timeout=10
    ) as client:
        yield client


def ok(response, status=200):
    assert response.status_code == status, response.text
    return response.json()


def test_healthz_and_openapi(live):
    assert httpx.get(live.url + "/healthz").json()["ok"] is True
    spec = httpx.get(live.url + "/openapi.json").json()
    assert "/v1/facts" in spec["paths"] and "/v1/recall" in spec["paths"]
    # No Swagger page: FastAPI's loads its scripts from a CDN.
    assert httpx.get(live.url + "/docs").status_code == 404


def test_every_route(alice):
    a = ok(alice.post("/v1/facts", json={"text": "I live in Berlin", "kind": "location"}))
    assert a["action"] == "created"
    merged = ok(alice.post("/v1/facts", json={"text": "I live in Berlin", "kind": "location"}))
    assert merged["action"] == "merged"
    b = ok(
        alice.post(
            "/v1/facts", json={"text": "I live in Munich", "kind": "location", "source": "chat"}
        )
    )
    assert b["action"] == "conflict"
    aid, bid = a["fact"]["id"], b["fact"]["id"]
    assert {f["id"] for f in ok(alice.get("/v1/facts"))} == {aid, bid}
    assert ok(alice.get(f"/v1/facts/{aid}"))["mentions"] == 2
    assert ok(alice.post(f"/v1/facts/{aid}/pin"))["pinned"] is True
    assert ok(alice.delete(f"/v1/facts/{aid}/pin"))["pinned"] is False
    recall = ok(alice.post("/v1/recall", json={"query": "I live in Berlin", "limit": 5}))
    assert recall["notice"] and recall["prompt"].endswith(recall["notice"])
    assert len(ok(alice.get("/v1/conflicts"))) == 1
    ok(alice.delete(f"/v1/conflicts/{aid}/{bid}"))
    assert ok(alice.get("/v1/conflicts")) == []
    clear_event = ok(alice.get(f"/v1/facts/{aid}/history"))[-1]
    assert clear_event["type"] == "clear"
    ok(alice.post(f"/v1/undo/{clear_event['id']}"))
    assert len(ok(alice.get("/v1/conflicts"))) == 1
    kept = ok(alice.post(f"/v1/conflicts/{aid}/{bid}/resolve", json={"keep": bid}))
    assert kept["id"] == bid
    assert [f["id"] for f in ok(alice.get("/v1/facts"))] == [bid]
    assert {f["status"] for f in ok(alice.get("/v1/facts", params={"all": True}))} == {
        "active",
        "superseded",
    }
    forgotten = ok(alice.delete(f"/v1/facts/{bid}"))
    assert forgotten["id"] == bid
    assert ok(alice.get(f"/v1/facts/{bid}/history"))[-1]["type"] == "forget"


def test_auth_is_required_once_tokens_exist(live):
    for method, path in [("GET", "/v1/facts"), ("POST", "/v1/recall"), ("GET", "/v1/conflicts")]:
        response = httpx.request(method, live.url + path, json={"query": "x"})
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "unauthorized"
    bad = httpx.get(live.url + "/v1/facts", headers={"Authorization": "Bearer nope"})
    assert bad.status_code == 401


def test_users_never_reach_each_others_facts(alice, bob, db):
    fact = ok(alice.post("/v1/facts", json={"text": "I live in Berlin"}))["fact"]
    fid = fact["id"]
    other = ok(alice.post("/v1/facts", json={"text": "I live in Munich"}))["fact"]["id"]
    event = ok(alice.get(f"/v1/facts/{fid}/history"))[0]["id"]
    assert ok(bob.get("/v1/facts")) == []
    for method, path, body in [
        ("GET", f"/v1/facts/{fid}", None),
        ("DELETE", f"/v1/facts/{fid}", None),
        ("POST", f"/v1/facts/{fid}/pin", None),
        ("GET", f"/v1/facts/{fid}/history", None),
        ("POST", f"/v1/undo/{event}", None),
        ("DELETE", f"/v1/conflicts/{fid}/{other}", None),
        ("POST", f"/v1/conflicts/{fid}/{other}/resolve", {"keep": fid}),
    ]:
        response = bob.request(method, path, json=body)
        assert response.status_code == 404, (method, path, response.text)
    assert ok(bob.post("/v1/recall", json={"query": "Berlin"}))["facts"] == []
    with Memory(db, user="alice", embedder="none") as m:
        assert {f.id for f in m.list()} == {fid, other}
        assert len(m.conflicts()) == 1 and not m.get(fid).pinned


@pytest.mark.parametrize(
    "body,status,code",
    [
        ({"text": ""}, 400, "invalid_input"),
        ({"text": "x" * 2001}, 400, "invalid_input"),
        ({"text": "ok", "kind": "../etc"}, 400, "invalid_input"),
        ({"text": "ok", "surprise": 1}, 422, "invalid_request"),
        ({"text": 42}, 422, "invalid_request"),
        ({}, 422, "invalid_request"),
    ],
)
def test_bad_input_is_refused_and_changes_nothing(alice, body, status, code):
    response = alice.post("/v1/facts", json=body)
    assert response.status_code == status
    error = response.json()["error"]
    assert error["code"] == code and "Traceback" not in response.text
    assert ok(alice.get("/v1/facts")) == []


def test_bad_json_and_huge_bodies(alice):
    broken = alice.post("/v1/facts", content=b"{nope", headers={"Content-Type": "application/json"})
    assert broken.status_code == 422
    huge = alice.post(
        "/v1/facts", content=b"x" * 100_000, headers={"Content-Type": "application/json"}
    )
    assert huge.status_code == 413 and huge.json()["error"]["code"] == "too_large"
    assert ok(alice.get("/v1/facts")) == []


def test_resolve_keep_must_be_in_the_path(alice):
    a = ok(alice.post("/v1/facts", json={"text": "I live in Berlin"}))["fact"]["id"]
    b = ok(alice.post("/v1/facts", json={"text": "I live in Munich"}))["fact"]["id"]
    response = alice.post(f"/v1/conflicts/{a}/{b}/resolve", json={"keep": "other"})
    assert response.status_code == 400
    assert len(ok(alice.get("/v1/conflicts"))) == 1


def test_unknown_route_and_event(alice):
    assert alice.get("/v1/nothing").status_code == 404
    assert alice.post("/v1/undo/99999").json()["error"]["code"] == "not_found"
    assert alice.post("/v1/undo/abc").status_code == 422


def test_single_user_mode_without_tokens_on_loopback(tmp_path):
    server = LiveServer(create_app(tmp_path / "solo.db", default_user="me", embedder="none"))
    try:
        created = httpx.post(server.url + "/v1/facts", json={"text": "I use Postgres"}).json()
        assert created["fact"]["user"] == "me"
    finally:
        server.stop()


def test_non_loopback_without_tokens_is_refused(tmp_path, db, tokens):
    with pytest.raises(ConfigError, match="without tokens"):
        check_bind("0.0.0.0", str(tmp_path / "empty.db"))
    check_bind("0.0.0.0", str(db))  # tokens exist: allowed
    check_bind("127.0.0.1", str(tmp_path / "empty.db"))


def test_listing_search_limit_stale_and_me(alice, bob):
    for text in ["I drink green tea", "My sister lives in Lyon", "I use 100%_pure soap"]:
        ok(alice.post("/v1/facts", json={"text": text}))
    assert ok(alice.get("/v1/me")) == {"user": "alice"}
    assert ok(bob.get("/v1/me")) == {"user": "bob"}
    found = ok(alice.get("/v1/facts", params={"q": "LYON"}))
    assert [f["text"] for f in found] == ["My sister lives in Lyon"]
    assert found[0]["stale"] is False
    # '%' and '_' are plain characters, not LIKE wildcards.
    assert [f["text"] for f in ok(alice.get("/v1/facts", params={"q": "0%_p"}))] == [
        "I use 100%_pure soap"
    ]
    assert ok(alice.get("/v1/facts", params={"q": "%"}))[0]["text"] == "I use 100%_pure soap"
    assert len(ok(alice.get("/v1/facts", params={"limit": 2}))) == 2
    assert (
        ok(alice.get("/v1/facts", params={"limit": 0}), 422)["error"]["code"] == "invalid_request"
    )
    assert ok(bob.get("/v1/facts", params={"q": "tea"})) == []


def test_conflicts_carry_the_score_and_reason_that_flagged_them(alice):
    ok(alice.post("/v1/facts", json={"text": "I love jazz"}))
    flagged = ok(alice.post("/v1/facts", json={"text": "I hate jazz"}))
    [pair] = ok(alice.get("/v1/conflicts"))
    assert pair["score"] == flagged["score"]
    assert pair["reason"] == flagged["reason"] and "love" in pair["reason"]
    assert pair["flagged_at"] == flagged["fact"]["created_at"]


@pytest.fixture
def owner(db, tokens):
    """A server run as alice (`ankita --user alice serve`): the companion's card is hers."""
    server = LiveServer(create_app(db, default_user="alice", embedder="none"))
    with httpx.Client(
        base_url=server.url, timeout=10, headers={"Authorization": f"Bearer {tokens['alice']}"}
    ) as client:
        yield server, client
    server.stop()


def test_the_personality_card_over_http(owner, tokens):
    server, alice = owner
    card = ok(alice.get("/v1/persona"))
    assert card["data"]["name"] == "Ankita"
    card["data"]["name"] = "Mira"
    card["data"]["extensions"]["other_app"] = {"keep": "me"}
    card["surprise"] = 1
    saved = ok(alice.put("/v1/persona", json={"card": card}))
    assert saved["data"]["name"] == "Mira" and saved["surprise"] == 1
    assert ok(alice.get("/v1/persona"))["data"]["extensions"]["other_app"] == {"keep": "me"}
    card["data"]["extensions"]["ankita"]["teasing"] = "cruel"
    refused = alice.put("/v1/persona", json={"card": card})
    assert refused.status_code == 400 and "teasing must be one of" in refused.text
    assert ok(alice.get("/v1/persona"))["data"]["extensions"]["ankita"].get("teasing") != "cruel"
    # Bob's token reaches bob's facts, not the companion's card or tasks.
    bob = {"Authorization": f"Bearer {tokens['bob']}"}
    for method, route in (
        ("GET", "/v1/persona"),
        ("PUT", "/v1/persona"),
        ("GET", "/v1/tasks"),
        ("GET", "/v1/tasks/runs"),
    ):
        response = httpx.request(
            method,
            server.url + route,
            headers=bob,
            json={"card": card} if method == "PUT" else None,
        )
        assert response.status_code == 403, (route, response.text)
        assert response.json()["error"]["code"] == "forbidden"
    assert ok(alice.get("/v1/persona"))["data"]["name"] == "Mira"
    assert ok(alice.get("/v1/tasks")) == []
