"""Large CPU tensors on huge pages in the lab's processes (informer_lab/hugepages.py): the setting is in force before torch is
imported by the server or the CLI, a user's own value is kept, and where the kernel offers huge pages a large tensor
gets them."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from informer_lab.hugepages import VARIABLE, prefer_huge_pages, worker_setting

ROOT = Path(__file__).resolve().parents[1]

# Records the variable's value at the moment anything first imports torch, then runs `entry` and imports torch.
SPY = """
import json, os, sys
seen = []
class Spy:
    def find_spec(self, name, path=None, target=None):
        if name == "torch" and not seen:
            seen.append(os.environ.get({variable!r}))
        return None
sys.meta_path.insert(0, Spy())
{entry}
import torch
print(json.dumps(seen))
"""


def _fresh(code: str, env: dict[str, str] | None = None) -> str:
    environment = {k: v for k, v in os.environ.items() if k != VARIABLE} | (env or {})
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=environment, capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize("entry", ["import runpy; runpy.run_path('app.py')",
                                   "from informer_lab import cli; cli.build_parser()"])
def test_the_server_and_the_cli_set_it_before_torch_is_imported(entry):
    assert json.loads(_fresh(SPY.format(variable=VARIABLE, entry=entry))) == ["1"]


def test_a_value_the_user_set_is_kept(monkeypatch):
    monkeypatch.setenv(VARIABLE, "0")
    assert prefer_huge_pages() == "0" and os.environ[VARIABLE] == "0"
    assert worker_setting() == {VARIABLE: "0"}
    monkeypatch.delenv(VARIABLE)
    assert worker_setting() == {VARIABLE: "1"} and VARIABLE not in os.environ  # read, not set, for a worker


def _thp_mode() -> str | None:
    try:
        text = Path("/sys/kernel/mm/transparent_hugepage/enabled").read_text()
    except OSError:
        return None
    return text[text.index("[") + 1:text.index("]")] if "[" in text else None


HUGE = """
import re, torch
x = torch.ones(64 * 2**20 // 4)  # 64 MiB, written
rollup = open("/proc/self/smaps_rollup").read()
print(int(re.search(r"AnonHugePages:\\s+(\\d+) kB", rollup).group(1)))
"""


@pytest.mark.skipif(_thp_mode() not in ("madvise", "always"), reason="the kernel offers no transparent huge pages")
def test_a_large_tensor_gets_huge_pages_in_a_process_that_prefers_them():
    huge_kib = int(_fresh("from informer_lab.hugepages import prefer_huge_pages; prefer_huge_pages()\n" + HUGE))
    assert huge_kib >= 2048  # at least one 2 MB page (the kernel may fall back for some, when memory is fragmented)
