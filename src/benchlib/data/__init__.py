"""Results as data: the DuckDB store and the shared (S3) store it reads with, the queries and
statistics over stored runs (results), findings (the one verdict rule, rows and their words),
runs compared with runs (comparison: results' statistics judged by findings' rule), and telling a dead run from a live one. It imports benchlib.core, benchlib.host, the engine
catalog and benchlib.counters' constants; it starts nothing and draws nothing, and is independent
of benchlib.containers (neither imports the other)."""
