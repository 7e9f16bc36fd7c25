"""Superset instances that authenticate people against a directory (`AUTH_LDAP`), for the
"Superset as the person" tests: python-ldap (which Superset's LDAP login needs) built once into
a cached folder put on Superset's PYTHONPATH, beside the cached venv and without touching its
pins (Debian's libldap2-dev and libsasl2-dev build it: `.ci/run` installs them).

`python -m tests.support.superset_ldap` builds it (CI's step; fast when cached).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

from tests.support import slapd
from tests.support.superset import venv

PYTHON_LDAP = "3.4.4"

CONFIG = """
from flask_appbuilder.const import AUTH_LDAP
AUTH_TYPE = AUTH_LDAP
AUTH_LDAP_SERVER = {url!r}
AUTH_LDAP_USE_TLS = False
AUTH_LDAP_SEARCH = {people!r}
AUTH_LDAP_UID_FIELD = "uid"
AUTH_LDAP_BIND_USER = {bind_dn!r}
AUTH_LDAP_BIND_PASSWORD = {bind_password!r}
AUTH_LDAP_FIRSTNAME_FIELD = "cn"
AUTH_LDAP_LASTNAME_FIELD = "sn"
AUTH_LDAP_GROUP_FIELD = "memberOf"
AUTH_USER_REGISTRATION = True
AUTH_USER_REGISTRATION_ROLE = "Public"
AUTH_ROLES_MAPPING = {mapping!r}
AUTH_ROLES_SYNC_AT_LOGIN = True
AUTH_API_LOGIN_ALLOW_MULTIPLE_PROVIDERS = True
"""


def config(directory_url: str, mapping: dict[str, list[str]]) -> str:
    """What an AUTH_LDAP Superset adds to its config: the directory, group DNs to roles."""
    return CONFIG.format(
        url=directory_url,
        people=slapd.PEOPLE,
        bind_dn=slapd.BIND_DN,
        bind_password=slapd.BIND_PASSWORD,
        mapping=mapping,
    )


def _cache() -> Path:
    base = os.environ.get("AGENT_CHAT_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "agent-chat"
    )
    return Path(base)


def python_ldap(venv_dir: Path | None = None) -> Path:
    """The folder holding python-ldap for the Superset venv's Python, built once per version."""
    venv_dir = venv_dir or venv()
    target = _cache() / f"python-ldap-{PYTHON_LDAP}-py311"
    if (target / "ldap").is_dir():
        return target
    uv = shutil.which("uv") or os.path.expanduser("~/.local/bin/uv")
    building = target.with_name(target.name + f".tmp{os.getpid()}")
    subprocess.run(
        [
            *(uv, "pip", "install", "--quiet", "--no-deps"),
            *("--python", str(venv_dir / "bin" / "python"), "--target", str(building)),
            f"python-ldap=={PYTHON_LDAP}",
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=600,
    )
    try:
        building.rename(target)
    except OSError:  # another run finished first
        shutil.rmtree(building, ignore_errors=True)
    return target


if __name__ == "__main__":
    print(f"python-ldap: {python_ldap()}")
    sys.exit(0)
