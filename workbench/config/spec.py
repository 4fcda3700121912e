"""The frozen WorkloadSpec, built once from merged properties and validated.

Every CoreWorkload property of YCSB is known here with its type, default and valid choices;
anything else must belong to a database binding (see bindings/registry.py) or it is an
error that names the key, where it was set, and the closest valid names.
"""

from __future__ import annotations

import difflib
import importlib
import math
import os
from collections.abc import Callable
from dataclasses import dataclass, field, fields

from workbench.config.bindings import binding_for_property
from workbench.config.properties import Properties
from workbench.errors import ConfigError

MAX_INT = 2**31 - 1
WORKERS_PER_CORE = 4  # more worker processes than this only compete for the cores

DISTRIBUTIONS = ("uniform", "zipfian", "latest", "hotspot", "sequential", "exponential")
FIELD_LENGTH_DISTRIBUTIONS = ("constant", "uniform", "zipfian", "histogram")
SCAN_LENGTH_DISTRIBUTIONS = ("uniform", "zipfian")
INSERT_ORDERS = ("hashed", "ordered")
MEASUREMENT_INTERVALS = ("op", "intended", "both")
RAY_STRATEGIES = ("spread", "pack")
EVENT_LOOPS = ("auto", "uvloop", "asyncio")  # workbench/core/loops.py
RAY_ON_LOST = ("continue", "stop")
OPERATIONS = ("READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE", "DELETE")


@dataclass(frozen=True)
class WorkloadSpec:
    """What to run: YCSB's CoreWorkload properties plus the client options."""

    table: str = "usertable"
    fieldcount: int = 10
    fieldnameprefix: str = "field"
    fieldlength: int = 100
    minfieldlength: int = 1
    fieldlengthdistribution: str = "constant"
    fieldlengthhistogram: str = "hist.txt"
    readallfields: bool = True
    readallfieldsbyname: bool = False
    writeallfields: bool = False
    dataintegrity: bool = False
    readproportion: float = 0.95
    updateproportion: float = 0.05
    insertproportion: float = 0.0
    scanproportion: float = 0.0
    readmodifywriteproportion: float = 0.0
    deleteproportion: float = 0.0
    requestdistribution: str = "uniform"
    minscanlength: int = 1
    maxscanlength: int = 1000
    scanlengthdistribution: str = "uniform"
    insertorder: str = "hashed"
    zeropadding: int = 1
    hotspotdatafraction: float = 0.2
    hotspotopnfraction: float = 0.8
    exponential_percentile: float = 95.0
    exponential_frac: float = 0.8571428571
    recordcount: int = 0
    insertstart: int = 0
    insertcount: int | None = None  # None: recordcount - insertstart
    operationcount: int = 0  # 0: no limit (stop on maxexecutiontime or by hand), as YCSB
    insertion_retry_limit: int = 0
    insertion_retry_interval: int = 3
    zipfian_constant: float = 0.99
    seed: int | None = None
    # client options
    db: str = "memory"
    threadcount: int = 1
    target: float = 0.0
    workers: int = 1
    maxexecutiontime: int = 0
    # The measured window of a run phase (workbench extensions; 0 = off, YCSB's behaviour):
    # operations of the first `warmup_s` seconds are done but not measured; the window lasts at
    # least `minimum_s` seconds (operationcount then counts measured operations, and the run goes
    # on until both are reached); with `stable_pct`, it ends once the throughputs of its last
    # three 2-second windows agree within that many percent (maxexecutiontime still caps it).
    warmup_s: float = 0.0
    minimum_s: float = 0.0
    stable_pct: float = 0.0
    status_interval: float = 10.0
    snapshot_interval: float = 1.0
    measurement_interval: str = "op"
    # measurement.keys: count the keys the run's requests choose (metrics/keycounts.py), for the
    # figures of where they landed (RunResult.keys); off, it costs a run nothing
    count_keys: bool = False
    hdr_percentiles: tuple[float, ...] | None = None  # None: the export layout decides
    label: str = ""
    # Worker processes as Ray actors on a Ray cluster (workbench/core/ray_workers.py): its
    # address ("" = local worker processes), CPUs and custom resources each worker asks for,
    # how they are placed, and what a lost worker does to the run.
    ray_address: str = ""
    ray_cpus: float = 1.0
    ray_resources: str = ""  # NAME:AMOUNT[,NAME:AMOUNT...]
    ray_strategy: str = "spread"
    ray_onlost: str = "continue"
    # the lanes' event loop (workbench/core/loops.py): auto = uvloop where installed
    eventloop: str = "auto"
    # properties that belong to bindings (cassandra.*, hbase.*, hosts, ...)
    binding_properties: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def record_total(self) -> int:
        """recordcount with YCSB's "0 means the largest int" rule."""
        return self.recordcount if self.recordcount > 0 else MAX_INT

    @property
    def insert_total(self) -> int:
        if self.insertcount is not None:
            return self.insertcount
        return self.record_total - self.insertstart

    @property
    def field_names(self) -> tuple[str, ...]:
        return tuple(f"{self.fieldnameprefix}{i}" for i in range(self.fieldcount))

    def operation_weights(self) -> dict[str, float]:
        """Positive weights per operation, in YCSB's DiscreteGenerator order."""
        pairs = (
            ("READ", self.readproportion),
            ("UPDATE", self.updateproportion),
            ("INSERT", self.insertproportion),
            ("SCAN", self.scanproportion),
            ("READ-MODIFY-WRITE", self.readmodifywriteproportion),
            ("DELETE", self.deleteproportion),
        )
        return {op: w for op, w in pairs if w > 0}

    @property
    def reads_existing_records(self) -> bool:
        """Does the run phase read, update, scan or delete records that a load wrote?"""
        return any(op != "INSERT" for op in self.operation_weights())

    def measured_window(self, phase: str) -> bool:
        """Does this phase measure a window of its own (warm-up, minimum or stable set)? Only a
        run phase does: a load writes its records whatever the clock says."""
        return phase == "run" and bool(self.warmup_s or self.minimum_s or self.stable_pct)

    def lane_budget(self, phase: str) -> int:
        """Operation numbers the lanes may claim (0 = no limit): with a measured window the
        controller ends the run, since warm-up operations do not count towards operationcount."""
        return 0 if self.measured_window(phase) else self.phase_operation_count(phase)

    def phase_operation_count(self, phase: str) -> int:
        """Operations a phase performs: the inserts for load, operationcount for run (0 = no limit)."""
        return self.insert_total if phase == "load" else self.operationcount


# ---- parsing of single values -------------------------------------------------------------


def _int(text: str) -> int:
    return int(text.strip(), 10)


def _float(text: str) -> float:
    value = float(text.strip())
    if not math.isfinite(value):
        raise ValueError(text)
    return value


def _bool(text: str) -> bool:
    lowered = text.strip().lower()
    if lowered not in ("true", "false"):
        raise ValueError(text)
    return lowered == "true"


def _str(text: str) -> str:
    return text.strip()


def _percentiles(text: str) -> tuple[float, ...]:
    values = tuple(_float(part) for part in text.split(",") if part.strip())
    if not values or any(not 0 < v <= 100 for v in values):
        raise ValueError(text)
    return values


@dataclass(frozen=True)
class Key:
    attr: str
    parse: Callable[[str], object]
    kind: str  # for messages: "an integer", ...
    choices: tuple[str, ...] = ()


_KIND = {_int: "a whole number", _float: "a number", _bool: "true or false", _str: "text"}


def _key(attr: str, parse: Callable[[str], object], choices: tuple[str, ...] = ()) -> Key:
    return Key(attr, parse, _KIND.get(parse, "a list of percentiles such as 50,95,99"), choices)


KEYS: dict[str, Key] = {
    "table": _key("table", _str),
    "fieldcount": _key("fieldcount", _int),
    "fieldnameprefix": _key("fieldnameprefix", _str),
    "fieldlength": _key("fieldlength", _int),
    "minfieldlength": _key("minfieldlength", _int),
    "fieldlengthdistribution": _key("fieldlengthdistribution", _str, FIELD_LENGTH_DISTRIBUTIONS),
    "fieldlengthhistogram": _key("fieldlengthhistogram", _str),
    "readallfields": _key("readallfields", _bool),
    "readallfieldsbyname": _key("readallfieldsbyname", _bool),
    "writeallfields": _key("writeallfields", _bool),
    "dataintegrity": _key("dataintegrity", _bool),
    "readproportion": _key("readproportion", _float),
    "updateproportion": _key("updateproportion", _float),
    "insertproportion": _key("insertproportion", _float),
    "scanproportion": _key("scanproportion", _float),
    "readmodifywriteproportion": _key("readmodifywriteproportion", _float),
    "deleteproportion": _key("deleteproportion", _float),
    "requestdistribution": _key("requestdistribution", _str, DISTRIBUTIONS),
    "minscanlength": _key("minscanlength", _int),
    "maxscanlength": _key("maxscanlength", _int),
    "scanlengthdistribution": _key("scanlengthdistribution", _str, SCAN_LENGTH_DISTRIBUTIONS),
    "insertorder": _key("insertorder", _str, INSERT_ORDERS),
    "zeropadding": _key("zeropadding", _int),
    "hotspotdatafraction": _key("hotspotdatafraction", _float),
    "hotspotopnfraction": _key("hotspotopnfraction", _float),
    "exponential.percentile": _key("exponential_percentile", _float),
    "exponential.frac": _key("exponential_frac", _float),
    "recordcount": _key("recordcount", _int),
    "insertstart": _key("insertstart", _int),
    "insertcount": _key("insertcount", _int),
    "operationcount": _key("operationcount", _int),
    "core_workload_insertion_retry_limit": _key("insertion_retry_limit", _int),
    "core_workload_insertion_retry_interval": _key("insertion_retry_interval", _int),
    "zipfian.constant": _key("zipfian_constant", _float),
    "seed": _key("seed", _int),
    "db": _key("db", _str),
    "threadcount": _key("threadcount", _int),
    "target": _key("target", _float),
    "workers": _key("workers", _int),
    "maxexecutiontime": _key("maxexecutiontime", _int),
    "measurement.warmup": _key("warmup_s", _float),
    "measurement.minimum": _key("minimum_s", _float),
    "measurement.stable": _key("stable_pct", _float),
    "status.interval": _key("status_interval", _float),
    "snapshot.interval": _key("snapshot_interval", _float),
    "measurement.interval": _key("measurement_interval", _str, MEASUREMENT_INTERVALS),
    "measurement.keys": _key("count_keys", _bool),
    "hdrhistogram.percentiles": _key("hdr_percentiles", _percentiles),
    "label": _key("label", _str),
    "ray.address": _key("ray_address", _str),
    "ray.cpus": _key("ray_cpus", _float),
    "ray.resources": _key("ray_resources", _str),
    "ray.strategy": _key("ray_strategy", _str, RAY_STRATEGIES),
    "ray.onlost": _key("ray_onlost", _str, RAY_ON_LOST),
    "eventloop": _key("eventloop", _str, EVENT_LOOPS),
}

# YCSB properties we accept only with one value (the one our engine implements).
FIXED = {
    "workload": ("site.ycsb.workloads.CoreWorkload",),
    "measurementtype": ("hdrhistogram",),
    "dotransactions": ("true", "false"),  # decided by load/run; accepted for old files
}
# YCSB properties that do nothing here (JVM-only); accepted so old files keep working.
IGNORED = frozenset({"measurement.trackjvm", "measurement.histogram.verbose"})
# YCSB properties replaced by a workbench option.
REPLACED = {
    "exporter": "use --export ycsb=FILE, csv=FILE, json=FILE or hdr=FILE",
    "exportfile": "use --export ycsb=FILE",
    "hdrhistogram.fileoutput": "use --export hdr=FILE",
    "hdrhistogram.output.path": "use --export hdr=FILE",
}


def _where(props: Properties, key: str) -> str:
    origin = props.origin(key)
    return f"{origin}: " if origin else ""


def _unknown_key(props: Properties, key: str) -> ConfigError:
    known = list(KEYS) + list(FIXED)
    close = difflib.get_close_matches(key, known, n=3, cutoff=0.6)
    hint = f"did you mean {' or '.join(close)}?" if close else "see the property tables in docs/PROPERTIES.md"
    return ConfigError(f"{_where(props, key)}unknown property '{key}'", hint)


def build_spec(props: Properties, phase: str = "run") -> WorkloadSpec:
    """Validate merged properties into a WorkloadSpec; raise ConfigError on the first problem.

    The operation mix is only checked for the run phase: load performs inserts whatever it says.
    """
    values: dict[str, object] = {}
    binding_props: dict[str, str] = {}
    for key in props.keys():
        text = props.get(key) or ""
        spec_key = KEYS.get(key)
        if spec_key is not None:
            values[spec_key.attr] = _parse_value(props, key, text, spec_key)
        elif key in FIXED:
            if text.strip() not in FIXED[key]:
                raise ConfigError(
                    f"{_where(props, key)}{key}={text} is not supported",
                    f"valid: {', '.join(FIXED[key])}",
                )
        elif key in REPLACED:
            raise ConfigError(f"{_where(props, key)}property '{key}' is not used here", REPLACED[key])
        elif key in IGNORED:
            continue
        elif binding_for_property(key) is not None:
            binding_props[key] = text
        else:
            raise _unknown_key(props, key)
    spec = WorkloadSpec(binding_properties=binding_props, **values)  # type: ignore[arg-type]
    _check(spec, props, phase)
    return spec


def _parse_value(props: Properties, key: str, text: str, spec_key: Key) -> object:
    try:
        value = spec_key.parse(text)
    except ValueError:
        raise ConfigError(
            f"{_where(props, key)}{key}={text!r} is not {spec_key.kind}",
            f"write e.g. {key}={_example(spec_key)}",
        ) from None
    if spec_key.choices and value not in spec_key.choices:
        raise ConfigError(
            f"{_where(props, key)}unknown {key} '{text}'",
            f"valid choices: {', '.join(spec_key.choices)}",
        )
    return value


def _example(spec_key: Key) -> str:
    if spec_key.choices:
        return spec_key.choices[0]
    default = {f.name: f.default for f in fields(WorkloadSpec)}.get(spec_key.attr)
    if spec_key.parse is _percentiles:
        return "50,95,99"
    return str(default).lower() if isinstance(default, bool) else str(default)


def _fail(props: Properties, key: str, message: str, hint: str) -> ConfigError:
    return ConfigError(f"{_where(props, key)}{message}", hint)


def ray_resources(text: str) -> dict[str, float]:
    """ray.resources: NAME:AMOUNT pairs separated by commas (Ray's custom resources)."""
    out: dict[str, float] = {}
    for part in text.split(","):
        if not part.strip():
            continue
        name, sep, amount = part.partition(":")
        value = _float(amount) if sep else -1.0
        if not name.strip() or value <= 0:
            raise ValueError(part)
        out[name.strip()] = value
    return out


def _importable(module: str) -> bool:
    try:
        importlib.import_module(module)
    except ImportError:
        return False
    return True


def _check_ray(spec: WorkloadSpec, props: Properties) -> None:
    if spec.ray_cpus < 0:
        raise _fail(props, "ray.cpus", "ray.cpus must not be negative",
                    "CPUs each Ray worker reserves: 1 by default, 0 to reserve none")
    try:
        ray_resources(spec.ray_resources)
    except ValueError:
        raise _fail(props, "ray.resources", f"ray.resources={spec.ray_resources} is not a list of "
                    "NAME:AMOUNT", "e.g. -p ray.resources=loadgen:1 (a custom resource of your Ray "
                    "nodes; amounts above 0)") from None


def _check(spec: WorkloadSpec, props: Properties, phase: str) -> None:
    """Cross-property rules; each names the key to change."""
    non_negative = (
        "readproportion updateproportion insertproportion scanproportion "
        "readmodifywriteproportion deleteproportion recordcount insertstart operationcount "
        "target maxexecutiontime zeropadding"
    ).split()
    for key in non_negative:
        if getattr(spec, key) < 0:
            raise _fail(props, key, f"{key} must not be negative", f"set {key} to 0 or more")
    for key, attr in (("measurement.warmup", "warmup_s"), ("measurement.minimum", "minimum_s"),
                      ("measurement.stable", "stable_pct")):
        if getattr(spec, attr) < 0:
            raise _fail(props, key, f"{key} must not be negative", f"set {key} to 0 (off) or more")
    if spec.stable_pct and not spec.minimum_s and not spec.maxexecutiontime:
        raise _fail(props, "measurement.stable", "measurement.stable needs measurement.minimum or "
                    "maxexecutiontime", "e.g. -p measurement.minimum=10 -p maxexecutiontime=60")
    if spec.insertcount is not None and spec.insertcount < 0:
        raise _fail(props, "insertcount", "insertcount must not be negative", "set it to 0 or more")
    positive = {
        "fieldcount": spec.fieldcount,
        "fieldlength": spec.fieldlength,
        "threadcount": spec.threadcount,
        "workers": spec.workers,
        "minscanlength": spec.minscanlength,
        "status.interval": spec.status_interval,
        "snapshot.interval": spec.snapshot_interval,
    }
    for key, value in positive.items():
        if value <= 0:
            raise _fail(props, key, f"{key} must be at least 1", f"set {key} to a positive value")
    if not spec.table.strip():
        raise _fail(props, "table", "table must not be empty", "YCSB's is table=usertable")
    if spec.workers > spec.threadcount:
        raise _fail(props, "workers", f"workers ({spec.workers}) is more than the lanes "
                    f"(threadcount={spec.threadcount}): each worker process needs a lane",
                    "lower --workers or raise -threads")
    if spec.eventloop == "uvloop" and not _importable("uvloop"):
        raise _fail(props, "eventloop", "eventloop=uvloop but uvloop is not installed",
                    "pip install uvloop, or -p eventloop=auto (or asyncio) to use asyncio's loop")
    cores = os.cpu_count() or 1
    if spec.ray_address:  # the workers run on the Ray cluster's machines, not on this one
        _check_ray(spec, props)
    elif spec.workers > WORKERS_PER_CORE * cores:
        raise _fail(props, "workers", f"workers ({spec.workers}) is far more than this machine's "
                    f"{cores} cores", f"use at most {WORKERS_PER_CORE * cores}, {WORKERS_PER_CORE} per core: "
                    "more processes only compete for the cores")
    if phase == "run" and not spec.operation_weights():
        raise ConfigError(
            "the operation mix is empty: every *proportion is 0",
            "set at least one of readproportion, updateproportion, insertproportion, "
            "scanproportion, readmodifywriteproportion, deleteproportion above 0",
        )
    if spec.insertstart > spec.record_total:
        # Without insertcount the count would default to a negative number (and run would hang).
        raise _fail(
            props,
            "insertstart",
            f"insertstart ({spec.insertstart}) is beyond recordcount ({spec.record_total})",
            "recordcount must be at least insertstart + insertcount",
        )
    if spec.insertstart + spec.insert_total > spec.record_total:
        raise _fail(
            props,
            "insertcount" if "insertcount" in props else "insertstart",
            f"insertstart ({spec.insertstart}) + insertcount ({spec.insert_total}) is more than "
            f"recordcount ({spec.record_total})",
            "recordcount must be at least insertstart + insertcount",
        )
    if phase == "run" and spec.insert_total == 0 and set(spec.operation_weights()) - {"INSERT"}:
        # Requests choose among insertstart .. insertstart+insertcount-1: none would ever exist.
        raise _fail(
            props,
            "insertcount" if "insertcount" in props else "insertstart",
            "no keys to choose from: insertcount is 0 for this run",
            "run requests keys insertstart .. insertstart+insertcount-1; make insertcount at least 1",
        )
    if spec.minscanlength > spec.maxscanlength:
        raise _fail(props, "maxscanlength", "maxscanlength is below minscanlength",
                    "make maxscanlength >= minscanlength")
    if spec.minfieldlength > spec.fieldlength or spec.minfieldlength < 0:
        raise _fail(props, "minfieldlength", "minfieldlength must be between 0 and fieldlength",
                    "lower minfieldlength or raise fieldlength")
    if spec.dataintegrity and spec.fieldlengthdistribution != "constant":
        raise _fail(props, "dataintegrity", "dataintegrity needs fieldlengthdistribution=constant",
                    "set fieldlengthdistribution=constant or dataintegrity=false")
    if spec.zipfian_constant <= 0 or spec.zipfian_constant == 1:
        raise _fail(props, "zipfian.constant", "zipfian.constant must be > 0 and not 1",
                    "YCSB's value is 0.99")
    for key in ("hotspotdatafraction", "hotspotopnfraction"):
        if not 0.0 <= getattr(spec, key) <= 1.0:
            raise _fail(props, key, f"{key} must be between 0 and 1", f"e.g. {key}=0.2")
    if not 0 < spec.exponential_percentile < 100:
        raise _fail(props, "exponential.percentile", "exponential.percentile must be in (0, 100)",
                    "YCSB's default is 95")
    if spec.exponential_frac <= 0:
        raise _fail(props, "exponential.frac", "exponential.frac must be above 0",
                    "YCSB's default is 0.8571428571")


def spec_from_args(
    files: list[str], overrides: list[str], phase: str = "run"
) -> tuple[WorkloadSpec, Properties]:
    """Merge -P files and -p overrides, then validate."""
    from workbench.config.properties import merge

    props = merge(files, overrides)
    return build_spec(props, phase), props
