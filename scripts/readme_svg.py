"""Regenerate docs/workbench-run.svg, the terminal capture shown in the README.

It runs a real `workbench run` on the memory binding and records its stderr and stdout.
    python scripts/readme_svg.py
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from rich.console import Console
from rich.text import Text

ROOT = Path(__file__).resolve().parents[1]
COMMAND = ["run", "-P", "workloads/workloada", "-p", "recordcount=10000",
           "-p", "operationcount=300000", "-threads", "8", "-p", "status.interval=1"]


def main() -> None:
    proc = subprocess.run([sys.executable, "-m", "workbench", *COMMAND], capture_output=True,
                          text=True, cwd=ROOT, check=True)
    console = Console(record=True, width=150, file=open("/dev/null", "w"))
    console.print(Text("$ workbench " + " ".join(COMMAND), style="bold green"))
    console.print(Text(proc.stderr.rstrip(), style="yellow"), soft_wrap=True)
    console.print(Text(proc.stdout.rstrip()), soft_wrap=True)
    out = ROOT / "docs" / "workbench-run.svg"
    console.save_svg(str(out), title="workbench run (memory binding)")
    print(f"wrote {out}")


if __name__ == "__main__":
    main()
