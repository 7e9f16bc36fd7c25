"""The chaos soak (issue 37): faults at random, under load, then an auditor of invariants.

Two agents and two backends behind nginx, on a Postgres cluster of their own (initdb + pg_ctl
on a free port, never the machine's shared server), with the scripted model
(tests/fakes/llm_server.py). Simulated people (bench/chaos_people.py) send plain turns, tool
turns, confirmations they confirm or reject, uploads, workflows and diagnoses, drop their
streams and re-attach; meanwhile, at random moments, an agent or a backend is SIGKILLed (the
supervisor of `agent-chat up`, agent_chat/supervisor.py, starts it again) or Postgres is
restarted. When the time is up the faults stop, every conversation gets a closing turn, the
lease TTL passes, and the auditor (bench/chaos_audit.py) checks the eight invariants.

    uv run python bench/chaos.py                  # the long mode: 10 minutes of faults
    uv run python bench/chaos.py --minutes 3 --people 6 --seed 7
    uv run python bench/chaos.py --short          # what tests/faults/test_chaos_short.py runs

It prints what it did (turns by kind and outcome, kills, restarts, every answer through the
gateway by status) and each invariant's violations (the eighth, bench/chaos_gateway.py: no
gateway 502/503/504 or connection error while a replica of each kind was alive); the exit
status is 1 when any invariant was violated. All traffic is to 127.0.0.1.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import psycopg

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from agent_chat import gateway
from agent_chat.supervisor import Backoff, Child, Supervisor
from backend.migrate import upgrade
from bench.chaos_audit import INVARIANTS, Audit, deploy_counts
from bench.chaos_gateway import Outage, Tally
from bench.chaos_people import Person, Turn, rules
from tests.fakes.llm_server import FakeLLM
from tests.faults.support import PrivatePostgres, Service, postgres_bin
from tests.support.processes import ROOT, free_port, run_cli

PASSWORD = "chaos-soak-admin-1"
LEASE_TTL_S = 3.0


@dataclass
class Settings:
    minutes: float
    people: int
    max_turns: int  # per person
    fault_every_s: tuple[float, float]
    seed: int
    verbose: bool = False


SHORT = Settings(minutes=0.75, people=3, max_turns=60, fault_every_s=(3.0, 6.0), seed=37)


@dataclass
class Faults:
    """What the chaos thread did."""

    kills: Counter[str] = field(default_factory=Counter)
    outages: list[Outage] = field(default_factory=list)  # each killed replica until ready
    postgres_restarts: int = 0
    skipped: int = 0
    log: list[str] = field(default_factory=list)


class Soak:
    """The stack of one soak: Postgres, two backends, two agents, nginx, the scripted model."""

    def __init__(self, settings: Settings, workdir: Path) -> None:
        self.settings = settings
        self.workdir = workdir
        self.rng = random.Random(settings.seed)
        bin_dir = postgres_bin()
        if bin_dir is None:
            raise SystemExit("needs PostgreSQL server binaries (initdb, pg_ctl)")
        self.postgres = PrivatePostgres(bin_dir)
        self.llm = FakeLLM()
        self.backends: list[Service] = []
        self.agents: list[Service] = []
        self.nginx: Any = None
        self.supervisor: Supervisor | None = None
        self.faults = Faults()
        self.stop_faults = threading.Event()
        self._by_name: dict[str, Service] = {}
        self.pg_lock = threading.Lock()

    # -- the stack ----------------------------------------------------------------------------

    def start(self) -> str:
        self.postgres.start()
        self.llm.start()
        self.database_url = self.postgres.create_database("chaos")
        warehouse = self.postgres.create_database("warehouse")
        upgrade(self.database_url)
        web = free_port()
        gateway_url = f"http://127.0.0.1:{web}"
        logs = self.workdir / "logs"
        logs.mkdir()
        env = {
            "ENV": "development",
            "DATABASE_URL": self.database_url,
            "DATASOURCES__WAREHOUSE__URL": warehouse,
            "DATA_DIR": str(self.workdir / "data"),
            "JWT_SECRET": "chaos-soak-jwt-secret-0123456789abcdef",
            "AGENT_CLIENT_ID": "agent-chat",
            "AGENT_CLIENT_SECRET": "chaos-soak-agent-secret-0123456789",
            "SEED_ADMIN_PASSWORD": PASSWORD,
            "SEED_EDITOR_PASSWORD": PASSWORD + "e",
            "SEED_VIEWER_PASSWORD": PASSWORD + "v",
            "LOG_LEVEL": "WARNING",
        }
        seeding = threading.Thread(target=run_cli, args=(["seed"], {**os.environ, **env}))
        seeding.start()  # beside the processes' start: the stack is ready in the slowest's time
        self.backends = [
            Service(["backend"], env, health_path="/readyz", log_path=logs / f"backend-{i}.log")
            for i in range(2)
        ]
        agent_env = {
            **env,
            "BACKEND_URL": gateway_url,  # both backends, through nginx (as `up` does)
            "LLM_API_BASE": self.llm.url,
            "LLM_API_KEY": "chaos-fake-llm-key",
            "LLM__REQUEST_TIMEOUT_S": "15",
            "AGENT__LEASE_TTL_S": str(LEASE_TTL_S),
            "GRADIO_TEMP_DIR": str(self.workdir / "uploads"),  # shared, as `up` shares it
        }
        self.agents = [
            Service(["agent"], agent_env, health_path="/readyz", log_path=logs / f"agent-{i}.log")
            for i in range(2)
        ]
        static = self.workdir / "static"
        static.mkdir(mode=0o755)
        (static / "index.html").write_text("<!doctype html><title>chaos</title>")
        filled = gateway.values(
            listen=f"127.0.0.1:{web}",
            backend=[f"127.0.0.1:{s.port}" for s in self.backends],
            agent=[f"127.0.0.1:{s.port}" for s in self.agents],
            static_root=static,
        )
        services = [*self.backends, *self.agents]
        self._by_name = {self._name(s): s for s in services}
        children = [Child(self._name(s), lambda s=s: s.spawn().proc) for s in services]
        children.append(Child("gateway", lambda: gateway.start(self.workdir / "nginx", filled)))
        # the supervisor is known before any start, so that `stop` ends whatever did start
        self.supervisor = Supervisor(children, backoff=Backoff(first_s=0.5, max_s=5))
        try:
            for child in children:
                child.spawn(time.monotonic())
        finally:  # the seed is not left running into a stack that is being stopped
            seeding.join()
        for service in services:
            service.ready(timeout=300)
        self.llm.script.load({"rules": rules(self._dashboards())})
        return gateway_url

    def _name(self, service: Service) -> str:
        kind = "backend" if service in self.backends else "agent"
        return f"{kind}:{service.port}"

    def _dashboards(self) -> list[int]:
        with psycopg.connect(self.database_url, autocommit=True) as conn:
            ids = [int(r[0]) for r in conn.execute("SELECT id FROM dashboards ORDER BY id")]
        return ids[: self.settings.people] or [1]

    def supervise(self) -> None:
        """The supervisor's loop (as in `agent-chat up`), until the soak is over; each killed
        replica's outage ends when it answers /readyz again."""
        assert self.supervisor is not None
        while not self.supervisor.stopping:
            self.supervisor.step()
            for outage in self.faults.outages:
                if outage.until is None and self._ready(self._by_name[outage.name]):
                    outage.until = time.time()
            time.sleep(0.2)

    def stop(self) -> None:
        if self.supervisor is not None:
            self.supervisor.stopping = True
            for child in self.supervisor.children:
                if child.proc is not None and child.proc.poll() is None:
                    child.proc.terminate()
            for child in self.supervisor.children:
                if child.proc is not None:
                    try:
                        child.proc.wait(timeout=15)
                    except subprocess.TimeoutExpired:
                        child.proc.kill()
        self.llm.stop()
        self.postgres.stop()

    # -- the faults ---------------------------------------------------------------------------

    def _ready(self, service: Service) -> bool:
        try:
            return httpx.get(service.url + service.health_path, timeout=2).is_success
        except httpx.HTTPError:
            return False

    def chaos(self) -> None:
        """At random moments: SIGKILL an agent or a backend that serves, or restart Postgres;
        until told to stop."""
        low, high = self.settings.fault_every_s
        while not self.stop_faults.wait(self.rng.uniform(low, high)):
            roll = self.rng.random()
            if roll < 0.15:
                self._restart_postgres()
                continue
            group = self.agents if roll < 0.6 else self.backends
            victim = self.rng.choice(group)
            # A backend may die while the other is down (the agents' writes wait for one); the
            # last agent serving is spared, or every person would only see the gateway's 502.
            others = [s for s in group if s is not victim]
            spare = group is self.agents and not any(self._ready(s) for s in others)
            if spare or not self._ready(victim):  # or still starting after its last kill
                self.faults.skipped += 1
                continue
            kind = self._name(victim).split(":")[0]
            self.faults.outages.append(Outage(kind, self._name(victim), time.time()))
            victim.kill()
            self.faults.kills[kind] += 1
            self._note(f"SIGKILL {self._name(victim)}")

    def _restart_postgres(self) -> None:
        down = self.rng.uniform(0.5, 3.0)
        self.postgres.halt()
        time.sleep(down)
        self.postgres.start()
        self.faults.postgres_restarts += 1
        self._note(f"Postgres restarted ({down:.1f} s down)")

    def _note(self, what: str) -> None:
        self.faults.log.append(f"{time.strftime('%H:%M:%S')} {what}")
        if self.settings.verbose:
            print(self.faults.log[-1], flush=True)

    def wait_all_ready(self, timeout: float = 600) -> None:  # a loaded machine: minutes
        deadline = time.monotonic() + timeout
        for service in [*self.backends, *self.agents]:
            while not self._ready(service):
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{self._name(service)} did not come back")
                time.sleep(0.2)


def _log_turn(verbose: bool) -> Any:
    def log(turn: Turn) -> None:
        if verbose:
            cut = " cut" if turn.cut else " dropped" if turn.dropped else ""
            seen = f" -> {turn.attached}" if turn.attached else ""
            print(f"  person {turn.person} {turn.kind}: {turn.outcome}{cut}{seen}", flush=True)

    return log


@dataclass
class Result:
    """What one soak did and found."""

    turns: int
    kills: int
    postgres_restarts: int
    restarts: dict[str, int]
    violations: dict[int, list[str]]
    crashes: list[str]

    @property
    def violated(self) -> int:
        return sum(len(v) for v in self.violations.values())


def run(settings: Settings) -> Result:
    """One soak: its figures and each invariant's violations (also printed)."""
    workdir = Path(tempfile.mkdtemp(prefix="agentchat-chaos-"))
    workdir.chmod(0o755)  # nginx's workers read the static folder
    soak = Soak(settings, workdir)
    result: Result | None = None
    try:
        result = _soak(soak, settings)
        return result
    finally:
        soak.stop()
        if result is not None and not result.violated and not result.crashes:
            shutil.rmtree(workdir, ignore_errors=True)
        else:  # the processes' logs, to read what went wrong
            print(f"logs kept in {workdir / 'logs'}")


def _soak(soak: Soak, settings: Settings) -> Result:
    began = time.monotonic()
    gateway_url = soak.start()
    print(f"stack ready in {time.monotonic() - began:.0f} s; soak for {settings.minutes} min")
    deploys_before = deploy_counts(soak.database_url)
    dashboards = soak._dashboards()
    log = _log_turn(settings.verbose)
    tally = Tally()  # every answer of the soak through the gateway (invariant 8)
    people = [
        Person(
            i, gateway_url, PASSWORD, dashboards[i % len(dashboards)], settings.seed + i, log, tally
        )
        for i in range(settings.people)
    ]
    supervising = threading.Thread(target=soak.supervise, daemon=True)
    supervising.start()
    deadline = time.monotonic() + settings.minutes * 60
    chaos = threading.Thread(target=soak.chaos, daemon=True)
    walkers = [
        threading.Thread(target=p.run, args=(deadline, settings.max_turns), daemon=True)
        for p in people
    ]
    soaked = time.monotonic()
    chaos.start()
    for walker in walkers:
        walker.start()
    for walker in walkers:
        walker.join(timeout=settings.minutes * 60 + 600)
    soak.stop_faults.set()
    chaos.join(timeout=60)
    soaked = time.monotonic() - soaked
    soak.wait_all_ready()
    time.sleep(LEASE_TTL_S + 1)  # every dead run's lease lapses
    for person in people:
        if not person.crash:
            person.close()
    crashes = [p.crash for p in people if p.crash]
    for crash in crashes:
        print(f"a simulated person failed (the soak's own code):\n{crash}")
    time.sleep(LEASE_TTL_S + 1)
    turns = [t for p in people for t in p.turns]
    audit = Audit(
        soak.database_url,
        turns,
        [r["body"] for r in soak.llm.script.recorded()],
        deploys_before=deploys_before,
        failures=tally.failures,
        outages=soak.faults.outages,
    )
    violations = audit.run()
    print(f"answers through the gateway: {dict(tally.answers.most_common())}")
    restarts = {c.name: c.restarts for c in soak.supervisor.children} if soak.supervisor else {}
    _report(settings, soaked, turns, soak.faults, restarts, len(soak.llm.requests), violations)
    return Result(
        turns=len(turns),
        kills=sum(soak.faults.kills.values()),
        postgres_restarts=soak.faults.postgres_restarts,
        restarts=restarts,
        violations=violations,
        crashes=crashes,
    )


def _report(
    settings: Settings,
    soaked: float,
    turns: list[Turn],
    faults: Faults,
    restarts: dict[str, int],
    model_calls: int,
    violations: dict[int, list[str]],
) -> None:
    kinds = Counter(t.kind for t in turns)
    finals = Counter(t.final for t in turns)
    print(f"\nchaos soak: {soaked:.0f} s of faults, {settings.people} people, seed {settings.seed}")
    print(f"turns: {len(turns)} ({', '.join(f'{k} {n}' for k, n in sorted(kinds.items()))})")
    print(f"outcomes: {', '.join(f'{k} {n}' for k, n in finals.most_common())}")
    cut = sum(t.cut for t in turns)
    dropped = sum(t.dropped for t in turns)
    print(f"streams cut by a fault: {cut}; dropped by the person and re-attached: {dropped}")
    kills = sum(faults.kills.values())
    print(
        f"faults: {kills} SIGKILLs ({dict(faults.kills)}), {faults.postgres_restarts} Postgres "
        f"restarts, {faults.skipped} skipped (the victim still starting, or the last agent)"
    )
    print(f"restarts by the supervisor: {restarts}; model calls: {model_calls}")
    for number, title in INVARIANTS.items():
        found = violations.get(number, [])
        print(f"invariant {number} ({title}): {len(found)} violations")
        for line in found[:20]:
            print(f"    {line}")
    summary = {
        "turns": len(turns),
        "kills": kills,
        "postgres_restarts": faults.postgres_restarts,
        "violations": {n: len(v) for n, v in violations.items()},
    }
    print("summary " + json.dumps(summary))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--short", action="store_true", help="the test suite's bounded run")
    parser.add_argument("--minutes", type=float, default=10.0)
    parser.add_argument("--people", type=int, default=6)
    parser.add_argument(
        "--max-turns",
        type=int,
        default=5000,
        help="per person: a safety bound; the minutes end a soak (a person makes 100-120 turns "
        "a minute on an idle machine)",
    )
    parser.add_argument("--fault-every", type=float, nargs=2, default=(4.0, 8.0))
    parser.add_argument("--seed", type=int, default=37)
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args(argv)
    if args.short:
        settings = Settings(**{**SHORT.__dict__, "verbose": args.verbose})
    else:
        settings = Settings(
            minutes=args.minutes,
            people=args.people,
            max_turns=args.max_turns,
            fault_every_s=tuple(args.fault_every),
            seed=args.seed,
            verbose=args.verbose,
        )
    result = run(settings)
    return 1 if result.violated or result.crashes else 0


if __name__ == "__main__":
    os.chdir(ROOT)
    sys.exit(main())
