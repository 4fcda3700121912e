"""A lesson's checks: small expressions over the figures a student measured.

    expect = "frozen.read.response.p99 >= 10 * frozen.read.service.p99"

An expression is Python's syntax restricted to numbers, figure references, + - * /,
comparisons, `and`/`or`/`not` and min/max/abs. A reference is `STEP.FIGURE`: the id of a step
that measured (a load or a run) and a figure of it (FIGURES below). Latencies are milliseconds,
throughputs operations per second, shares between 0 and 1. Nothing is ever passed to eval().
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Mapping
from dataclasses import dataclass

# Per run: name -> unit, for the figures shown beside a verdict.
# response_mean / service_mean: mean latency over every operation (ms), for Little's law:
# in_flight = throughput x response_mean / 1000 in a steady state.
# faults: the node faults (pause, resume, kill, restart) that happened during the run.
# A paced run (results/paced.py): offered_share, its measured window's throughput over the
# offered rate; behind_start / behind_end, how far behind its schedule the window started and
# ended; load_delivered 1 when it delivered the offered load, catching_up 1 when it started
# behind or ran above it (its throughput then is a backlog paid off, not capacity).
SCALARS = {"throughput": "ops/s", "operations": "", "errors": "", "seconds": "s", "target": "ops/s",
           "in_flight": "", "response_mean": "ms", "service_mean": "ms", "faults": "",
           "offered_share": "", "behind_start": "s", "behind_end": "s", "load_delivered": "",
           "catching_up": ""}
OPERATIONS = {"read": "READ", "update": "UPDATE", "insert": "INSERT", "scan": "SCAN",
              "rmw": "READ-MODIFY-WRITE", "delete": "DELETE"}
# Per operation, as response time (from the intended start: what a user waits) by default, or
# under .service (from the send) / .response. count and errors are per operation, not per kind.
STATS = {"p50": 50.0, "p90": 90.0, "p95": 95.0, "p99": 99.0, "p999": 99.9, "max": None, "mean": None}
COUNTS = ("count", "errors")
# Where the run's requests landed (measurement.keys=true; metrics/keycounts.py counts them), shares
# between 0 and 1: hottest_*: of the hottest 0.1/1/10% of the keys loaded before the run;
# chance_*: what the hottest would get by chance alone if every key were equally likely (for the
# run's number of requests and keys); touched: keys requested at least once, over the keys there
# were by the end; newest_1pct: requests on the newest 1% of the keys when chosen; new: requests
# on keys inserted during the run; error: the bound on the hottest shares (0: counted exactly).
KEYS = ("hottest_0_1pct", "hottest_1pct", "hottest_10pct", "chance_0_1pct", "chance_1pct",
        "chance_10pct", "touched", "newest_1pct", "new", "error")
# Where the requests went, as the database client counted those it sent (lessons/figures.py,
# place_figures): nodes.* per node (Cassandra coordinator, HBase RegionServer, MongoDB server),
# regions.* per region of an HBase table (the native client); among those that got requests:
# count; max_share / min_share of the busiest and least busy one (0 to 1); spread = max / min;
# interval_max_share: of the requests, the share that went to the busiest one of their interval.
PLACES = ("count", "max_share", "min_share", "spread", "interval_max_share")
# A node that joined during the run (a `during` add_node; experiments/elastic.py cuts the run at
# the join): join.seconds, from "+ node joining" until every node saw it Up/Normal; per window
# (before, during, after the join) the mean throughput of its intervals, the mean of their
# p99 response times (ms), and the operations that failed in them.
JOIN = ("seconds", *(f"{window}.{what}" for window in ("before", "during", "after")
                     for what in ("throughput", "p99", "errors")))
# The servers' side of the run (issue 54; metrics/server.py, results/server_summary.py), over the
# cluster's nodes (the client's own processes left out): server.gc_pauses, GC pauses of 1 ms or
# more; server.gc_pause_ms_max / gc_pause_ms_total, the longest and their sum (ms);
# server.compactions / server.flushes, those begun (events), else the most pending at once;
# server.compactions_pending / flushes_pending, the most pending in one second; server.cpu_max,
# the busiest node's busiest second (cores). None for a run with no server figures (memory).
SERVER = ("gc_pauses", "gc_pause_ms_max", "gc_pause_ms_total", "compactions", "flushes",
          "compactions_pending", "flushes_pending", "cpu_max")
# The run's spikes (results/spikes.py: seconds whose p99 is at least twice the run's median p99):
# spikes.count, how many; spikes.explained, those a server event overlapped; spikes.gc,
# spikes.compaction, spikes.flush, those a GC pause, a compaction, a flush overlapped; and
# spikes.worst_ratio, the worst second's p99 over the run's median p99.
SPIKES = ("count", "explained", "gc", "compaction", "flush", "worst_ratio")
FUNCTIONS = {"min": min, "max": max, "abs": abs}
# welch_p(a.throughput, b.throughput): the p-value of Welch's t-test between the repetitions of two
# steps made with `repeat = N` (N >= 2); figures of a repeated step are the means of its runs.
TESTS = ("welch_p",)
REPS = "reps."  # a repeated step keeps each run's value of a figure under "reps.<figure>"

_BINARY = {ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv}
_COMPARE = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
            ast.Eq: operator.eq, ast.NotEq: operator.ne}
_SYMBOL = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!="}


class CheckSyntaxError(ValueError):
    """An expression that is not a check; the message says what and how to fix it."""


class Unmeasured(LookupError):
    """A figure the student's run did not produce (for example no UPDATE in workload C)."""


def figure_paths() -> list[str]:
    """Every figure a step offers, as written after `STEP.`."""
    paths = list(SCALARS)
    for op in OPERATIONS:
        for stat in (*STATS, *COUNTS):
            paths.append(f"{op}.{stat}")
        for kind in ("response", "service"):
            paths += [f"{op}.{kind}.{stat}" for stat in STATS]
    paths += [f"keys.{k}" for k in KEYS]
    paths += [f"{where}.{k}" for where in ("nodes", "regions") for k in PLACES]
    paths += [f"join.{k}" for k in JOIN]
    paths += [f"server.{k}" for k in SERVER] + [f"spikes.{k}" for k in SPIKES]
    return paths


_PATHS = frozenset(figure_paths())


def unit(path: str) -> str:
    last = path.rsplit(".", 1)[-1]
    if path.startswith("join."):
        return {"seconds": "s", "throughput": "ops/s"}.get(last, "ms")
    if path.startswith("server."):
        return "ms" if "_ms_" in last else "cores" if last == "cpu_max" else ""
    if last in SCALARS and "." not in path:
        return SCALARS[last]
    if last in STATS:
        return "ms"
    return ""


def _reference(node: ast.AST) -> tuple[str, ...] | None:
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if isinstance(node, ast.Name):
        parts.append(node.id)
        return tuple(reversed(parts))
    return None


@dataclass(frozen=True)
class Expression:
    """A parsed check: its text, syntax tree and the (step, figure) references it reads."""

    text: str
    tree: ast.Expression
    references: tuple[tuple[str, str], ...]

    def evaluate(self, figures: Mapping[str, Mapping[str, float]]) -> bool:
        """True or False; Unmeasured when a figure it reads is missing."""
        return bool(self._value(self.tree.body, figures))

    def tested_steps(self) -> set[str]:
        """Steps whose repetitions a test (welch_p) compares."""
        return {_reference(a)[0] for node in ast.walk(self.tree)  # type: ignore[index]
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) in TESTS for a in node.args}

    def values(self, figures: Mapping[str, Mapping[str, float]]) -> dict[str, float | None]:
        """'step.figure' -> its value (None when not measured), in the order they appear; a
        test's p-value under its own text, e.g. 'welch_p(a.throughput, b.throughput)'."""
        out = {f"{step}.{path}": figures.get(step, {}).get(path) for step, path in self.references}
        for node in ast.walk(self.tree):
            if isinstance(node, ast.Call) and node.func.id in TESTS:  # type: ignore[attr-defined]
                try:
                    out[ast.unparse(node)] = self._value(node, figures)
                except Unmeasured:
                    out[ast.unparse(node)] = None
        return out

    def _value(self, node: ast.AST, figures):
        if isinstance(node, ast.Constant):
            return node.value
        if isinstance(node, ast.BoolOp):
            values = (self._value(v, figures) for v in node.values)
            return all(values) if isinstance(node.op, ast.And) else any(values)
        if isinstance(node, ast.UnaryOp):
            value = self._value(node.operand, figures)
            return (not value) if isinstance(node.op, ast.Not) else -value
        if isinstance(node, ast.BinOp):
            left, right = self._value(node.left, figures), self._value(node.right, figures)
            if isinstance(node.op, ast.Div) and right == 0:
                raise Unmeasured("a division by a figure that is zero")
            return _BINARY[type(node.op)](left, right)
        if isinstance(node, ast.Compare):
            left = self._value(node.left, figures)
            for op, right_node in zip(node.ops, node.comparators, strict=True):
                right = self._value(right_node, figures)
                if not _COMPARE[type(op)](left, right):
                    return False
                left = right
            return True
        if isinstance(node, ast.Call):
            if node.func.id in TESTS:  # type: ignore[attr-defined]
                return _welch_p(*(_reference(a) for a in node.args), figures)  # type: ignore[misc]
            return FUNCTIONS[node.func.id](*(self._value(a, figures) for a in node.args))  # type: ignore[attr-defined]
        ref = _reference(node)
        step, path = ref[0], ".".join(ref[1:])  # type: ignore[index]
        value = figures.get(step, {}).get(path)
        if value is None:
            why = (" (key figures need measurement.keys=true on the step)" if path.startswith("keys.") else
                   " (its client counts no requests per node)" if path.startswith("nodes.") else
                   " (per-region figures come from HBase's native client, hbase.client=native)"
                   if path.startswith("regions.") else
                   " (server figures come from a cluster's nodes, sampled during the run)"
                   if path.startswith("server.") else "")
            raise Unmeasured(f"{step}.{path} was not measured{why}")
        return value


def parse(text: str) -> Expression:
    """Parse and check the shape of an expression (not yet which steps exist)."""
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise CheckSyntaxError(f"not an expression ({exc.msg} at column {exc.offset})") from None
    references: list[tuple[str, str]] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.Constant):
            if isinstance(node.value, bool) or not isinstance(node.value, int | float):
                raise CheckSyntaxError(f"{node.value!r}: only numbers can be written in a check")
            return
        if isinstance(node, ast.BoolOp | ast.Compare | ast.BinOp | ast.UnaryOp):
            if isinstance(node, ast.BinOp) and type(node.op) not in _BINARY:
                raise CheckSyntaxError(f"{ast.unparse(node)}: only + - * / are allowed")
            if isinstance(node, ast.Compare) and any(type(op) not in _COMPARE for op in node.ops):
                raise CheckSyntaxError(f"{ast.unparse(node)}: compare with < <= > >= == !=")
            if isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.Not | ast.USub):
                raise CheckSyntaxError(f"{ast.unparse(node)}: only `not` and unary minus are allowed")
            for child in ast.iter_child_nodes(node):
                if not isinstance(child, ast.operator | ast.cmpop | ast.boolop | ast.unaryop):
                    visit(child)
            return
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else None
            if name not in (*FUNCTIONS, *TESTS) or node.keywords:
                raise CheckSyntaxError(f"{ast.unparse(node)}: the functions are "
                                       f"{', '.join((*FUNCTIONS, *TESTS))}")
            if name in TESTS and (len(node.args) != 2 or not all(_reference(a) for a in node.args)):
                raise CheckSyntaxError(f"{ast.unparse(node)}: {name} compares two figures of repeated "
                                       f"steps, e.g. {name}(a.throughput, b.throughput)")
            for arg in node.args:
                visit(arg)
            return
        ref = _reference(node)
        if ref is None:
            raise CheckSyntaxError(f"{ast.unparse(node)}: not a number, a figure or an operation")
        if len(ref) < 2:
            raise CheckSyntaxError(f"{ref[0]}: write STEP.FIGURE, for example {ref[0]}.throughput")
        path = ".".join(ref[1:])
        if path not in _PATHS:
            raise CheckSyntaxError(f"{'.'.join(ref)}: unknown figure {path!r} (figures: throughput, "
                                   f"errors, read.p99, read.service.p99, keys.hottest_1pct, ...; "
                                   f"`workbench lesson figures` lists them all)")
        references.append((ref[0], path))

    visit(tree.body)
    if not isinstance(tree.body, ast.Compare | ast.BoolOp) and not (
            isinstance(tree.body, ast.UnaryOp) and isinstance(tree.body.op, ast.Not)):
        raise CheckSyntaxError("a check must compare (for example a.read.p99 < 2 * b.read.p99)")
    return Expression(text.strip(), tree, tuple(dict.fromkeys(references)))


def _welch_p(a: tuple[str, ...], b: tuple[str, ...], figures) -> float:
    samples = []
    for ref in (a, b):
        step, path = ref[0], ".".join(ref[1:])
        values = figures.get(step, {}).get(REPS + path)
        if not values or len(values) < 2:
            raise Unmeasured(f"{step}.{path} has no repetitions (welch_p needs repeat = 2 or more)")
        samples.append([float(v) for v in values])
    from workbench.experiments.stats import welch

    return welch(*samples).p
