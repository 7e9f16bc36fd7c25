"""Size of the built browser client: what a first visit downloads, raw and gzip-compressed.

uv run python bench/frontend_bundle.py     (builds frontend/ first when it is stale)
"""

from __future__ import annotations

import gzip
import re

from agent_chat import frontend


def main() -> None:
    dist = frontend.ensure_built()
    rows = []
    for path in sorted(dist.rglob("*")):
        if path.is_file() and path.suffix in (".js", ".css", ".html", ".svg"):
            data = path.read_bytes()
            rows.append((str(path.relative_to(dist)), len(data), len(gzip.compress(data, 9))))
    width = max(len(name) for name, _, _ in rows)
    print(f"{'file':<{width}}  {'bytes':>9}  {'gzip':>9}")
    for name, raw, packed in rows:
        print(f"{name:<{width}}  {raw:>9,}  {packed:>9,}")
    print(f"{'total':<{width}}  {sum(r[1] for r in rows):>9,}  {sum(r[2] for r in rows):>9,}")
    # The first visit: index.html and what it links (the chat and the charts load later).
    index = (dist / "index.html").read_text()
    first = {"index.html", *re.findall(r'="/(assets/[^"]+)"', index)}
    picked = [r for r in rows if r[0] in first]
    raw, packed = sum(r[1] for r in picked), sum(r[2] for r in picked)
    print(f"{'first load':<{width}}  {raw:>9,}  {packed:>9,}")


if __name__ == "__main__":
    main()
