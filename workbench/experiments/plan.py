"""Experiment files: TOML under presets/experiments/, expanded into the runs they ask for.

    name = "cassandra-vs-hbase-ops"            # defaults to the file's name
    description = "..."
    databases = ["cassandra", "hbase"]         # or "db:preset" ("cassandra:cassandra-3"), "mongodb", "memory"
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

Sweeps that shape the cluster rather than the workload: `nodes = [1, 2, 3]` (Cassandra: the
preset with that many nodes, its replication factor capped at the node count) and
`storage = ["disk", "ram"]`, names of a `[storage]` table of data directories ("" = the
cluster's own directory, e.g. ram = "/dev/shm"). A cluster is started for each of their
combinations in turn; `per_node = ["recordcount", "target"]` multiplies those properties by the
step's node count (scale-up: data and offered load in proportion), and `cpus = 0.5` caps each node
of every cluster the experiment starts (clusters/cgroups.py). `rate = [10, 20, ..., 120]` is the
saturation sweep: every database and workload first runs unthrottled (rate = max), then at
those percentages of the throughput it reached; `p99_bound_ms = 10` (at the top) makes the
report name the highest rate whose p99 response time stayed under the bound.

Every measured run has a warm-up that is not measured (`warmup_s`, default 5) and then a
measured window of at least `measure_s` seconds (default 10) divided by the scale's divisor, but
never shorter than `min_measure_s` (default 10): a scale shrinks record and operation counts,
not the measuring time below that floor. A run with an operationcount goes on until it has
measured that many operations too. An unthrottled calibration run of a rate sweep goes on
until its throughput is stable (the last three 2-second windows within 5% of each other), for
at most three windows' worth more than the floor (30 s more at least). A rate sweep runs its
paced steps in rising order and stops at the first step where the database is saturated (it
achieved under 90% of the offered rate); if the listed rates never saturate it, the sweep goes
on past them, 50 points at a time, up to 1000%. A p99 far over the bound does not end it: at a
step that keeps up with its offered rate, a high p99 is a queue left by a pause (a collection, a
flush), which the curve is there to show. `warmup_s = 0` and `min_measure_s = 0`
(with no `measure_s`) give count-bounded runs with no warm-up, as YCSB makes them. The first
run on a cluster the experiment has just started warms up for `first_warmup_s` (default 60) at
least: a new JVM compiles its hot code over its first minute or two (on a 2-core machine,
Cassandra's workload A did 12.2k ops/s 30-45 s after its load, 15.1k over the next 45 s and 17.2k
after that), and the first runs would measure that instead.

Elastic speedup: `add_node_at_s = 10` adds a node to the (local Cassandra) cluster that long into
the measured window of every run but a rate sweep's unthrottled calibration, and takes it out
again after the run (experiments/elastic.py); the report cuts each run at the join. With it, a
rate sweep makes only its listed rates: `rate = [90]` is "90% of what the cluster did".

A step is one database x workload x combination of swept values; each step runs `repetitions`
times. Databases run one after the other (one cluster up at a time); `order = "random"` shuffles
the runs of each database (of each cluster it starts, of each record count it loads) with the
seed, which the statistics need; unthrottled runs come before the paced runs they calibrate.
Every run is stored with the experiment's name, its step and repetition, and the scale, so a run
that finished is never repeated when the experiment is run again.
"""

from __future__ import annotations

import math
import os
import random
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from workbench.config import catalog
from workbench.databases import database, databases, names
from workbench.databases import find as find_database
from workbench.errors import ConfigError

WORKLOADS_DIR = catalog.SHIPPED_WORKLOADS
# The databases and each one's default preset are their descriptors' (databases/): mongodb runs
# on FerretDB (a MongoDB-protocol server) by default, no MongoDB can be installed here.
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
CLUSTER_SWEEPS = ("nodes", "storage")  # swept by starting another cluster, not by -p
RATE = "rate"  # percent of the unthrottled throughput; steps with rate = max calibrate the others
UNTHROTTLED = "max"
SCALED = ("recordcount", "operationcount")
KEYS = {"name", "description", "databases", "workloads", "repetitions", "order", "seed", "load",
        "settle", "properties", "sweep", "scale", "anova", "storage", "p99_bound_ms", "warmup_s",
        "measure_s", "min_measure_s", "first_warmup_s", "add_node_at_s", "cpus", "per_node"}
WARMUP_S = 5.0  # defaults of the measured window (see the module's text)
FIRST_WARMUP_S = 60.0  # the first run on a cluster just started: its JVMs compile the hot code
MIN_MEASURE_S = 10.0
CALIBRATION_STABLE_PCT = 5.0  # an unthrottled calibration run ends when its throughput is this stable
CALIBRATION_EXTRA_S = 30.0  # ... or this long (at least) after its floor
SATURATED = 0.9  # a paced step is saturated when it achieved less than this share of its target
RATE_STEP = 50  # percentage points between the steps a rate sweep adds past its listed rates
RATE_CAP = 1000  # and the highest rate it goes to
STABLE_GUESS_S = 2.0  # seconds a calibration typically runs past its floor until stable
GUESS_OPS_S = 5000  # for estimates of count-bounded runs: a laptop's order of magnitude
GUESS_LOAD_OPS_S = 2500  # ... of loads (Cassandra loaded 5,000 records at 2.7k ops/s here)
GUESS_SETTLE_S = 4.0  # a flush and the wait for compactions (2.9 s Cassandra, 4.6 s HBase)
# Per cluster started and stopped: the database's up_down_s (databases/), and per node past the
# first 20 s more; BENCHMARKS.md, "Cluster start-up"
GUESS_NODE_S = 20.0
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
        described = find_database(self.db)
        if self.preset is None or (described is not None and self.preset == described.default_preset):
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

    @property
    def cluster_values(self) -> tuple[tuple[str, object], ...]:
        """The swept values that need a cluster of their own (nodes, storage)."""
        return tuple((k, v) for k, v in self.values if k in CLUSTER_SWEEPS)

    @property
    def data_values(self) -> tuple[tuple[str, object], ...]:
        """The swept values that need data of their own: a cluster's, and the record count."""
        return tuple((k, v) for k, v in self.values if k in CLUSTER_SWEEPS or k == "recordcount")

    @property
    def rate(self) -> object | None:
        return dict(self.values).get(RATE)

    @property
    def curve(self) -> tuple:
        """The rate sweep this step belongs to: everything but its rate."""
        return (self.target, self.workload, tuple((k, v) for k, v in self.values if k != RATE))

    def at_rate(self, rate: object) -> Step:
        return Step(self.target, self.workload,
                    tuple((k, rate if k == RATE else v) for k, v in self.values))

    def calibration(self) -> Step:
        """The unthrottled step whose throughput this paced step's rate is a percentage of."""
        return Step(self.target, self.workload,
                    tuple((k, UNTHROTTLED if k == RATE else v) for k, v in self.values))


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
    storage: dict[str, str] = field(default_factory=dict)  # storage name -> data directory
    p99_bound_ms: float | None = None  # saturation: the p99 response time a rate must stay under
    warmup_s: float = WARMUP_S  # every run: seconds not measured, then the measured window
    measure_s: float = MIN_MEASURE_S  # at full scale (divided by the scale's divisor)
    min_measure_s: float = MIN_MEASURE_S  # the window's floor at every scale
    first_warmup_s: float = FIRST_WARMUP_S  # the warm-up of the first run on a started cluster
    add_node_at_s: float | None = None  # elastic speedup: a node joins each run this long into it
    cpus: float = 0.0  # each node of every cluster it starts capped at this many cores (0: none)
    per_node: tuple[str, ...] = ()  # scale-up: properties multiplied by the step's node count

    def workload_file(self, workload: str) -> Path:
        return _workload_file(self.path, workload)

    def steps(self) -> list[Step]:
        combos: list[tuple[tuple[str, object], ...]] = [()]
        for param, values in self.sweep:
            if param == RATE:
                values = (UNTHROTTLED, *values)
            combos = [c + ((param, v),) for c in combos for v in values]
        return [Step(t, w, c) for t in self.targets for w in self.workloads for c in combos]

    @property
    def rates(self) -> tuple[object, ...]:
        """The listed rates of a rate sweep, in rising order (empty without one)."""
        return tuple(sorted(dict(self.sweep).get(RATE, ()), key=float))

    def find_step(self, key: str) -> Step | None:
        """The step with this key: a planned one, or a rate a sweep added past its list."""
        for step in self.steps():
            if step.key == key:
                return step
        if not self.rates:
            return None
        for step in self.steps():
            if step.rate == self.rates[-1]:
                for rate in self.added_rates():
                    if step.at_rate(rate).key == key:
                        return step.at_rate(rate)
        return None

    def steps_of(self, keys) -> list[Step]:
        """The steps these keys name, in the experiment's order (a rate sweep's added steps
        after the listed ones of their curve); keys of no step are left out."""
        planned = {s.key: i for i, s in enumerate(self.steps())}
        found = [step for step in map(self.find_step, dict.fromkeys(keys)) if step is not None]

        def order(step: Step) -> tuple:
            if step.key in planned:
                return (planned[step.key], 0.0)
            base = step.at_rate(self.rates[-1])  # added: after the last listed rate of its curve
            return (planned.get(base.key, len(planned)), float(step.rate))
        return sorted(found, key=order)

    def added_rates(self) -> list[int]:
        """The rates a sweep that never saturated goes on with, past its listed ones (none in an
        elastic experiment: its listed rate is the load the join is measured under)."""
        if not self.rates or self.add_node_at_s is not None:
            return []
        start = float(self.rates[-1])
        return [int(start + RATE_STEP * k) for k in range(1, int((RATE_CAP - start) // RATE_STEP) + 1)]

    def window_s(self, scale: str) -> float:
        """The measured window of a run at this scale (its floor, at least)."""
        return max(self.measure_s / self.divisor(scale), self.min_measure_s)

    def overhead_s(self, scale: str) -> float:
        """A guess at what comes on top of the runs: cluster starts and stops, loads, settling."""
        total = 0.0
        runs = self.runs()
        clusters = dict.fromkeys((r.step.target, r.step.cluster_values) for r in runs)
        for target, shape in clusters:
            described = find_database(target.db)
            nodes = int(dict(shape).get("nodes", 1)) if described and described.nodes_sweep else 1
            total += (described.up_down_s if described else 0.0) + GUESS_NODE_S * (nodes - 1)
        records = int(dict(self.properties).get("recordcount", 1000) or 1000)
        loads = (runs if self.load == "every-step" else
                 dict.fromkeys((r.step.target, r.step.data_values) for r in runs))
        for item in loads:
            values = dict(item.step.values) if isinstance(item, PlannedRun) else dict(item[1])
            count = int(values.get("recordcount", records)) // self.divisor(scale)
            total += 2.0 + count / GUESS_LOAD_OPS_S
        if self.settle == "flush":
            total += GUESS_SETTLE_S * len(runs)
        if self.add_node_at_s is not None:  # each joined node decommissioned after its run
            total += 30.0 * sum(1 for r in runs if r.step.rate != UNTHROTTLED)
        return total

    def runs(self) -> list[PlannedRun]:
        """Every run: database by database, cluster by cluster (nodes, storage) and record count
        by record count (one load each), unthrottled calibration runs before paced ones; each
        part shuffled when order = random, except the paced steps of a rate sweep, which go in
        rising order, each step's repetitions together (the runner stops a curve once it is
        saturated and extends one that is not)."""
        out: list[PlannedRun] = []
        rng = random.Random(self.seed)
        steps = self.steps()
        for target in self.targets:
            shapes = dict.fromkeys(s.data_values for s in steps if s.target == target)
            for shape in shapes:
                mine = [PlannedRun(s, r) for r in range(1, self.repetitions + 1)
                        for s in steps if s.target == target and s.data_values == shape]
                for part in ([r for r in mine if r.step.rate == UNTHROTTLED],
                             [r for r in mine if r.step.rate != UNTHROTTLED]):
                    if part and part[0].step.rate not in (None, UNTHROTTLED):
                        curves = list(dict.fromkeys(r.step.curve for r in part))
                        part.sort(key=lambda run: (curves.index(run.step.curve), float(run.step.rate),
                                                   run.repetition))
                    elif self.order == "random":
                        rng.shuffle(part)
                    else:  # as written: repetition after repetition of the whole sweep
                        part.sort(key=lambda run: run.repetition)
                    out += part
        return out

    def cluster_spec(self, step: Step):
        """The cluster spec a server step runs on: its preset, with the step's nodes and storage."""
        import dataclasses

        from workbench.clusters import presets

        spec = presets.load(step.target.preset)
        values = dict(step.cluster_values)
        if "nodes" in values:
            n = int(values["nodes"])
            spec = dataclasses.replace(spec, nodes=n, replication_factor=min(spec.replication_factor, n))
        if "storage" in values:
            spec = dataclasses.replace(spec, data_dir=self.storage[str(values["storage"])])
        if self.cpus:
            spec = dataclasses.replace(spec, cpus=self.cpus)
        return spec

    def divisor(self, scale: str) -> int:
        if scale == "full":
            return 1
        if scale not in self.scales:
            known = ", ".join(["full", *self.scales])
            raise ConfigError(f"{self.path}: no scale {scale!r}", f"scales of this experiment: {known}")
        return self.scales[scale]

    def overrides(self, run: PlannedRun, scale: str, unthrottled: float | None = None,
                  first: bool = False) -> list[str]:
        """The -p overrides of one run at a scale (record and operation counts divided); a paced
        step of a rate sweep needs the throughput its unthrottled step reached. `first`: the
        first run on a cluster just started, whose warm-up is first_warmup_s at least."""
        props = dict(self.properties)
        for param, value in run.step.values:
            if param in CLUSTER_SWEEPS or (param == RATE and value == UNTHROTTLED):
                continue
            if param == RATE:
                if unthrottled is None:
                    raise ConfigError(f"{run.step.key} needs the throughput of "
                                      f"{run.step.calibration().key} first")
                props["target"] = str(max(1, round(unthrottled * float(value) / 100)))
                continue
            props[SWEEPABLE[param]] = str(value)
        divisor = self.divisor(scale)
        for key in SCALED:
            if key in props and divisor > 1 and int(props[key]):  # 0 (no count) stays 0
                props[key] = str(max(int(props[key]) // divisor, 1))
        nodes = int(dict(run.step.values).get("nodes", 1))
        for key in self.per_node:  # scale-up: more nodes, more data and load in proportion
            if key in props:
                props[key] = str(round(float(props[key]) * nodes))
        window = self.window_s(scale)
        warmup = max(self.warmup_s, self.first_warmup_s) if first else self.warmup_s
        if warmup:
            props["measurement.warmup"] = f"{warmup:g}"
        if window:
            props["measurement.minimum"] = f"{window:g}"
        if run.step.rate == UNTHROTTLED and window:  # calibration: until its throughput is stable
            props["measurement.stable"] = f"{CALIBRATION_STABLE_PCT:g}"
            # maxexecutiontime counts the warm-up too: the first run's longer one included
            props["maxexecutiontime"] = str(math.ceil(warmup + self.calibration_cap_s(scale)))
        return [f"{k}={v}" for k, v in props.items()]

    def calibration_cap_s(self, scale: str) -> float:
        """The longest measured window of an unthrottled calibration run."""
        window = self.window_s(scale)
        return window + max(CALIBRATION_EXTRA_S, 3 * window)

    def expected_s(self, scale: str) -> tuple[float, float]:
        """(typical, longest) seconds the runs take at this scale: warm-ups and measured
        windows (count-bounded runs guessed at GUESS_OPS_S), calibrations between their floor
        and their cap, and a rate sweep from its listed steps up to where it may go on."""
        window, per = self.window_s(scale), self.warmup_s
        runs = self.runs()
        typical = longest = 0.0
        for run in runs:
            count = int(dict(self.properties).get("operationcount", 0) or 0)
            if "operationcount" in dict(run.step.values):
                count = int(dict(run.step.values)["operationcount"])
            count //= self.divisor(scale)
            measured = max(window, count / GUESS_OPS_S)
            if run.step.rate == UNTHROTTLED and window:
                typical += per + measured + 2 * STABLE_GUESS_S
                longest += per + self.calibration_cap_s(scale)
            else:
                typical += per + measured
                longest += per + measured
        started = {(r.step.target, r.step.cluster_values) for r in runs
                   if r.step.target.preset is not None}  # each a cluster the runner starts
        first = len(started) * max(self.first_warmup_s - per, 0)
        typical, longest = typical + first, longest + first
        extra = len(self.added_rates()) * self.repetitions * (per + window)
        curves = {s.curve for s in self.steps() if s.rate not in (None, UNTHROTTLED)}
        return typical, longest + extra * len(curves)


def _workload_file(experiment: Path, workload: str) -> Path:
    """A workload named in an experiment: a file next to the experiment wins, then the
    workload folders (./workloads, the user's, the shipped ones)."""
    beside = experiment.parent / workload
    return beside if beside.is_file() else catalog.workload_file(workload)


def shipped() -> dict[str, Path]:
    """Experiment name -> file: the user's folders first, then the shipped experiments."""
    return catalog.available("experiments")


def find(name_or_path: str) -> Path:
    path = Path(name_or_path)
    if path.suffix == ".toml" and path.is_file():
        return path
    found = shipped()
    if name_or_path in found:
        return found[name_or_path]
    raise ConfigError(f"unknown experiment {name_or_path!r}",
                      f"known: {', '.join(found) or 'none'}; or give the path of a .toml file")


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
        if db not in names():
            raise _fail(path, "databases", f"names an unknown database {db!r}",
                        f"databases: {', '.join(names())} (optionally db:preset)")
        described = database(db)
        if described.in_process and preset:
            raise _fail(path, "databases", f"gives a preset for {db}", f"{db} runs in-process")
        if not described.in_process and not (preset or described.default_preset):
            raise _fail(path, "databases", f"names {db} without a preset", f'e.g. "{db}:PRESET"')
        target = Target(db, None if described.in_process else preset or described.default_preset)
        if target in targets:
            raise _fail(path, "databases", f"lists {target.name} twice", "list each database once")
        targets.append(target)
    workloads = _strings(path, data, "workloads")
    for workload in workloads:
        if not _workload_file(path, workload).is_file():
            raise _fail(path, "workloads", f"names {workload!r}, which is neither a known workload nor "
                        "next to the file", "e.g. workloada")
    sweep_table = data.get("sweep", {})
    if not isinstance(sweep_table, dict) or len(sweep_table) > 2:
        raise _fail(path, "sweep", "must be a table of one or two parameters",
                    "e.g. [sweep] operationcount = [100000, 200000]")
    storage = data.get("storage", {})
    if not isinstance(storage, dict) or not all(
            isinstance(v, str) and (v == "" or Path(os.path.expanduser(v)).is_absolute())
            for v in storage.values()):
        raise _fail(path, "storage", "must map names to absolute directories (\"\" = the cluster's own)",
                    'e.g. [storage] disk = "" and ram = "/dev/shm"')
    storage = {k: os.path.expanduser(v) for k, v in storage.items()}
    sweep = []
    for param, values in sweep_table.items():
        if param not in SWEEPABLE and param not in CLUSTER_SWEEPS and param != RATE:
            raise _fail(path, f"sweep.{param}", "is not a parameter that can be swept",
                        f"sweepable: {', '.join([*SWEEPABLE, *CLUSTER_SWEEPS, RATE])}")
        if not isinstance(values, list) or not values:
            raise _fail(path, f"sweep.{param}", "has no values", f"e.g. {param} = [1, 2, 4]")
        if len(set(map(str, values))) != len(values):
            raise _fail(path, f"sweep.{param}", "repeats a value", "list every value once")
        _check_cluster_sweep(path, param, values, targets, storage)
        sweep.append((param, tuple(values)))
    if "target" in {SWEEPABLE.get(p) for p, _ in sweep} and RATE in dict(sweep):
        raise _fail(path, "sweep.rate", "and a target sweep both set the target rate", "sweep one of them")
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
    swept_keys = {SWEEPABLE[p] for p, _ in sweep if p in SWEEPABLE}
    if RATE in dict(sweep):
        swept_keys.add("target")
    for key in properties:
        if key in swept_keys:
            raise _fail(path, f"properties.{key}", "is also swept", "set it in one place only")
    bound = data.get("p99_bound_ms")
    if bound is not None and (RATE not in dict(sweep) or isinstance(bound, bool)
                              or not isinstance(bound, int | float) or bound <= 0):
        raise _fail(path, "p99_bound_ms", "must be a positive number of milliseconds, with a rate sweep",
                    "e.g. p99_bound_ms = 10 and [sweep] rate = [10, 50, 100]")
    timing = {}
    for key, default in (("warmup_s", WARMUP_S), ("min_measure_s", MIN_MEASURE_S),
                         ("first_warmup_s", FIRST_WARMUP_S)):
        timing[key] = _seconds(path, data, key, default)
    timing["measure_s"] = _seconds(path, data, "measure_s", timing["min_measure_s"])
    cpus = data.get("cpus", 0.0)
    if isinstance(cpus, bool) or not isinstance(cpus, int | float) or not 0 <= cpus <= 64:
        raise _fail(path, "cpus", "must be the cores of each node, at most 64", "e.g. cpus = 0.5")
    timing["cpus"] = float(cpus)
    per_node = data.get("per_node", [])
    if not isinstance(per_node, list) or (per_node and "nodes" not in dict(sweep)) or not all(
            k in ("recordcount", "operationcount", "target") for k in per_node):
        raise _fail(path, "per_node", "lists recordcount, operationcount or target, with a nodes sweep",
                    'e.g. per_node = ["recordcount", "target"] and [sweep] nodes = [1, 2, 3]')
    timing["per_node"] = tuple(per_node)
    if "add_node_at_s" in data:
        timing["add_node_at_s"] = _seconds(path, data, "add_node_at_s", 30)
        if any(not database(t.db).nodes_sweep or t.preset is None for t in targets):
            raise _fail(path, "add_node_at_s", "adds a node to a local Cassandra cluster: every database "
                        f"must be {_node_databases()}", 'e.g. databases = ["cassandra:cassandra-2"]')
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
        storage=storage, p99_bound_ms=None if bound is None else float(bound), **timing,
    )


def _node_databases() -> str:
    """The databases whose presets grow node by node (a nodes sweep, add_node_at_s)."""
    return " or ".join(d.title for d in databases() if d.nodes_sweep)


def _seconds(path: Path, data: dict, key: str, default: float) -> float:
    value = data.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 3600:
        raise _fail(path, key, "must be a number of seconds from 0 to 3600", f"e.g. {key} = {default:g}")
    return float(value)


def _check_cluster_sweep(path: Path, param: str, values: list, targets: list[Target],
                         storage: dict[str, str]) -> None:
    if param == "nodes":
        if any(not database(t.db).nodes_sweep for t in targets):
            raise _fail(path, "sweep.nodes", f"applies to {_node_databases()} databases only",
                        "list other databases in an experiment of their own, or name presets "
                        '(databases = ["cassandra:cassandra-3", ...])')
        if not all(isinstance(v, int) and not isinstance(v, bool) and 1 <= v <= 9 for v in values):
            raise _fail(path, "sweep.nodes", "must be whole numbers of nodes from 1 to 9",
                        "e.g. nodes = [1, 3]")
    elif param == "storage":
        if any(t.preset is None for t in targets):
            raise _fail(path, "sweep.storage", "needs server databases", "memory keeps nothing on disk")
        unknown = [v for v in values if v not in storage]
        if unknown:
            raise _fail(path, "sweep.storage", f"names {unknown[0]!r}, which the [storage] table does not",
                        f'add it: [storage] {unknown[0]} = "/path"')
    elif param == RATE:
        if not all(isinstance(v, int | float) and not isinstance(v, bool) and 0 < v <= 1000 for v in values):
            raise _fail(path, "sweep.rate", "must be percentages of the unthrottled throughput (1-1000)",
                        "e.g. rate = [10, 50, 100, 120]")


def _prop(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
