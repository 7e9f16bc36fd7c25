"""JSON: parsed, pruned to a bounded depth and width, pretty-printed."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent.documents import text
from agent.documents.base import Extract, Limits, TextSink, unsupported


@dataclass
class _Pruner:
    limits: Limits
    cut: bool = False

    def prune(self, value: Any, depth: int) -> Any:
        """A copy with containers past `max_json_depth` or `max_json_items` summarised."""
        if isinstance(value, dict | list) and depth >= self.limits.max_json_depth:
            self.cut = True
            return f"… ({type(value).__name__} of {len(value)} nested deeper)"
        if isinstance(value, dict):
            items = list(value.items())
            kept = {k: self.prune(v, depth + 1) for k, v in items[: self.limits.max_json_items]}
            if len(items) > self.limits.max_json_items:
                self.cut = True
                kept["…"] = f"{len(items) - self.limits.max_json_items} more keys"
            return kept
        if isinstance(value, list):
            kept_list = [self.prune(v, depth + 1) for v in value[: self.limits.max_json_items]]
            if len(value) > self.limits.max_json_items:
                self.cut = True
                kept_list.append(f"… {len(value) - self.limits.max_json_items} more items")
            return kept_list
        if isinstance(value, str) and len(value) > self.limits.max_cell_chars * 10:
            self.cut = True
            return value[: self.limits.max_cell_chars * 10] + "…"
        return value


def parse(path: Path, *, name: str, limits: Limits) -> Extract:
    """Pretty-printed JSON within the limits; invalid or absurdly nested JSON is refused."""
    content, _encoding = text.read(path, name)
    value = loads(content, name)
    pruner = _Pruner(limits)
    pretty = json.dumps(pruner.prune(value, 0), indent=2, ensure_ascii=False)
    sink = TextSink(limits.max_chars)
    sink.add(f"JSON {name}:")
    for line in pretty.splitlines():
        if not sink.add(line):
            break
    cut = pruner.cut or sink.truncated
    if cut:
        sink.lines.append(
            "[the JSON was shortened: deep levels, long lists or the tail are omitted]"
        )
    return Extract(text=sink.text(), truncated=cut)


def loads(content: str, name: str) -> Any:
    try:
        return json.loads(content)
    except json.JSONDecodeError as exc:
        raise unsupported(
            name,
            f"{name} is not valid JSON (line {exc.lineno}, column {exc.colno}: {exc.msg}).",
            reason="invalid_json",
        ) from None
    except RecursionError:
        raise unsupported(
            name, f"{name} is nested too deeply to read.", reason="too_deep"
        ) from None
