"""The server processes' collector settings (common/heap.py), in a fresh interpreter each:
an app built inside another process (a test) leaves its collector alone; a server's start-up
objects are frozen and young collections are rarer."""

from __future__ import annotations

import json
import subprocess
import sys

PROBE = """
import gc, json
from common import heap
before = gc.get_threshold()[0]
heap.settle()
idle = [gc.get_freeze_count(), gc.get_threshold()[0]]
heap.serving()
heap.settle()
serving = [gc.get_freeze_count(), gc.get_threshold()[0]]
print(json.dumps({"default": before, "idle": idle, "serving": serving}))
"""


def test_only_a_server_freezes_its_start_up_objects_and_widens_young_collections():
    done = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout)
    assert got["idle"] == [0, got["default"]]  # not a server: untouched
    frozen, young = got["serving"]
    assert frozen > 1000 and young == 50_000
