"""Engines and services in containers: images (official, or built offline from the recipes
here), the one lifecycle that starts, tracks and reaps them, and the services benchlib starts
beside the engines (MinIO). It imports benchlib.core, benchlib.host, benchlib.engines and
benchlib.counters (an engine started under valgrind); never benchlib.data, which is independent
of it, nor any layer above."""
