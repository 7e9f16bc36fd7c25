"""Only files that came through this app's Gradio upload route are ever opened (issue 9.1).

A caller of Gradio's raw HTTP API can put any string in a FileData `path`: an absolute server
path, a relative or `../` path, a `file://` or `http://` URL, or a symlink planted in the upload
folder that points out of it. Gradio's own "uploaded files only" check does not run in an app
mounted on FastAPI, and its preprocessing would even copy such a file into its servable cache.

So the rule is applied twice, by the same function:
- `uploads_only` components never copy (or download) a path that is not an upload: it is handed
  on untouched, so the run can refuse it;
- `checked_path` runs before anything opens a file and refuses everything else with
  UNSUPPORTED_FILE, naming the reason, never echoing the server path.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any, TypeVar

from gradio import utils as gradio_utils
from gradio.components import Component as GradioComponent

from agent.documents.base import unsupported

Component = TypeVar("Component", bound=GradioComponent)
URL_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.\-]*:")
REASONS = {
    "url": "{name} was given as a URL; only files uploaded to this chat can be attached.",
    "relative": "{name} was not uploaded to this chat; only uploaded files can be attached.",
    "not_uploaded": "{name} was not uploaded to this chat; only uploaded files can be attached.",
    "link_outside": "{name} points outside this chat's uploads and cannot be attached.",
    "missing": "{name} is no longer available; upload it again.",
    # an upload's path (<folder>/<sha256>/<name>) in another folder: uploaded to another agent
    # process whose folder this one does not share (docs/operations.md, "Faults")
    "elsewhere": "{name} is no longer available (its server stopped); upload it again.",
}
UPLOAD_DIR = re.compile(r"^[0-9a-f]{64}$")


def upload_root() -> Path:
    """This process's Gradio upload folder (GRADIO_TEMP_DIR, else <tmp>/gradio), resolved."""
    return Path(gradio_utils.get_upload_folder()).resolve()


def _inside(path: str, root: Path) -> bool:
    return os.path.commonpath([path, str(root)]) == str(root)


def refusal(raw: str, root: Path | None = None) -> str | None:
    """Why `raw` is not a file uploaded to this app (a REASONS key), or None when it is."""
    root = root.resolve() if root else upload_root()
    if URL_SCHEME.match(raw):
        return "url"
    if not os.path.isabs(raw):
        return "relative"
    if not _inside(os.path.normpath(raw), root):
        return "elsewhere" if UPLOAD_DIR.match(Path(raw).parent.name) else "not_uploaded"
    real = os.path.realpath(raw)
    if not _inside(real, root):
        return "link_outside"
    if not os.path.isfile(real):
        return "missing"
    return None


def checked_path(raw: Any, name: str, root: Path | None = None) -> Path:
    """The resolved path of an uploaded file; DocumentError UNSUPPORTED_FILE for anything else."""
    if not isinstance(raw, str) or not raw or "\x00" in raw:
        raise unsupported(name, REASONS["not_uploaded"].format(name=name), reason="not_uploaded")
    reason = refusal(raw, root)
    if reason is not None:
        raise unsupported(name, REASONS[reason].format(name=name), reason=reason)
    return Path(os.path.realpath(raw))


def is_uploaded(raw: Any) -> bool:
    return isinstance(raw, str | Path) and refusal(str(raw)) is None


def uploads_only(component: Component) -> Component:
    """Make a Gradio component copy only uploads into its cache; anything else is passed on
    unchanged (not copied, not downloaded), so the run refuses it and Gradio's file route
    never serves it.

    The instance's methods are wrapped rather than the class subclassed: Gradio writes a
    `.pyi` stub next to the module of every Component subclass it sees defined.
    """
    move = component.move_resource_to_block_cache
    move_async = component.async_move_resource_to_block_cache

    def guarded(url_or_file_path: str | Path | None) -> str | None:
        if url_or_file_path is None or is_uploaded(url_or_file_path):
            return move(url_or_file_path)
        return str(url_or_file_path)

    async def guarded_async(url_or_file_path: str | Path | None) -> str | None:
        if url_or_file_path is None or is_uploaded(url_or_file_path):
            return await move_async(url_or_file_path)
        return str(url_or_file_path)

    component.move_resource_to_block_cache = guarded  # type: ignore[method-assign]
    component.async_move_resource_to_block_cache = guarded_async  # type: ignore[method-assign]
    return component
