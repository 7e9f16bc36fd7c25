def test_healthz_and_readyz_answer(api):
    assert api.get("/healthz").json() == {"status": "ok"}
    assert api.get("/readyz").json() == {"status": "ready"}


def test_admin_logs_in_and_sees_itself(api, as_user):
    me = api.get("/api/auth/me", headers=as_user["admin"]).json()
    assert me["username"] == "admin" and me["roles"] == ["admin"]
