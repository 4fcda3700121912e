"""Run inside a test's network namespace, against the Ray cluster at argv[1]: a run on two Ray
workers whose target, pause, resume and lanes are changed while it runs, through the controller's
API (as the app's keys do). Prints one JSON line per tick."""

import asyncio
import json
import sys

from workbench.config.spec import spec_from_args
from workbench.core.controller import Controller


def main() -> None:
    props = ["recordcount=1000", "operationcount=0", "maxexecutiontime=120", "threadcount=4", "workers=2",
             "snapshot.interval=0.5"]
    if sys.argv[1] != "local":  # "local": the same on local worker processes, to compare
        props.append(f"ray.address={sys.argv[1]}")
    spec, _ = spec_from_args(["workloadc"], props, "run")
    controller = Controller(spec, "run")
    ticks = []
    # Wide gaps: on a loaded machine a drain can come a tick or more late, and its operations
    # are then counted in the next tick.
    plan = {4: ("set_target", 400), 13: ("pause",), 20: ("resume",), 21: ("set_lanes", 2), 28: ("stop",)}

    def on_tick(snap):
        ticks.append(snap)
        print(json.dumps({"tick": len(ticks), "ops": snap.operations, "interval_s": snap.interval_s,
                          "lanes": snap.lanes, "paused": snap.paused}), flush=True)
        step = plan.get(len(ticks))
        if step:
            getattr(controller, step[0])(*step[1:])

    controller.subscribe(on_tick)
    outcome = asyncio.run(controller.run())
    print(json.dumps({"outcome": outcome.outcome, "ray": outcome.ray,
                      "events": [[k, v] for _, k, v in outcome.events]}), flush=True)


if __name__ == "__main__":  # local worker processes are spawned: they import this file
    main()
