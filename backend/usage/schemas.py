"""Usage and budget schemas (CONTRACT.md, "Usage and budgets")."""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Literal

from pydantic import BaseModel, Field

MAX_TOKENS = 10**9  # one call's tokens; far past any model's context


class UsageTokens(BaseModel):
    input_tokens: int = 0
    output_tokens: int = 0
    total_tokens: int = Field(0, description="input_tokens + output_tokens")
    model_calls: int = 0


class BudgetRead(BaseModel):
    daily_tokens: int | None = Field(description="None: no budget")
    resets_at: datetime = Field(description="The next midnight, UTC: when today's count restarts")


class UsageDay(UsageTokens):
    day: date


class UsageByConversation(UsageTokens):
    conversation_id: uuid.UUID
    title: str


class UsageMe(BaseModel):
    today: UsageTokens
    budget: BudgetRead
    by_day: list[UsageDay] = Field(description="Oldest first, one item per day (zeros included)")
    by_conversation: list[UsageByConversation] = Field(description="Most tokens first")


class AdminUsageItem(UsageTokens):
    user_id: uuid.UUID
    username: str
    day: date | None = None
    model: str | None = None
    estimated_calls: int = Field(0, description="Calls whose tokens are an estimate")
    daily_tokens: int | None = Field(None, description="group_by=user: the user's daily budget")


class AdminUsagePage(BaseModel):
    items: list[AdminUsageItem]
    has_more: bool = Field(description="Items follow this page: ask from offset + limit")
    offset: int
    limit: int


class BudgetUpdate(BaseModel):
    daily_tokens: int | None = Field(ge=0, le=10**15, description="None removes the budget")


class UserBudgetRead(BudgetRead):
    user_id: uuid.UUID
    username: str
    tokens_today: int


class LeaseUsage(BaseModel):
    """The user's standing at the start of a run: the agent checks the budget with it."""

    tokens_today: int
    daily_tokens: int | None
    resets_at: datetime


class UsageCallWrite(BaseModel):
    key: str = Field(min_length=1, max_length=200, description="Idempotency key of the call")
    conversation_id: uuid.UUID | None = Field(None, description="None for an evaluation run")
    run_id: str | None = Field(None, max_length=64)
    mode: str = Field("dynamic", max_length=16)
    model: str = Field(min_length=1, max_length=200)
    input_tokens: int = Field(ge=0, le=MAX_TOKENS)
    output_tokens: int = Field(ge=0, le=MAX_TOKENS)
    source: Literal["reported", "estimated"]
    evaluation: bool = False


class UsageWrite(BaseModel):
    calls: list[UsageCallWrite] = Field(min_length=1, max_length=500)


class UsageWriteRead(BaseModel):
    recorded: int = Field(description="Calls stored by this request")
    duplicates: int = Field(description="Calls already stored under their key (not counted again)")
