"""A personal access token works on the agent's Gradio app like a user JWT (every route and the
run act as its user, the backend deciding), and stops at once when revoked."""

from __future__ import annotations

import httpx
import pytest

from tests.agent.support import Chat, text_of
from tests.conftest import bearer


def test_a_token_chats_as_its_user_until_revoked(agent_url, api, tokens, fake_llm, sql):
    created = api.post(
        "/api/auth/tokens", json={"name": "chat"}, headers=bearer(tokens["editor"])
    ).json()
    token = created["token"]
    cid = api.post("/api/assistant/conversations", json={}, headers=bearer(token)).json()["id"]
    fake_llm.enqueue({"text": "Hello through a token."})
    outputs = Chat(agent_url).send(token, cid, "hi")
    assert text_of(outputs[-1]) == "Hello through a token."
    owner = sql.execute("SELECT owner_id FROM agent_conversations WHERE id = %s", (cid,)).fetchone()
    editor = sql.execute("SELECT id FROM users WHERE username = 'editor'").fetchone()
    assert owner == editor
    config = httpx.get(f"{agent_url}/api/agent/gradio/config", headers=bearer(token))
    assert config.status_code == 200
    api.delete(f"/api/auth/tokens/{created['id']}", headers=bearer(tokens["editor"]))
    refused = httpx.get(f"{agent_url}/api/agent/gradio/config", headers=bearer(token))
    assert refused.status_code == 401 and refused.json()["error"]["code"] == "UNAUTHORIZED"
    with pytest.raises(Exception):  # noqa: B017 - gradio_client's own error for a 401
        Chat(agent_url).send(token, cid, "again")
