"""The local gateway of `agent-chat up --agents N` (agent_chat/gateway.py): the production
template rendered with several replicas is accepted by the real nginx, and the replicas get
free ports from the ones asked for."""

from __future__ import annotations

import socket
import subprocess
import tempfile
from pathlib import Path

import pytest

from agent_chat import cli, gateway
from tests.support.processes import free_port


def test_several_replicas_render_to_a_config_nginx_accepts() -> None:
    binary = gateway.nginx_binary()
    if binary is None:
        pytest.skip("needs nginx")
    filled = gateway.values(
        listen=f"127.0.0.1:{free_port()}",
        backend="127.0.0.1:8000,127.0.0.1:8001",
        agent=["127.0.0.1:7860", "127.0.0.1:7861", "127.0.0.1:7862"],
        static_root=Path(__file__).parent,
    )
    assert filled["AGENT_SERVERS"].count("server 127.0.0.1:786") == 3
    assert "resolve" not in filled["AGENT_SERVERS"]  # IP addresses need no DNS
    with tempfile.TemporaryDirectory() as tmp:
        main = gateway.write_config(Path(tmp), filled)
        checked = subprocess.run(
            [binary, "-t", "-p", tmp, "-c", str(main), "-e", f"{tmp}/error.log"],
            capture_output=True,
            text=True,
            check=False,
        )
    assert checked.returncode == 0, checked.stderr
    assert "test is successful" in checked.stderr


def test_a_template_value_left_out_is_an_error() -> None:
    with pytest.raises(KeyError, match="AGENT_SERVERS"):
        gateway.render(gateway.TEMPLATE.read_text(), {"LISTEN": "1"})
    with pytest.raises(ValueError, match="at least one"):
        gateway.server_lines(" , ")


def test_replica_ports_are_consecutive_and_skip_ports_in_use() -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        start = busy.getsockname()[1]
        taken = {start + 2}
        ports = cli._free_ports("127.0.0.1", start, 3, taken)
    assert start not in ports and start + 2 not in ports
    assert ports == sorted(ports) and len(set(ports)) == 3
    assert set(ports) <= taken  # given out: the next group does not get them again


def test_up_refuses_zero_agents(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["up", "--agents", "0"]) == 2
    assert "--agents and --backends need at least 1" in capsys.readouterr().err
