"""PNG and JPEG: validated with Pillow; an image content part for models that take images,
otherwise a short description and a notice."""

from __future__ import annotations

import base64
import io
import warnings
from pathlib import Path

from PIL import Image, UnidentifiedImageError

from agent.documents.base import Extract, ImageData, Limits, Notice, too_large, unsupported
from agent.errors import Code

_BROKEN = (UnidentifiedImageError, OSError, SyntaxError, ValueError, EOFError)
_MIME = {"PNG": "image/png", "JPEG": "image/jpeg"}


def parse(path: Path, *, name: str, limits: Limits) -> Extract:
    """A described image; with `accept_images`, also its (possibly downscaled) data URL."""
    width, height, fmt = _validate(path, name, limits)
    label = f"[image {name}: {width}x{height} {fmt}]"
    if not limits.accept_images:
        notice = Notice(
            Code.IMAGE_NOT_SUPPORTED,
            f"The configured model does not accept images, so {name} was not shown to it.",
        )
        return Extract(text=label + " (not visible to the model)", notices=(notice,))
    return Extract(text=label, image=_encode(path, name, fmt, limits))


def _validate(path: Path, name: str, limits: Limits) -> tuple[int, int, str]:
    """Header size check before any pixel is decoded, then a full structural verify."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(path) as img:
                width, height = img.size
                fmt = img.format or ""
                if width * height > limits.max_image_pixels:
                    raise _too_many_pixels(name, width, height, limits)
                img.verify()
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise _too_many_pixels(name, 0, 0, limits) from None
    except _BROKEN:
        raise unsupported(name, f"{name} is a damaged image.", reason="corrupt") from None
    if fmt not in _MIME:
        raise unsupported(
            name,
            f"{name} is a {fmt or 'unknown'} image; only PNG and JPEG are read.",
            reason="unsupported_type",
        )
    return width, height, fmt


def _encode(path: Path, name: str, fmt: str, limits: Limits) -> ImageData:
    """The file's own bytes when small enough; otherwise a thumbnail (JPEG decodes at a
    reduced scale via draft mode, so a large photo is never decoded in full)."""
    try:
        with Image.open(path) as img:
            width, height = img.size
            if max(width, height) <= limits.image_max_edge:
                raw = path.read_bytes()
            else:
                img.thumbnail((limits.image_max_edge, limits.image_max_edge))
                raw, (width, height) = _save(img, fmt)
    except _BROKEN:
        raise unsupported(name, f"{name} is a damaged image.", reason="corrupt") from None
    url = f"data:{_MIME[fmt]};base64,{base64.b64encode(raw).decode('ascii')}"
    return ImageData(data_url=url, width=width, height=height)


def _save(img: Image.Image, fmt: str) -> tuple[bytes, tuple[int, int]]:
    if fmt == "JPEG" and img.mode not in ("RGB", "L"):
        img = img.convert("RGB")
    out = io.BytesIO()
    img.save(out, format=fmt, **({"quality": 85} if fmt == "JPEG" else {}))
    return out.getvalue(), img.size


def _too_many_pixels(name: str, width: int, height: int, limits: Limits) -> Exception:
    size = f" ({width}x{height})" if width else ""
    return too_large(
        name,
        f"{name} has too many pixels{size}; the limit is {limits.max_image_pixels:,}.",
        limit=limits.max_image_pixels,
        reason="too_many_pixels",
        unit="pixels",
    )
