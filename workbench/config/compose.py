"""A workload being composed: a base YCSB file plus the values a user changed, free of any UI.

The Workload screen edits one of these; everything it shows comes from here and from the
command line's own code: `check()` runs `spec_from_args` (the messages are the command line's)
and says which field an error belongs to, `command_line()` is the equivalent `workbench`
invocation, `workload_text()` the YCSB file to save.

A low layer: what lives above it is the caller's to look up and hand in as data (a cluster's
overrides from drive.targets.cluster_overrides; the key-popularity preview is the UI's). Every
default is WorkloadSpec's (YCSB's); the base file is parsed once and again only when it changed.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Sequence
from dataclasses import MISSING, dataclass, field, fields
from pathlib import Path

from workbench.config import catalog
from workbench.config.properties import Origin, Properties, merge, parse_override
from workbench.config.spec import KEYS, WorkloadSpec, build_spec
from workbench.errors import WorkbenchError

WORKLOADS = catalog.SHIPPED_WORKLOADS

# (property, label) in the order the form shows them.
MIX = (("readproportion", "read"), ("updateproportion", "update"), ("insertproportion", "insert"),
       ("scanproportion", "scan"), ("readmodifywriteproportion", "read-modify-write"),
       ("deleteproportion", "delete"))
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
FIELDS = tuple(k for k, _ in MIX + SIZES + LOAD + PARAMS) + ("requestdistribution", "db")


def default_text(value: object) -> str:
    """A property's value as a workload file writes it: 0 rather than 0.0, true rather than True."""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def spec_defaults() -> dict[str, str]:
    """Every property WorkloadSpec knows with a default, by property name: YCSB's defaults, the
    ones a run uses for what its files do not set."""
    attrs = {f.name: f.default for f in fields(WorkloadSpec) if f.default is not MISSING}
    return {key: default_text(attrs[k.attr]) for key, k in KEYS.items()
            if k.attr in attrs and attrs[k.attr] is not None}


# What a field shows when the base file does not set it.
DEFAULTS = {key: value for key, value in spec_defaults().items() if key in FIELDS}
# Parsed base files: path -> ((mtime_ns, size), properties); never mutated once stored.
_BASE_FILES: dict[str, tuple[tuple[int, int], Properties]] = {}


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
        return {**DEFAULTS, **base_properties(self.base).as_dict()}

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

    def overrides(self, cluster: Sequence[str] = ()) -> list[str]:
        """The -p overrides: `cluster`, the overrides of the cluster named `self.cluster` (the
        caller looks them up: drive.targets.cluster_overrides), then the changes."""
        # With a cluster, its binding is the database: a db chosen before does not apply.
        return list(cluster) + [f"{k}={v}" for k, v in self.changes.items()
                                if not (self.cluster and k == "db")]

    def check(self, phase: str = "run", cluster: Sequence[str] = ()) \
            -> tuple[WorkloadSpec | None, str | None, str | None]:
        """(spec, None, None) when the command line would accept it, else (None, the command
        line's message, the field it names, or None when it names none). `cluster`: as for
        overrides(). The same as spec_from_args, without reading the base file again."""
        try:
            props = base_properties(self.base)
            for item in self.overrides(cluster):
                key, value = parse_override(item)
                props.set(key, value, Origin("-p"))
            spec = build_spec(props, phase)
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
        values = base_properties(self.base).as_dict()
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


def base_properties(path: str) -> Properties:
    """The properties of base file `path` (a copy to change at will), parsed again only when the
    file's mtime or size changed: the Workload screen asks at every change of a field. A file
    that cannot be read raises the command line's ConfigError."""
    file = catalog.workload_file(path)
    try:
        stat = file.stat()
    except OSError:
        return merge([path], [])  # not found, or not readable: merge says so
    stamp = (stat.st_mtime_ns, stat.st_size)
    cached = _BASE_FILES.get(path)
    if cached is None or cached[0] != stamp:
        if len(_BASE_FILES) > 64:
            _BASE_FILES.clear()
        cached = _BASE_FILES[path] = (stamp, merge([path], []))
    return cached[1].copy()


def _relative(path: str) -> str:
    """How a -P file is written on a command line: `workloads/NAME` for a workload found by name
    (it resolves the same way from any directory), else relative to here when it can be."""
    if catalog.available("workloads").get(Path(path).name) == Path(path):
        return f"workloads/{Path(path).name}"
    try:
        return str(Path(path).resolve().relative_to(Path.cwd()))
    except ValueError:
        return path
