"""The toy database's descriptor: everything the workbench asks about it. It runs in the worker's
own process (no servers), so only the binding, its properties and its client's name are said."""

from workbench.databases.base import Database

TOY = Database(
    name="toy",
    description="a toy key-value store in the worker's process (the plug-in test's)",
    binding="toy_database.binding:ToyBinding",
    prefix="toy.",  # every toy.* property is the toy's: its binding checks them (options.py)
    client_name="toy_database.options:client_name",
    demo_properties=("toy.store=demo",),
)
