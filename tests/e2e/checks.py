"""Checks the browser tests share: axe-core's accessibility rules and horizontal overflow."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from playwright.sync_api import Browser, BrowserContext, Page

from tests.support.processes import ROOT

AXE = ROOT / "frontend" / "node_modules" / "axe-core" / "axe.min.js"
SERIOUS = {"serious", "critical"}
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1400, "height": 900}


def new_context(browser: Browser, gateway: str, viewport: dict[str, int]) -> BrowserContext:
    """A context at this viewport that may use the clipboard and can run axe-core.

    axe-core is added as an init script (before any page script), which the page's CSP does not
    govern, so the policy under test stays exactly as nginx sends it.
    """
    context = browser.new_context(
        base_url=gateway,
        locale="en-US",
        viewport=viewport,
        permissions=["clipboard-read", "clipboard-write"],
    )
    context.set_default_timeout(15_000)
    context.add_init_script(path=str(Path(AXE)))
    return context


def axe_findings(page: Page) -> list[dict[str, Any]]:
    """Serious and critical axe-core violations on the page as it is now."""
    result = page.evaluate(
        "async () => (await axe.run(document, {resultTypes: ['violations']})).violations"
        ".map(v => ({id: v.id, impact: v.impact, help: v.help,"
        " nodes: v.nodes.slice(0, 5).map(n => n.target.join(' '))}))"
    )
    return [v for v in result if v["impact"] in SERIOUS]


def horizontal_overflow(page: Page) -> int:
    """How many CSS pixels the page is wider than the viewport (0 when nothing overflows)."""
    return int(page.evaluate("document.scrollingElement.scrollWidth - window.innerWidth"))
