"""The storage API on an S3-compatible store: moto's standalone server, a second backend
process configured with STORAGE__URL=s3://..., and the same checks over real HTTP."""

from __future__ import annotations

from collections.abc import Iterator

import boto3
import httpx
import pytest
from moto.server import ThreadedMotoServer

from backend.config import StorageSettings
from backend.errors import ServiceUnavailable
from backend.storage import service
from backend.storage.seed import demo_files, put_missing
from backend.storage.store import build
from tests.backend.support import assert_error
from tests.support.processes import serve

BUCKET, PREFIX = "agent-chat-demo", "demo"
MAX_READ = 2048
KEYS = {"STORAGE__S3_ACCESS_KEY_ID": "testing", "STORAGE__S3_SECRET_ACCESS_KEY": "testing"}


@pytest.fixture(scope="module")
def s3_endpoint() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    endpoint = f"http://{host}:{port}"
    client = boto3.client(
        "s3",
        endpoint_url=endpoint,
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    client.create_bucket(Bucket=BUCKET)
    # Outside the configured prefix: must stay unreachable through the API.
    client.put_object(Bucket=BUCKET, Key="private/secret.txt", Body=b"S3-SECRET-outside-prefix")
    client.put_object(Bucket=BUCKET, Key=f"{PREFIX}/big.txt", Body=b"b" * (MAX_READ + 1))
    try:
        yield endpoint
    finally:
        server.stop()


@pytest.fixture(scope="module")
def storage_settings(s3_endpoint: str) -> StorageSettings:
    return StorageSettings.model_validate(
        {
            "url": f"s3://{BUCKET}/{PREFIX}",
            "s3_endpoint": s3_endpoint,
            "s3_access_key_id": "testing",
            "s3_secret_access_key": "testing",
        }
    )


@pytest.fixture(scope="module")
async def seeded_bucket(storage_settings: StorageSettings) -> list[str]:
    """The demo files, written by the storage seeder itself through obstore's S3 store."""
    storage = build(storage_settings)
    first = await put_missing(storage=storage)
    again = await put_missing(storage=storage)
    assert again == []  # idempotent
    return first


@pytest.fixture(scope="module")
def s3_api(
    seeded: dict[str, str],
    s3_endpoint: str,
    seeded_bucket: list[str],
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[httpx.Client]:
    env = {
        **seeded,
        **KEYS,
        "STORAGE__URL": f"s3://{BUCKET}/{PREFIX}",
        "STORAGE__S3_ENDPOINT": s3_endpoint,
        "STORAGE__MAX_READ_BYTES": str(MAX_READ),
        "AWS_EC2_METADATA_DISABLED": "true",
    }
    log = tmp_path_factory.mktemp("s3-backend") / "backend.log"
    with (
        serve(["backend"], env, health_path="/readyz", log_path=log) as (base, _proc),
        httpx.Client(base_url=base, timeout=30) as client,
    ):
        yield client


def _get(client: httpx.Client, path: str, headers, **params):
    return client.get(path, params=params, headers=headers)


def test_the_seeder_writes_every_demo_file_into_the_bucket(seeded_bucket):
    assert sorted(seeded_bucket) == sorted(demo_files())


def test_a_viewer_lists_the_bucket_prefix_and_nothing_outside_it(s3_api, as_user):
    response = _get(s3_api, "/api/storage/list", as_user["viewer"])
    assert response.status_code == 200, response.text
    keys = [i["key"] for i in response.json()["items"]]
    assert set(demo_files()) | {"big.txt"} == set(keys) and keys == sorted(keys)
    assert not any("secret" in k for k in keys)
    exports = _get(s3_api, "/api/storage/list", as_user["viewer"], prefix="exports/sales")
    assert [i["key"] for i in exports.json()["items"]] == [
        "exports/sales_2026_10.csv",
        "exports/sales_2026_11.csv",
    ]
    cut = _get(s3_api, "/api/storage/list", as_user["viewer"], limit=3).json()
    assert len(cut["items"]) == 3 and cut["truncated"] is True


def test_a_viewer_reads_a_text_file_from_s3(s3_api, as_user):
    response = _get(s3_api, "/api/storage/read", as_user["viewer"], key="README.md")
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["content"] == demo_files()["README.md"].decode()
    assert (
        body["size"] == len(demo_files()["README.md"]) and body["content_type"] == "text/markdown"
    )


def test_s3_refuses_oversize_binary_missing_and_escaping_keys(s3_api, as_user):
    viewer = as_user["viewer"]
    big = assert_error(
        _get(s3_api, "/api/storage/read", viewer, key="big.txt"), 413, "FILE_TOO_LARGE"
    )
    assert big["details"]["limit"] == MAX_READ
    png = _get(s3_api, "/api/storage/read", viewer, key="images/logo.png")
    assert_error(png, 415, "UNSUPPORTED_FILE")
    assert_error(_get(s3_api, "/api/storage/read", viewer, key="nope.txt"), 404, "NOT_FOUND")
    for key in ("../private/secret.txt", "%2e%2e/private/secret.txt", "/private/secret.txt"):
        response = _get(s3_api, "/api/storage/read", viewer, key=key)
        assert_error(response, 422, "INVALID_KEY")
        assert "S3-SECRET" not in response.text


def test_s3_storage_needs_a_signed_in_user(s3_api):
    assert_error(s3_api.get("/api/storage/list"), 401, "UNAUTHORIZED")


async def test_an_unreachable_s3_endpoint_is_503_not_a_crash():
    settings = StorageSettings.model_validate(
        {"url": "s3://nowhere", "s3_endpoint": "http://127.0.0.1:9"}  # discard port: refused
    )
    with pytest.raises(ServiceUnavailable) as caught:
        await service.list_files(storage=build(settings), prefix=None, limit=5)
    assert caught.value.code == "STORAGE_UNAVAILABLE" and caught.value.status_code == 503
