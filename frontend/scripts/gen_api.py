"""Generate the browser's REST types from the backend's OpenAPI, without a database.

    uv run python frontend/scripts/gen_api.py          # rewrite src/lib/api/schema.d.ts
    uv run python frontend/scripts/gen_api.py --check  # exit 1 when the committed file is stale

The schema comes from `backend.main.create_app(settings).openapi()`; openapi-typescript
(a pinned dev dependency in frontend/package.json) turns it into TypeScript.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from backend.config import Settings
from backend.main import create_app

FRONTEND = Path(__file__).resolve().parents[1]
ROOT = FRONTEND.parent
TARGET = FRONTEND / "src" / "lib" / "api" / "schema.d.ts"
CLI = FRONTEND / "node_modules" / "openapi-typescript" / "bin" / "cli.js"
PLACEHOLDER_DB = "postgresql://openapi@127.0.0.1:1/openapi"  # never connected: no lifespan runs


def openapi_document() -> dict[str, object]:
    """The backend's OpenAPI document, built from the app factory."""
    settings = Settings(env="development", database_url=PLACEHOLDER_DB)
    return create_app(settings).openapi()


def generate() -> str:
    """TypeScript declarations for the current backend."""
    node = shutil.which("node")
    if node is None or not CLI.exists():
        raise SystemExit(f"needs Node.js and {CLI}: run `npm ci` in {FRONTEND}")
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "openapi.json"
        output = Path(tmp) / "schema.d.ts"
        source.write_text(json.dumps(openapi_document(), indent=2), encoding="utf-8")
        subprocess.run(
            [node, str(CLI), str(source), "-o", str(output), "--alphabetize"],
            check=True,
            capture_output=True,
            cwd=FRONTEND,
        )
        return output.read_text(encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare instead of writing")
    args = parser.parse_args()
    fresh = generate()
    if args.check:
        current = TARGET.read_text(encoding="utf-8") if TARGET.exists() else ""
        if current != fresh:
            print(f"{TARGET.relative_to(ROOT)} is stale: run `make api-types`", file=sys.stderr)
            return 1
        print(f"{TARGET.relative_to(ROOT)} matches the backend's OpenAPI")
        return 0
    TARGET.write_text(fresh, encoding="utf-8")
    print(f"wrote {TARGET.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
