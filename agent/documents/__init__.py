"""Attached files (FR-021): PDF, XLSX, CSV, JSON, PNG and JPEG read into the user's turn."""

from agent.documents.base import (
    FILE_TOO_LARGE,
    SUPPORTED_FORMATS,
    UNSUPPORTED_FILE,
    DocumentError,
    Kind,
    Limits,
    Notice,
    ParsedDocument,
)
from agent.documents.prepare import PreparedAttachments, prepare_attachments
from agent.documents.reader import parse

__all__ = [
    "FILE_TOO_LARGE",
    "SUPPORTED_FORMATS",
    "UNSUPPORTED_FILE",
    "DocumentError",
    "Kind",
    "Limits",
    "Notice",
    "ParsedDocument",
    "PreparedAttachments",
    "parse",
    "prepare_attachments",
]
