"""A run: parameters and their checks, the one measurement path (measure: a run's row, its
meters and windows), the one run loop (driver), sysbench and its packaged Lua tests, and
progress. It imports every layer below (containers, data, counters, engines, host, core);
presenting, workloads and everything above import it, never the other way round."""
