"""Storage listing and file read bodies."""

from __future__ import annotations

from datetime import datetime

from pydantic import BaseModel, Field


class FileItem(BaseModel):
    key: str
    size: int = Field(description="bytes")
    last_modified: datetime


class FileList(BaseModel):
    items: list[FileItem] = Field(description="in key order")
    truncated: bool = Field(description="true when more objects match than `limit`")


class FileRead(BaseModel):
    key: str
    size: int = Field(description="bytes")
    content_type: str
    content: str = Field(description="the whole file, decoded as UTF-8")
