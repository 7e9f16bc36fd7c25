"""`agent-chat eval`: the tool-selection accuracy of the configured model over a case file.

Exit status: 0 when every case ran (whatever the score), 1 when `--fail-under` was given and
the accuracy is below it, 2 when nothing could run (bad case file, backend down, sign-in
refused), 130 when interrupted. Results go to stdout; progress and the per-language line go to
stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import sys
from pathlib import Path
from typing import Any

from agent.config import ROOT
from agent.config import Settings as AgentSettings
from agent.evaluation.cases import CaseFileError, NumberedCase, load_cases
from backend.config import DEV_SEED_PASSWORDS
from backend.config import Settings as BackendSettings

DEFAULT_CASES = ROOT / "evals" / "tool_selection.jsonl"
DEFAULT_CONCURRENCY = 4
QUIET_LOGGERS = ("httpx", "openai", "langchain", "langgraph")


def _positive(value: str) -> int:
    number = int(value)
    if number < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return number


def register(sub: Any) -> None:
    """Add the `eval` subcommand to the CLI's subparsers."""
    p = sub.add_parser("eval", help="tool-selection accuracy of the configured model")
    p.add_argument(
        "--cases", type=Path, default=DEFAULT_CASES, help="JSONL case file (default: %(default)s)"
    )
    p.add_argument("--json", action="store_true", help="print one JSON object instead of text")
    p.add_argument(
        "--concurrency",
        type=_positive,
        default=DEFAULT_CONCURRENCY,
        help="cases run at once (default: %(default)s)",
    )
    p.add_argument(
        "--user",
        default=os.environ.get("EVAL_USER", "admin"),
        help="the user the agent acts for (default: $EVAL_USER or admin); "
        "password from $EVAL_PASSWORD, else the demo user's SEED_<ROLE>_PASSWORD",
    )
    p.add_argument(
        "--fail-under",
        type=float,
        metavar="PCT",
        help="exit with status 1 when the accuracy is below PCT percent",
    )
    p.set_defaults(func=run)


def password_of(user: str) -> str:
    """$EVAL_PASSWORD, else a demo user's seed password (its default only in development)."""
    if password := os.environ.get("EVAL_PASSWORD"):
        return password
    if user in DEV_SEED_PASSWORDS and (password := BackendSettings().seed_password(user)):
        return password
    raise ValueError(f"set EVAL_PASSWORD: the password of {user!r} is not known")


def model_label(settings: AgentSettings) -> str:
    if not settings.llm_api_base:
        return "the offline demo model"
    return f"{settings.model_name} at {settings.llm_api_base}"


def _shown(path: Path) -> Path:
    """The path as a person would type it: relative when it is under the working directory."""
    try:
        return path.resolve().relative_to(Path.cwd())
    except ValueError:
        return path


def run(args: argparse.Namespace) -> int:
    args.cases = _shown(args.cases)
    try:
        cases = load_cases(args.cases)
    except CaseFileError as exc:
        print(f"agent-chat eval: {exc}", file=sys.stderr)
        return 2
    password = password_of(args.user)
    settings = AgentSettings()
    for name in QUIET_LOGGERS:
        logging.getLogger(name).setLevel(logging.WARNING)
    print(
        f"agent-chat eval: {len(cases)} cases from {args.cases}, {model_label(settings)}, "
        f"as {args.user}, {args.concurrency} at a time",
        file=sys.stderr,
    )
    return _evaluate(args, settings, cases, password)


def _evaluate(
    args: argparse.Namespace, settings: AgentSettings, cases: list[NumberedCase], password: str
) -> int:
    # The agent graph (LangChain, the model client) is loaded only once the case file is good.
    from tqdm import tqdm

    from agent.evaluation import report
    from agent.evaluation.identity import SetupError
    from agent.evaluation.runner import CaseOutcome, evaluate

    with tqdm(total=len(cases), file=sys.stderr, unit="case", desc="eval") as bar:
        passed = 0

        def done(outcome: CaseOutcome) -> None:
            nonlocal passed
            passed += outcome.passed
            bar.set_postfix_str(f"{passed} passed", refresh=False)
            bar.update(1)

        try:
            outcomes = asyncio.run(
                evaluate(
                    settings,
                    cases,
                    username=args.user,
                    password=password,
                    concurrency=args.concurrency,
                    on_done=done,
                )
            )
        except SetupError as exc:
            bar.close()
            print(f"agent-chat eval: {exc}", file=sys.stderr)
            return 2
        except KeyboardInterrupt:
            bar.close()
            print("agent-chat eval: interrupted; no report", file=sys.stderr)
            return 130
    print(f"by language: {report.by_lang_line(outcomes)}", file=sys.stderr)
    if args.json:
        print(json.dumps(report.summary(outcomes), ensure_ascii=False))
    else:
        print(report.text(outcomes))
    accuracy = 100 * sum(o.passed for o in outcomes) / len(outcomes)
    if args.fail_under is not None and accuracy < args.fail_under:
        print(f"agent-chat eval: accuracy {accuracy:.1f}% < {args.fail_under:g}%", file=sys.stderr)
        return 1
    return 0
