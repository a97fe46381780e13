"""Counters that need a tool around the engine: valgrind's callgrind for a server or an embedded
engine (its child script), reading callgrind's profiles, and the map from a function to an
engine's subsystem. It imports benchlib.core, benchlib.host and the engine catalog
(benchlib.engines); it starts no container itself (benchlib.containers does) and stores nothing."""
