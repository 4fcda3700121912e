"""The memory database: the in-process ordered store of binding.py (engine tests, demos, lessons).
No server: no presets, no clusters."""

from __future__ import annotations

from workbench.databases.base import Database

MEMORY = Database(
    name="memory",
    description="in-process ordered store (engine tests and demos)",
    binding="workbench.databases.memory.binding:MemoryBinding",
    prefix="memory.",
    client_name=lambda properties: "memory (in-process)",
    demo_properties=("memory.store=demo",),  # the demo's load and runs share one store
    order=0,
)
