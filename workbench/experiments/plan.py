"""Experiment files: TOML under presets/experiments/, expanded into the runs they ask for.

    name = "cassandra-vs-hbase-ops"            # defaults to the file's name
    description = "..."
    databases = ["cassandra", "hbase"]         # or "db:preset" ("cassandra:cassandra-3"), "memory"
    workloads = ["workloada", "workloadc"]     # files in workloads/, or paths
    repetitions = 3
    order = "as-written"                       # or "random" (with `seed`): shuffled per database
    seed = 1
    load = "once"                              # or "every-step": reload before every run
    settle = "none"                            # or "flush": flush, wait out compactions before each run

    [properties]                               # -p overrides of every run
    recordcount = 100000

    [sweep]                                    # one or two swept parameters
    operationcount = [100000, 200000, 300000]

    [scale]                                    # --scale NAME divides record and operation counts
    laptop = 20

    anova = ["recordcount", "workload"]        # the report's two-way ANOVA (optional; at the top)

A step is one database x workload x combination of swept values; each step runs `repetitions`
times. Databases run one after the other (one cluster up at a time); `order = "random"` shuffles
the runs of each database with the seed, which the statistics need. Every run is stored with the
experiment's name, its step and repetition, and the scale, so a run that finished is never
repeated when the experiment is run again.
"""

from __future__ import annotations

import random
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from workbench.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
EXPERIMENTS_DIR = ROOT / "presets" / "experiments"
WORKLOADS_DIR = ROOT / "workloads"
DEFAULT_PRESETS = {"cassandra": "cassandra-single", "hbase": "hbase-standalone"}
DATABASES = ("cassandra", "hbase", "memory")
# Swept parameter -> the -p key it sets (threadcount's YCSB name is lanes here too).
SWEEPABLE = {
    "operationcount": "operationcount",
    "recordcount": "recordcount",
    "threadcount": "threadcount",
    "lanes": "threadcount",
    "target": "target",
    "zipfian.constant": "zipfian.constant",
    "requestdistribution": "requestdistribution",
}
SCALED = ("recordcount", "operationcount")
KEYS = {"name", "description", "databases", "workloads", "repetitions", "order", "seed", "load",
        "settle", "properties", "sweep", "scale", "anova"}
ORDERS = ("as-written", "random")
LOADS = ("once", "every-step")
SETTLES = ("none", "flush")


@dataclass(frozen=True)
class Target:
    """Where a step runs: a database and, for a server, the cluster preset started for it."""

    db: str
    preset: str | None

    @property
    def name(self) -> str:
        if self.preset is None or self.preset == DEFAULT_PRESETS.get(self.db):
            return self.db
        return f"{self.db}:{self.preset}"


@dataclass(frozen=True)
class Step:
    target: Target
    workload: str  # the workload file's name (workloada)
    values: tuple[tuple[str, object], ...]  # swept parameter -> value, in the file's order

    @property
    def key(self) -> str:
        """Stable name of the step (what the store keeps to resume)."""
        swept = ",".join(f"{k}={v}" for k, v in self.values)
        return f"{self.target.name}/{self.workload}" + (f"/{swept}" if swept else "")


@dataclass(frozen=True)
class PlannedRun:
    step: Step
    repetition: int  # 1-based


@dataclass(frozen=True)
class Experiment:
    name: str
    path: Path
    description: str
    targets: tuple[Target, ...]
    workloads: tuple[str, ...]
    sweep: tuple[tuple[str, tuple[object, ...]], ...]
    repetitions: int
    order: str
    seed: int
    load: str
    settle: str
    properties: dict[str, str] = field(default_factory=dict)
    scales: dict[str, int] = field(default_factory=dict)
    anova: tuple[str, str] | None = None  # the two factors of the report's two-way ANOVA

    def workload_file(self, workload: str) -> Path:
        own = WORKLOADS_DIR / workload
        return own if own.is_file() else (self.path.parent / workload)

    def steps(self) -> list[Step]:
        combos: list[tuple[tuple[str, object], ...]] = [()]
        for param, values in self.sweep:
            combos = [c + ((param, v),) for c in combos for v in values]
        return [Step(t, w, c) for t in self.targets for w in self.workloads for c in combos]

    def runs(self) -> list[PlannedRun]:
        """Every run, database by database; shuffled per database when order = random."""
        out: list[PlannedRun] = []
        rng = random.Random(self.seed)
        for target in self.targets:
            mine = [PlannedRun(s, r) for r in range(1, self.repetitions + 1)
                    for s in self.steps() if s.target == target]
            if self.order == "random":
                rng.shuffle(mine)
            else:  # as written: repetition after repetition of the whole sweep
                mine.sort(key=lambda run: run.repetition)
            out += mine
        return out

    def divisor(self, scale: str) -> int:
        if scale == "full":
            return 1
        if scale not in self.scales:
            known = ", ".join(["full", *self.scales])
            raise ConfigError(f"{self.path}: no scale {scale!r}", f"scales of this experiment: {known}")
        return self.scales[scale]

    def overrides(self, run: PlannedRun, scale: str) -> list[str]:
        """The -p overrides of one run at a scale (record and operation counts divided)."""
        props = dict(self.properties)
        for param, value in run.step.values:
            props[SWEEPABLE[param]] = str(value)
        divisor = self.divisor(scale)
        for key in SCALED:
            if key in props and divisor > 1:
                props[key] = str(max(int(props[key]) // divisor, 1))
        return [f"{k}={v}" for k, v in props.items()]


def shipped() -> dict[str, Path]:
    return {p.stem: p for p in sorted(EXPERIMENTS_DIR.glob("*.toml"))}


def find(name_or_path: str) -> Path:
    path = Path(name_or_path)
    if path.suffix == ".toml" and path.is_file():
        return path
    found = shipped()
    if name_or_path in found:
        return found[name_or_path]
    raise ConfigError(f"unknown experiment {name_or_path!r}",
                      f"shipped: {', '.join(found) or 'none'}; or give the path of a .toml file")


def _fail(path: Path, key: str, message: str, hint: str) -> ConfigError:
    return ConfigError(f"{path}: key '{key}' {message}", hint)


def _strings(path: Path, data: dict, key: str) -> tuple[str, ...]:
    value = data.get(key)
    if not isinstance(value, list) or not value or not all(isinstance(v, str) and v for v in value):
        raise _fail(path, key, "must be a non-empty list of names", f'e.g. {key} = ["{key[:-1]}a"]')
    return tuple(value)


def load(name_or_path: str) -> Experiment:
    """Read and check an experiment file; every mistake is one line naming the file and key."""
    path = find(name_or_path)
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    for key in data:
        if key not in KEYS:
            raise _fail(path, key, "is unknown", f"known keys: {', '.join(sorted(KEYS))}")
    targets = []
    for entry in _strings(path, data, "databases"):
        db, _, preset = entry.partition(":")
        if db not in DATABASES:
            raise _fail(path, "databases", f"names an unknown database {db!r}",
                        f"databases: {', '.join(DATABASES)} (optionally db:preset)")
        if db == "memory" and preset:
            raise _fail(path, "databases", "gives a preset for memory", "memory runs in-process")
        target = Target(db, None if db == "memory" else preset or DEFAULT_PRESETS[db])
        if target in targets:
            raise _fail(path, "databases", f"lists {target.name} twice", "list each database once")
        targets.append(target)
    workloads = _strings(path, data, "workloads")
    for workload in workloads:
        if not (WORKLOADS_DIR / workload).is_file() and not (path.parent / workload).is_file():
            raise _fail(path, "workloads", f"names {workload!r}, which is neither in workloads/ nor "
                        "next to the file", "e.g. workloada")
    sweep_table = data.get("sweep", {})
    if not isinstance(sweep_table, dict) or len(sweep_table) > 2:
        raise _fail(path, "sweep", "must be a table of one or two parameters",
                    "e.g. [sweep] operationcount = [100000, 200000]")
    sweep = []
    for param, values in sweep_table.items():
        if param not in SWEEPABLE:
            raise _fail(path, f"sweep.{param}", "is not a parameter that can be swept",
                        f"sweepable: {', '.join(SWEEPABLE)}")
        if not isinstance(values, list) or not values:
            raise _fail(path, f"sweep.{param}", "has no values", f"e.g. {param} = [1, 2, 4]")
        if len(set(map(str, values))) != len(values):
            raise _fail(path, f"sweep.{param}", "repeats a value", "list every value once")
        sweep.append((param, tuple(values)))
    repetitions = data.get("repetitions", 1)
    if not isinstance(repetitions, int) or isinstance(repetitions, bool) or repetitions < 1:
        raise _fail(path, "repetitions", "must be a whole number of 1 or more", "e.g. repetitions = 3")
    choices = {"order": ORDERS, "load": LOADS, "settle": SETTLES}
    picked = {}
    for key, allowed in choices.items():
        value = data.get(key, allowed[0])
        if value not in allowed:
            hint = f"choose one of {', '.join(allowed)}"
            raise _fail(path, key, f"is {value!r}", hint)
        picked[key] = value
    seed = data.get("seed", 1)
    if not isinstance(seed, int):
        raise _fail(path, "seed", "must be a whole number", "e.g. seed = 7")
    properties = data.get("properties", {})
    if not isinstance(properties, dict):
        raise _fail(path, "properties", "must be a table", "e.g. [properties] recordcount = 1000")
    swept_keys = {SWEEPABLE[p] for p, _ in sweep}
    for key in properties:
        if key in swept_keys:
            raise _fail(path, f"properties.{key}", "is also swept", "set it in one place only")
    scales = data.get("scale", {})
    if not isinstance(scales, dict) or not all(isinstance(v, int) and v >= 1 for v in scales.values()):
        raise _fail(path, "scale", "must map names to whole divisors of 1 or more", "e.g. laptop = 20")
    anova = data.get("anova")
    if anova is not None:
        factors = ("workload", *(p for p, _ in sweep))
        if (not isinstance(anova, list) or len(anova) != 2 or len(set(anova)) != 2
                or not all(f in factors for f in anova)):
            raise _fail(path, "anova", "must name two different factors", f"factors: {', '.join(factors)}")
        anova = tuple(anova)
    return Experiment(
        name=str(data.get("name", path.stem)), path=path, description=str(data.get("description", "")),
        targets=tuple(targets), workloads=workloads, sweep=tuple(sweep), repetitions=repetitions,
        order=picked["order"], seed=seed, load=picked["load"], settle=picked["settle"],
        properties={k: _prop(v) for k, v in properties.items()}, scales=dict(scales), anova=anova,
    )


def _prop(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
