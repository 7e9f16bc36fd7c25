"""Attached files (FR-021): PDF, XLSX, CSV, JSON, PNG and JPEG read into the user's turn."""

from agent.documents.base import (
    SUPPORTED_FORMATS,
    DocumentError,
    Kind,
    Limits,
    Notice,
    ParsedDocument,
)
from agent.documents.prepare import PreparedAttachments, prepare_attachments
from agent.documents.reader import parse

__all__ = [
    "SUPPORTED_FORMATS",
    "DocumentError",
    "Kind",
    "Limits",
    "Notice",
    "ParsedDocument",
    "PreparedAttachments",
    "parse",
    "prepare_attachments",
]
