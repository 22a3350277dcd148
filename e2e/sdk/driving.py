"""What the SDK drivers (``driver.py``, ``trainer_driver.py``) share, importing nothing of the
project (each runs on its SDK's own virtualenv, with this folder first on ``sys.path``):

* :func:`run`: the scenario (JSON) from stdin, ``drive(scenario, out)``, then ``out`` as one
  JSON document on stdout, an exception reported in it as ``error`` (type and message);
* :func:`delete_and_list`: delete a job, then list until it is gone (60 s at most); the last
  list goes into ``out["listed_after_delete"]``.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from typing import Any

Out = dict[str, Any]


def delete_and_list(delete: Callable[[], object], names: Callable[[], list[str]], name: str,
                    out: Out) -> None:
    delete()
    deadline = time.monotonic() + 60
    while True:
        listed = names()
        if name not in listed or time.monotonic() > deadline:
            break
        time.sleep(0.2)
    out["listed_after_delete"] = listed


def run(drive: Callable[[dict[str, Any], Out], None]) -> int:
    scenario = json.load(sys.stdin)
    out: Out = {}
    try:
        drive(scenario, out)
    except Exception as exc:  # reported to the test, which shows it
        out["error"] = f"{type(exc).__name__}: {exc}"
    json.dump(out, sys.stdout, sort_keys=True, default=str)
    sys.stdout.write("\n")
    return 0
