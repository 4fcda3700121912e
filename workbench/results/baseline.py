"""A check's figures as a baseline: made from its runs, written and read back as JSON.

`workbench check` (drive/check.py) measures three runs: the maximum throughput of workloads A
and C and the latency at a paced rate. `document` turns them into the figures a later check is
held to, each with its per-second series (the measured window's intervals, significance.py):

    {"format": "workbench-check-baseline/1", "workbench": "0.9.0", "created": 1796...,
     "db": "cassandra", "cluster": "lab" | null, "workload_digest": "sha256 hex",
     "figures": {"throughput A": {"unit": "ops/s", "value": mean, "series": [per second...]},
                 "throughput C": ..., "p99 READ": {"unit": "µs", ...}, "p99 UPDATE": ...,
                 "errors": {"unit": "operations", "value": failed, "operations": all}},
     "manifests": {"A": {...}, "C": {...}, "paced": {...}},   (results/manifest.py)
     "properties": {"A": {...}, "C": {...}, "paced": {...}},
     "runs": {"A": run ID or null, ...}}

The p99 figures are response times (Intended-READ, Intended-UPDATE: coordinated omission
corrected, from each operation's intended start) at the paced rate. `read` refuses a file that is
not one (one line with the fix, exit status 2).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workbench import __version__
from workbench.errors import ConfigError
from workbench.results.model import RunResult
from workbench.results.significance import run_series

FORMAT = "workbench-check-baseline/1"
PHASES = ("A", "C", "paced")
# figure -> (phase, figure of significance.run_series, operation, unit)
SERIES = {
    "throughput A": ("A", "throughput", "", "ops/s"),
    "throughput C": ("C", "throughput", "", "ops/s"),
    "p99 READ": ("paced", "p99", "Intended-READ", "µs"),
    "p99 UPDATE": ("paced", "p99", "Intended-UPDATE", "µs"),
}
FIGURES = (*SERIES, "errors")


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def document(results: Mapping[str, RunResult], *, db: str, cluster: str | None, workload_digest: str,
             run_ids: Mapping[str, int | None] | None = None) -> dict[str, Any]:
    """The baseline document of a check's three runs (PHASES -> RunResult)."""
    figures: dict[str, Any] = {}
    for name, (phase, figure, operation, unit) in SERIES.items():
        series = run_series(results[phase], figure, operation)
        figures[name] = {"unit": unit, "value": _mean(series), "series": series}
    figures["errors"] = {"unit": "operations", "value": sum(r.error_count() for r in results.values()),
                         "operations": sum(r.operations for r in results.values())}
    return {
        "format": FORMAT, "workbench": __version__, "created": time.time(), "db": db, "cluster": cluster,
        "workload_digest": workload_digest, "figures": figures,
        "manifests": {p: results[p].manifest for p in PHASES},
        "properties": {p: dict(results[p].properties) for p in PHASES},
        "runs": {p: (run_ids or {}).get(p) for p in PHASES},
    }


def write(doc: Mapping[str, Any], path: str | Path) -> None:
    try:
        Path(path).write_text(json.dumps(doc, indent=1, default=str) + "\n", encoding="utf-8")
    except OSError as exc:
        raise ConfigError(f"--save-baseline {path}: {exc.strerror or exc}",
                          "choose a path you can write to") from None


def read(path: str | Path) -> dict[str, Any]:
    """A baseline file, checked: its format tag and a figure set this workbench knows."""
    fix = "give a file that `workbench check --save-baseline FILE` wrote"
    try:
        doc = json.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"--baseline {path}: {exc.strerror or exc}", fix) from None
    except (ValueError, UnicodeDecodeError):
        raise ConfigError(f"--baseline {path} is not JSON, so not a check's baseline", fix) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        tag = doc.get("format") if isinstance(doc, dict) else None
        raise ConfigError(f"--baseline {path} is not a check's baseline (format {tag!r}, not {FORMAT!r})",
                          fix)
    figures = doc.get("figures")
    if not isinstance(figures, dict) or set(figures) != set(FIGURES) or not all(
            isinstance(figures[f], dict) for f in FIGURES):
        got = ", ".join(sorted(figures)) if isinstance(figures, dict) else "none"
        raise ConfigError(f"--baseline {path} has other figures ({got}) than this check's "
                          f"({', '.join(FIGURES)})", "save a new baseline with this workbench's check")
    return doc
