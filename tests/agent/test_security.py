"""Who may talk to the agent (FR-020), whose conversation it is, and where the JWT never goes."""

from __future__ import annotations

import json
import time

import httpx
import jwt
import pytest

from agent.auth import UserAuthMiddleware
from agent.config import Settings
from tests.agent.support import GRADIO, error_code, text_of
from tests.conftest import TEST_JWT_SECRET

ROUTES = [
    ("GET", "/config"),
    ("GET", "/gradio_api/info"),
    ("POST", "/gradio_api/queue/join"),
    ("GET", "/gradio_api/queue/data?session_hash=abc"),
    ("POST", "/gradio_api/upload"),
    ("GET", "/gradio_api/file=/etc/passwd"),
    ("GET", "/gradio_api/heartbeat/abc"),
    ("POST", "/gradio_api/cancel"),
    ("POST", "/gradio_api/call/chat"),
    ("GET", "/"),
    ("GET", "/assets/index.js"),
]


def _token(secret: str = TEST_JWT_SECRET, **claims: object) -> str:
    now = int(time.time())
    payload = {"sub": "x", "roles": ["admin"], "typ": "user", "iat": now, "exp": now + 600}
    payload |= {"iss": "agent-chat", "aud": "agent-chat", **claims}
    return jwt.encode(payload, secret, algorithm="HS256")


def _forged() -> dict[str, str | None]:
    none_alg = jwt.encode({"sub": "x", "typ": "user"}, key=None, algorithm="none")
    return {
        "missing": None,
        "wrong signature": _token(secret="not-the-secret-0123456789-0123456789"),
        "alg none": none_alg,
        "expired": _token(exp=int(time.time()) - 10),
        "service token": _token(typ="service"),
        "wrong audience": _token(aud="someone-else"),
        "garbage": "not.a.jwt",
    }


@pytest.mark.parametrize("case", list(_forged()))
def test_every_gradio_route_refuses_a_missing_or_forged_jwt_with_401(agent_url, fake_llm, case):
    token = _forged()[case]
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    with httpx.Client(base_url=agent_url + GRADIO, headers=headers, timeout=10) as client:
        for method, path in ROUTES:
            response = client.request(method, path, json={"data": [], "fn_index": 0})
            assert response.status_code == 401, (case, path, response.text)
            assert response.json()["error"]["code"] == "UNAUTHORIZED"
    assert fake_llm.requests == []


def test_a_forged_jwt_cannot_even_connect_the_gradio_client(agent_url, fake_llm):
    from gradio_client import Client

    with pytest.raises(ValueError, match="credentials were not provided"):
        Client(
            agent_url + GRADIO,
            headers={"Authorization": f"Bearer {_forged()['wrong signature']}"},
            verbose=False,
        )
    assert fake_llm.requests == []


def test_health_answers_without_a_token(agent_url):
    assert httpx.get(agent_url + "/healthz").json() == {"status": "ok"}


async def test_outside_development_the_gradio_page_is_not_served_even_with_a_token():
    async def inner(scope, receive, send):
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"gradio"})

    settings = Settings(
        env="production", jwt_secret=TEST_JWT_SECRET, agent_client_secret="a-real-agent-secret"
    )
    app = UserAuthMiddleware(inner, settings=settings, prefix=GRADIO)
    headers = {"Authorization": f"Bearer {_token()}"}
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://agent") as client:
        assert (await client.get(GRADIO + "/", headers=headers)).status_code == 404
        assert (await client.get(GRADIO + "/assets/app.js", headers=headers)).status_code == 404
        assert (await client.get(GRADIO + "/config", headers=headers)).text == "gradio"
        assert (await client.get(GRADIO + "/config")).status_code == 401
        assert (await client.get("/healthz")).text == "gradio"


def test_someone_elses_conversation_is_not_found_and_calls_no_model(
    chat, tokens, conversation, fake_llm
):
    cid = conversation("editor")

    assert error_code(chat.send(tokens["viewer"], cid, "What did the editor ask?")) == "NOT_FOUND"
    assert fake_llm.requests == []


def test_an_archived_conversation_takes_no_new_messages(chat, tokens, conversation, api):
    cid = conversation()
    api.delete(
        f"/api/assistant/conversations/{cid}",
        headers={"Authorization": f"Bearer {tokens['admin']}"},
    )

    assert error_code(chat.send(tokens["admin"], cid, "hello?")) == "CONVERSATION_ARCHIVED"
    # The lease taken to learn that is given back at once, and no message was stored.
    headers = {"Authorization": f"Bearer {tokens['admin']}"}
    active = api.get(f"/api/agent/conversations/{cid}/active", headers=headers).json()
    assert active == {"active": False}
    history = api.get(f"/api/assistant/conversations/{cid}/history", headers=headers).json()
    assert history["items"] == []


def test_the_jwt_never_reaches_the_llm_or_the_checkpoint_tables(
    chat, tokens, conversation, fake_llm, sql
):
    cid = conversation("editor")
    fake_llm.enqueue(
        {"tool_calls": [{"name": "search_dashboards", "args": {"query": "sales"}}]},
        {
            "tool_calls": [
                {"name": "create_branch", "args": {"dashboard_id": 42, "name": "jwt-probe"}}
            ]
        },
        {"text": "Branch created."},
    )
    assert text_of(chat.send(tokens["editor"], cid, "Make a branch of the sales dashboard")[-1])

    sent = json.dumps([r for r in fake_llm.script.recorded()])
    for role, token in tokens.items():
        assert token not in sent, role
        signature = token.rsplit(".", 1)[-1]
        rows = sql.execute(
            "select (select count(*) from checkpoints"
            "         where checkpoint::text like %(t)s or metadata::text like %(t)s)"
            " + (select count(*) from checkpoint_blobs where position(%(b)s in blob) > 0)"
            " + (select count(*) from checkpoint_writes where position(%(b)s in blob) > 0)",
            {"t": f"%{signature}%", "b": signature.encode()},
        ).fetchone()[0]
        assert rows == 0, role
    assert sql.execute("select count(*) from checkpoints where thread_id = %s", (cid,)).fetchone()[
        0
    ]


def test_gradio_run_history_is_off_so_no_call_is_recorded_or_served(agent_url, tokens):
    """Gradio 6 records finished calls for a run-history page and can upload them to a bucket
    a request names in a header: off, the page is not there even with a valid token."""
    headers = {"Authorization": f"Bearer {tokens['viewer']}"}
    with httpx.Client(base_url=agent_url + GRADIO, headers=headers, timeout=10) as client:
        config = client.get("/config")
        assert config.status_code == 200 and config.json()["run_history"] is False
        assert client.get("/gradio_api/runs").status_code == 404
