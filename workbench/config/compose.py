"""A workload being composed: a base YCSB file plus the values a user changed, free of any UI.

The Workload screen edits one of these; everything it shows comes from here and from the
command line's own code: `check()` runs `spec_from_args` (the messages are the command line's)
and says which field an error belongs to, `command_line()` is the equivalent `workbench`
invocation, `workload_text()` the YCSB file to save, `curve()` the key-popularity preview from
the same generators as `workbench keys`.
"""

from __future__ import annotations

import dataclasses
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

from workbench.config import catalog
from workbench.config.properties import merge
from workbench.config.spec import WorkloadSpec, spec_from_args
from workbench.errors import WorkbenchError

WORKLOADS = catalog.SHIPPED_WORKLOADS

# (property, label) in the order the form shows them.
MIX = (("readproportion", "read"), ("updateproportion", "update"), ("insertproportion", "insert"),
       ("scanproportion", "scan"), ("readmodifywriteproportion", "read-modify-write"),
       ("deleteproportion", "delete"))
DISTRIBUTIONS = ("zipfian", "uniform", "latest", "hotspot", "exponential", "sequential")
DISTRIBUTION_PARAMS = {  # the parameters that matter for each distribution
    "zipfian": ("zipfian.constant",),
    "latest": ("zipfian.constant",),
    "hotspot": ("hotspotdatafraction", "hotspotopnfraction"),
    "exponential": ("exponential.percentile", "exponential.frac"),
}
SIZES = (("recordcount", "records"), ("operationcount", "operations"),
         ("maxexecutiontime", "max seconds (0: none)"), ("fieldcount", "fields"),
         ("fieldlength", "field length (bytes)"))
LOAD = (("threadcount", "lanes"), ("target", "target ops/s (0: none)"), ("workers", "workers"))
PARAMS = (("zipfian.constant", "zipfian constant"), ("hotspotdatafraction", "hot data fraction"),
          ("hotspotopnfraction", "hot operations fraction"),
          ("exponential.percentile", "exponential percentile"), ("exponential.frac", "exponential frac"))
DEFAULTS = {"zipfian.constant": "0.99", "hotspotdatafraction": "0.2", "hotspotopnfraction": "0.8",
            "exponential.percentile": "95", "exponential.frac": "0.8571428571", "maxexecutiontime": "0",
            "threadcount": "1", "target": "0", "workers": "1", "fieldcount": "10", "fieldlength": "100",
            "deleteproportion": "0", "readmodifywriteproportion": "0", "scanproportion": "0",
            "insertproportion": "0", "updateproportion": "0", "readproportion": "0",
            "requestdistribution": "uniform", "db": "memory"}
FIELDS = tuple(k for k, _ in MIX + SIZES + LOAD + PARAMS) + ("requestdistribution", "db")
CURVE_FRACTIONS = (0.001, 0.01, 0.1, 0.5)


def shipped_workloads() -> list[str]:
    """Workload names to start from: the user's own (./workloads, ~/.config/workbench/workloads)
    and the shipped ones."""
    return list(catalog.available("workloads"))


def workload_path(name: str) -> str:
    return str(catalog.available("workloads").get(name, WORKLOADS / name))


@dataclass
class Composition:
    """A base file (`-P`) and the properties changed from it (`-p`), plus `--cluster`."""

    base: str = str(WORKLOADS / "workloada")
    changes: dict[str, str] = field(default_factory=dict)
    cluster: str = ""

    def base_values(self) -> dict[str, str]:
        """What the base file says, with YCSB's defaults for what it does not."""
        return {**DEFAULTS, **merge([self.base], []).as_dict()}

    def copy(self) -> Composition:
        return Composition(self.base, dict(self.changes), self.cluster)

    def value(self, key: str) -> str:
        return self.changes.get(key, self.base_values().get(key, ""))

    def set(self, key: str, value: str) -> None:
        """Record a field's value; one equal to the base file's is no change at all."""
        value = value.strip()
        if value == self.base_values().get(key, None):
            self.changes.pop(key, None)
        else:
            self.changes[key] = value

    def overrides(self) -> list[str]:
        out = []
        if self.cluster:
            from workbench.drive.targets import cluster_overrides

            out += cluster_overrides(self.cluster)
        # With a cluster, its binding is the database: a db chosen before does not apply.
        return out + [f"{k}={v}" for k, v in self.changes.items() if not (self.cluster and k == "db")]

    def check(self, phase: str = "run") -> tuple[WorkloadSpec | None, str | None, str | None]:
        """(spec, None, None) when the command line would accept it, else (None, the command
        line's message, the field it names, or None when it names none)."""
        try:
            spec, _ = spec_from_args([self.base], self.overrides(), phase)
        except WorkbenchError as exc:
            return None, str(exc), field_of(str(exc))
        return spec, None, None

    def command_line(self, phase: str = "run") -> str:
        args = ["workbench", phase, "-P", _relative(self.base)]
        if self.cluster:
            args += ["--cluster", self.cluster]
        for k, v in self.changes.items():
            if not (self.cluster and k == "db"):
                args += ["-p", f"{k}={v}"]
        return " ".join(shlex.quote(a) for a in args)

    def workload_text(self) -> str:
        """A YCSB workload file: the base file's properties with the changes applied."""
        lines = [f"# composed with workbench from {_relative(self.base)}"]
        if self.cluster:
            lines.append(f"# run with: --cluster {self.cluster}")
        values = merge([self.base], []).as_dict()
        values.update(self.changes)
        lines += [f"{k}={v}" for k, v in values.items()]
        return "\n".join(lines) + "\n"


def field_of(message: str) -> str | None:
    """The first form field a command-line message names (`recordcount='x' is not ...`)."""
    best: tuple[int, str] | None = None
    for key in FIELDS:
        found = re.search(rf"(?<![\w.]){re.escape(key)}(?![\w])", message)
        if found and (best is None or found.start() < best[0]):
            best = (found.start(), key)
    return best[1] if best else None


def preview_samples(keys: int) -> int:
    """Draws for a preview: enough per key that the hottest keys are not just lucky ones
    (with 2 draws per key, uniform keys look 2x hotter than they are), at most 100,000."""
    return min(max(20_000, 20 * keys), 100_000)


def curve(spec: WorkloadSpec, samples: int | None = None) -> list[tuple[float, float]]:
    """(fraction of keys, share of requests on that many hottest keys), from the same draws
    as `workbench keys` (fixed seed: the same spec always gives the same preview)."""
    from workbench.core.popularity import popularity

    samples = samples or preview_samples(spec.insert_total)
    if spec.seed is None:  # a preview must not flicker between two looks at the same spec
        spec = dataclasses.replace(spec, seed=1)
    pop = popularity(spec, samples, first=0)
    ranked = [n for _, n in pop.counts.most_common()]
    out = []
    for fraction in CURVE_FRACTIONS:
        k = max(1, int(pop.keys * fraction))
        out.append((fraction, sum(ranked[:k]) / samples))
    return out


def _relative(path: str) -> str:
    """How a -P file is written on a command line: `workloads/NAME` for a workload found by name
    (it resolves the same way from any directory), else relative to here when it can be."""
    if catalog.available("workloads").get(Path(path).name) == Path(path):
        return f"workloads/{Path(path).name}"
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return path
