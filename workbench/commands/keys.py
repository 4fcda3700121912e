"""`workbench keys`: where would a run's requests land? A key-popularity summary."""

from __future__ import annotations

import argparse

from workbench.config.spec import spec_from_args
from workbench.core.popularity import popularity
from workbench.errors import ConfigError


def register(subparsers) -> None:
    p = subparsers.add_parser(
        "keys",
        help="draw key choices as a run would and show how popular the hottest keys are",
        description="Draw N key choices exactly as `workbench run` would (same properties, same "
        "generators, same seed) and summarise them: distinct keys touched and the share of "
        "draws on the hottest 0.1%%, 1%% and 10%% of keys.",
    )
    p.add_argument("-P", dest="files", action="append", default=[], metavar="FILE")
    p.add_argument("-p", dest="props", action="append", default=[], metavar="KEY=VALUE")
    p.add_argument("--samples", type=int, default=100_000, metavar="N", help="draws (default 100000)")
    p.add_argument("--first", type=int, default=10, metavar="N", help="key names to list (default 10)")
    p.set_defaults(func=keys_command)


def keys_command(args: argparse.Namespace) -> int:
    if args.samples < 1:
        raise ConfigError(f"--samples {args.samples} draws nothing", "give --samples 1 or more")
    spec, _ = spec_from_args(args.files, args.props, "run")
    pop = popularity(spec, args.samples, args.first)
    dist = spec.requestdistribution
    if dist in ("zipfian", "latest"):
        dist += f" (constant {spec.zipfian_constant})"
    print(f"distribution      {dist}")
    print(f"keys              {pop.keys:,}")
    print(f"samples           {pop.samples:,}")
    print(f"distinct keys     {pop.distinct:,} ({pop.distinct / pop.keys:.1%} of the keys)")
    for fraction, (k, share) in pop.hot_shares.items():
        label = f"hottest {fraction * 100:g}%"
        print(f"{label:<17} {share:6.1%} of draws ({k:,} keys)")
    print("first keys        " + " ".join(pop.first_keys))
    return 0
