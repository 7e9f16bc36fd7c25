"""Auth request and response bodies."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from backend.identity.roles import Role


class LoginRequest(BaseModel):
    username: str = Field(min_length=1, max_length=64)
    # an empty password is refused like a wrong one (401), not as invalid input
    password: str = Field(max_length=1024)


UserSource = Literal["local", "ldap", "oidc"]


class UserRead(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    username: str
    roles: list[str]


class MeRead(UserRead):
    source: UserSource


class UserAdminRead(MeRead):
    created_at: datetime
    last_sign_in_at: datetime | None


class UserPage(BaseModel):
    items: list[UserAdminRead]


class OidcProviderRead(BaseModel):
    name: str
    login_url: str


class ProvidersRead(BaseModel):
    """How people can sign in here: the login page reads it before anyone is signed in."""

    password: bool = True
    ldap: bool
    oidc: OidcProviderRead | None


class LoginCodeExchange(BaseModel):
    login_code: str = Field(min_length=1, max_length=128)


class TokenResponse(BaseModel):
    access_token: str
    token_type: Literal["bearer"] = "bearer"
    expires_in: int


class LoginResponse(TokenResponse):
    user: UserRead


class ServiceTokenRequest(BaseModel):
    client_id: str = Field(min_length=1, max_length=64)
    client_secret: str = Field(min_length=1, max_length=1024)


class UserCreate(BaseModel):
    username: str = Field(min_length=3, max_length=64, pattern=r"^[A-Za-z0-9_.-]+$")
    password: str = Field(min_length=8, max_length=1024)
    roles: list[Role] = Field(min_length=1, max_length=3)
