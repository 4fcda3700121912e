"""A run's timed changes in a lesson step (`during`): what each entry may say, read and checked.

    during = [{ at_s = 5, do = "pause", node = "node2" }, { at_s = 10, do = "resume", node = "node2" }]
    during = [{ at_s = 12, do = "add_node", end_after_s = 30 }]   # the run ends 30 s after the join

lessons/runner.py does them while the run goes on (its _During thread).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

NODE_ACTIONS = ("pause", "kill", "resume", "restart")
DURING = ("pause", "kill", "resume", "restart", "target", "lanes", "add_node", "remove_node")
DURING_KEYS = {"at_s", "do", "node", "value", "end_after_s"}
TIMED = ("add_node", "remove_node", "restart")  # changes that take a while: end_after_s may follow them


@dataclass(frozen=True)
class During:
    at_s: float
    do: str
    node: str | None = None
    value: float | None = None
    # the run ends this many seconds after the change is done (at the latest at its
    # maxexecutiontime): a window after a join however long the join took
    end_after_s: float | None = None

    def describe(self) -> str:
        if self.do == "add_node":
            what = "add a node"
        else:
            what = f"{self.do} {self.node}" if self.node else f"{self.do} {self.value:g}"
        ends = "" if self.end_after_s is None else f" (the run ends {self.end_after_s:g} s after it)"
        return f"at {self.at_s:g} s: {what}{ends}"



def parse_during(raw: Any, step_id: str, action: str, started: bool, at, problem) -> tuple[During, ...]:
    if raw == []:
        return ()
    line = at("during")
    if action != "run":
        problem(line, f"step {step_id!r}: during only goes with a run", 'set action = "run"')
        return ()
    if not isinstance(raw, list):
        problem(line, f"step {step_id!r}: during must be a list",
                'write during = [{ at_s = 5, do = "pause", node = "node1" }]')
        return ()
    out = []
    for entry in raw:
        if not isinstance(entry, dict) or set(entry) - DURING_KEYS:
            problem(line, f"step {step_id!r}: during entry {entry!r}",
                    f"its keys are {', '.join(sorted(DURING_KEYS))}")
            continue
        at_s, do = entry.get("at_s"), entry.get("do")
        if not isinstance(at_s, int | float) or isinstance(at_s, bool) or at_s < 0:
            problem(line,
                    f"step {step_id!r}: during entry {entry!r} needs at_s, seconds after the run starts",
                    "write at_s = 5")
            continue
        if do not in DURING:
            problem(line, f"step {step_id!r}: during does {do!r}", f"it can do {', '.join(DURING)}")
            continue
        end_after = entry.get("end_after_s")
        if end_after is not None and (do not in TIMED or not isinstance(end_after, int | float)
                                      or isinstance(end_after, bool) or end_after < 0):
            problem(line, f"step {step_id!r}: during entry {entry!r}: end_after_s is seconds (0 or more) "
                    f"after {' or '.join(TIMED)}",
                    "write end_after_s = 30 beside a change that takes a while")
            continue
        end_after = None if end_after is None else float(end_after)
        if do == "add_node":
            if not started:
                problem(line, f"step {step_id!r}: during add_node before any cluster was started",
                        'add a step with action = "start" before it')
                continue
            out.append(During(float(at_s), do, end_after_s=end_after))
        elif do in (*NODE_ACTIONS, "remove_node"):
            if not isinstance(entry.get("node"), str):
                problem(line, f"step {step_id!r}: during {do} needs a node", 'add node = "node2"')
                continue
            if not started:
                problem(line, f"step {step_id!r}: during {do} before any cluster was started",
                        'add a step with action = "start" before it')
                continue
            out.append(During(float(at_s), do, node=entry["node"], end_after_s=end_after))
        else:
            value = entry.get("value")
            if not isinstance(value, int | float) or isinstance(value,
                              bool) or value < (0 if do == "target" else 1):
                problem(line, f"step {step_id!r}: during {do} needs value = a number",
                        "target: ops/s (0 = unthrottled); lanes: 1 or more")
                continue
            out.append(During(float(at_s), do, value=float(value)))
    return tuple(sorted(out, key=lambda d: d.at_s))
