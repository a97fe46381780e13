"""This host and what it counts directly: Docker reachable or not, CPUs, the owner label of a
process, provenance (host facts, git state), perf's counters and cgroup accounting. It imports
only benchlib.core; engines, counters and every layer above may import it."""
