"""A check held to its baseline: one verdict per figure, as a table and as JUnit XML.

Each series figure (throughput A and C, p99 READ and UPDATE at the paced rate) is compared with
significance.compare_series (the 95% interval of the difference of the per-second means, their
autocorrelation counted: effective sample size, Geyer 1992; Welch) and significance.verdict with
its tolerance: throughput (both workloads) -10%, p99 +25% by default.

The errors figure counts failed operations over the check's three runs. Its tolerance is "any"
by default: worse when the check has at least one failed operation and the baseline has none,
better when the check has none and the baseline had some, same otherwise. A number instead
(`--tolerance errors=1`) is in percentage points of the failed share: worse when the check's
share of failed operations exceeds the baseline's by more than that, better when it is lower.

Without a baseline every verdict is "no baseline" (and the exit status 0).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich import box
from rich.table import Table

from workbench.errors import ConfigError
from workbench.results.baseline import SERIES
from workbench.results.significance import compare_series, verdict
from workbench.results.verdicts import STYLES

DEFAULT_TOLERANCES: dict[str, float | str] = {"throughput": 10.0, "p99": 25.0, "errors": "any"}
NO_BASELINE = "no baseline"


@dataclass(frozen=True)
class FigureVerdict:
    figure: str
    unit: str
    value: float | None  # this check's (mean per second; errors: failed operations)
    baseline: float | None
    pct: float | None  # difference in percent of the baseline
    low: float | None  # its 95% interval, percent
    high: float | None
    verdict: str  # better / same / inconclusive / worse / unknown / no baseline
    tolerance: str  # "-10%", "+25%", "any"
    note: str = ""


def parse_tolerances(items: Sequence[str],
                     defaults: Mapping[str, float | str] = DEFAULT_TOLERANCES) -> dict[str, float | str]:
    """--tolerance FIGURE=PERCENT ...: check's throughput, p99 or errors (errors also takes "any");
    `defaults` names the figures and their defaults (runs compare: significance.TOLERANCES)."""
    out = dict(defaults)
    for item in items:
        name, sep, value = item.partition("=")
        if name not in defaults or not sep:
            raise ConfigError(f"--tolerance {item}: unknown figure {name!r}" if sep else
                              f"--tolerance {item} is not FIGURE=PERCENT",
                              f"one of {', '.join(defaults)}, e.g. --tolerance throughput=5 p99=30")
        if name == "errors" and value == "any":
            out[name] = "any"
            continue
        try:
            out[name] = abs(float(value))
        except ValueError:
            raise ConfigError(f"--tolerance {item}: {value!r} is not a number of percent",
                              "e.g. --tolerance throughput=5 (errors also takes any)") from None
    return out


def judge(check: Mapping[str, Any], baseline: Mapping[str, Any] | None,
          tolerances: Mapping[str, float | str] = DEFAULT_TOLERANCES) -> list[FigureVerdict]:
    """One verdict per figure (baseline.FIGURES order) of the check's document against the
    baseline's (None: no baseline)."""
    out = []
    for name, (_, figure, _, unit) in SERIES.items():
        kind = "throughput" if figure == "throughput" else "p99"
        tolerance = float(tolerances[kind])
        shown = f"{'-' if kind == 'throughput' else '+'}{tolerance:g}%"
        mine = check["figures"][name]
        if baseline is None:
            out.append(FigureVerdict(name, unit, mine["value"], None, None, None, None, NO_BASELINE, shown))
            continue
        theirs = baseline["figures"][name]
        d = compare_series(theirs.get("series") or [], mine.get("series") or [])
        out.append(FigureVerdict(name, unit, mine["value"], theirs.get("value"), d.pct, d.pct_low, d.pct_high,
                                 verdict(d, tolerance, kind == "throughput"), shown, d.reason))
    out.append(_errors(check, baseline, tolerances["errors"]))
    return out


def _share(errors: Mapping[str, Any]) -> float:
    return 100.0 * (errors.get("value") or 0) / max(errors.get("operations") or 0, 1)


def _errors(check: Mapping[str, Any], baseline: Mapping[str, Any] | None,
            tolerance: float | str) -> FigureVerdict:
    mine = check["figures"]["errors"]
    shown = "any" if tolerance == "any" else f"+{float(tolerance):g} points"
    if baseline is None:
        return FigureVerdict("errors", "operations", mine["value"], None, None, None, None, NO_BASELINE,
                             shown)
    theirs = baseline["figures"]["errors"]
    a, b = theirs.get("value") or 0, mine.get("value") or 0
    if tolerance == "any":
        said = "worse" if b and not a else "better" if a and not b else "same"
    else:
        gap = _share(mine) - _share(theirs)
        said = "worse" if gap > float(tolerance) else "better" if gap < 0 else "same"
    return FigureVerdict("errors", "operations", b, a, None, None, None, said, shown,
                         f"failed {_share(mine):.3g}% (baseline {_share(theirs):.3g}%)")


def worse(verdicts: Sequence[FigureVerdict]) -> list[FigureVerdict]:
    return [v for v in verdicts if v.verdict == "worse"]


def _number(value: float | None, unit: str) -> str:
    if value is None:
        return "-"
    return f"{value:,.0f} {unit}" if abs(value) >= 100 or unit == "operations" else f"{value:,.3g} {unit}"


def table(verdicts: Sequence[FigureVerdict], baseline_said: str) -> Table:
    """figure (tolerance), this check, baseline, difference [95% interval], verdict."""
    t = Table(title=f"workbench check: against {baseline_said}"[:100], title_justify="left",
              header_style="bold",
              box=box.SIMPLE_HEAD, pad_edge=False, caption="95% interval of the difference of the per-second "
              "means, autocorrelation counted (effective sample size, Geyer 1992; Welch). worse: the whole "
              "interval beyond the tolerance; inconclusive: it reaches past the tolerance (a longer "
              "check, without --quick, narrows it); same: it lies within.", caption_justify="left")
    for name in ("figure (tolerance)", "this check", "baseline", "difference [95% interval]", "verdict"):
        t.add_column(name, justify="right" if name in ("this check", "baseline") else "left", no_wrap=True)
    for v in verdicts:
        if v.pct is not None and v.low is not None and v.high is not None:
            diff = f"{v.pct:+.1f}% [{v.low:+.1f}, {v.high:+.1f}]"
        else:
            diff = v.note or ("-" if v.pct is None else f"{v.pct:+.1f}%")
        style = STYLES.get(v.verdict, "")
        t.add_row(f"{v.figure} ({v.tolerance})", _number(v.value, v.unit), _number(v.baseline, v.unit), diff,
                  f"[{style}]{v.verdict}[/]" if style else v.verdict)
    return t


def junit(verdicts: Sequence[FigureVerdict], path: str | Path, baseline_said: str) -> None:
    """JUnit XML: one <testcase> per figure, a <failure> for each worse one, <skipped> without a
    baseline or an interval."""
    bad = worse(verdicts)
    skipped = [v for v in verdicts if v.verdict in (NO_BASELINE, "unknown")]
    suite = ET.Element("testsuite", name="workbench check", tests=str(len(verdicts)),
                       failures=str(len(bad)), errors="0", skipped=str(len(skipped)))
    ET.SubElement(ET.SubElement(suite, "properties"), "property", name="baseline", value=baseline_said)
    for v in verdicts:
        case = ET.SubElement(suite, "testcase", classname="workbench.check", name=v.figure)
        text = (f"{v.figure}: this check {_number(v.value, v.unit)}, baseline {_number(v.baseline, v.unit)}"
                + (f", difference {v.pct:+.1f}% [{v.low:+.1f}, {v.high:+.1f}]"
                   if v.pct is not None and v.low is not None and v.high is not None else "")
                + (f", {v.note}" if v.note else "") + f", tolerance {v.tolerance}: {v.verdict}")
        if v.verdict == "worse":
            ET.SubElement(case, "failure", message=text, type="worse")
        elif v in skipped:
            ET.SubElement(case, "skipped", message=text)
        ET.SubElement(case, "system-out").text = text
    root = ET.Element("testsuites", name="workbench check", tests=str(len(verdicts)), failures=str(len(bad)))
    root.append(suite)
    try:
        ET.ElementTree(root).write(path, encoding="utf-8", xml_declaration=True)
    except OSError as exc:
        raise ConfigError(f"--junit {path}: {exc.strerror or exc}",
                          "choose a path you can write to") from None

