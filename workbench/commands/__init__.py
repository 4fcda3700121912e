"""CLI sub-commands: one module per command group, each with `register(subparsers)`.

Every registered parser sets `func(args) -> int` through `set_defaults`.
"""
