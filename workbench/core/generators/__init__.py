"""Number generators, one module per distribution, each drawing from a random source it is given.

Each lane passes its own `random.Random`, so a lane's stream is reproducible from a seed and
no generator is shared across lanes except the counters, which model YCSB's shared sequences.
"""
