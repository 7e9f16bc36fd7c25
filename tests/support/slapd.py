"""A private OpenLDAP `slapd` (Debian's package) for the directory sign-in tests.

Its own slapd.conf (back_mdb, the core/cosine/inetorgperson schemas) in a temporary folder,
listening on 127.0.0.1 only; the tests write the directory with ldap3 as its root DN.
"""

from __future__ import annotations

import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from ldap3 import MODIFY_ADD, MODIFY_DELETE, Connection, Server

from tests.support.processes import free_port, stop

SLAPD = shutil.which("slapd") or "/usr/sbin/slapd"


def missing() -> str | None:
    """Why the directory tests cannot run here (.ci/run installs Debian's slapd), or None."""
    return None if Path(SLAPD).exists() else "slapd is not installed (apt-get install -y slapd)"


SUFFIX = "dc=example,dc=org"
ROOT_DN = f"cn=admin,{SUFFIX}"
ROOT_PASSWORD = "slapd-root-test-pass"
PEOPLE = f"ou=people,{SUFFIX}"
GROUPS = f"ou=groups,{SUFFIX}"
BIND_DN = f"cn=reader,{SUFFIX}"
BIND_PASSWORD = "reader-test-pass"

CONF = """\
include /etc/ldap/schema/core.schema
include /etc/ldap/schema/cosine.schema
include /etc/ldap/schema/inetorgperson.schema
pidfile {dir}/slapd.pid
modulepath /usr/lib/ldap
moduleload back_mdb
database mdb
maxsize 104857600
suffix "{suffix}"
rootdn "{root}"
rootpw {password}
directory {dir}/db
access to attrs=userPassword by self auth by anonymous auth by * none
access to * by dn.exact="{reader}" read by self read by * none
"""


@dataclass
class Directory:
    """The running directory: its URL and a root connection to write people and groups."""

    url: str
    root: Connection

    def add_person(self, uid: str, password: str, *, cn: str | None = None) -> str:
        dn = f"uid={uid},{PEOPLE}"
        self.root.add(
            dn,
            ["inetOrgPerson"],
            {"cn": cn or uid, "sn": uid, "uid": uid, "userPassword": password},
        )
        assert self.root.result["result"] == 0, self.root.result
        return dn

    def add_group(self, cn: str, members: list[str]) -> str:
        dn = f"cn={cn},{GROUPS}"
        self.root.add(dn, ["groupOfNames"], {"cn": cn, "member": members})
        assert self.root.result["result"] == 0, self.root.result
        return dn

    def add_member(self, group: str, member: str) -> None:
        self.root.modify(f"cn={group},{GROUPS}", {"member": [(MODIFY_ADD, [member])]})
        assert self.root.result["result"] == 0, self.root.result

    def remove_member(self, group: str, member: str) -> None:
        self.root.modify(f"cn={group},{GROUPS}", {"member": [(MODIFY_DELETE, [member])]})
        assert self.root.result["result"] == 0, self.root.result


def _wait_port(port: int, proc: subprocess.Popen[bytes], timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"slapd exited with {proc.returncode}")
        with socket.socket() as s:
            if s.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    raise TimeoutError("slapd did not listen")


@contextmanager
def running_slapd(folder: Path, *, memberof: bool = False) -> Iterator[Directory]:
    """Start slapd on a free port with the base entries, the bind account and no people;
    `memberof`: the overlay that gives people `memberOf` for their groups (what Superset's
    AUTH_LDAP reads)."""
    (folder / "db").mkdir(parents=True)
    conf = folder / "slapd.conf"
    text = CONF.format(
        dir=folder, suffix=SUFFIX, root=ROOT_DN, password=ROOT_PASSWORD, reader=BIND_DN
    )
    if memberof:
        text = text.replace("moduleload back_mdb\n", "moduleload back_mdb\nmoduleload memberof\n")
        text = text.replace(
            f"directory {folder}/db\n", f"directory {folder}/db\noverlay memberof\n"
        )
    conf.write_text(text)
    port = free_port()
    url = f"ldap://127.0.0.1:{port}"
    with (folder / "slapd.log").open("ab") as log:
        proc = subprocess.Popen(
            [SLAPD, "-f", str(conf), "-h", f"{url}/", "-d", "0"],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
    try:
        _wait_port(port, proc)
        root = Connection(Server(url), ROOT_DN, ROOT_PASSWORD, auto_bind=True)
        root.add(SUFFIX, ["dcObject", "organization"], {"dc": "example", "o": "Example"})
        root.add(PEOPLE, ["organizationalUnit"], {"ou": "people"})
        root.add(GROUPS, ["organizationalUnit"], {"ou": "groups"})
        root.add(
            BIND_DN,
            ["organizationalRole", "simpleSecurityObject"],
            {"cn": "reader", "userPassword": BIND_PASSWORD},
        )
        assert root.result["result"] == 0, root.result
        yield Directory(url, root)
        root.unbind()
    finally:
        stop(proc)
