"""Deterministic, streamed data generators for the notebooks' tables (`ssb`: the Star Schema
Benchmark's five tables). A generator yields chunks of column arrays, never the whole table.
It imports nothing of benchlib, beside benchlib.host in the contract's layers; workloads import it."""
