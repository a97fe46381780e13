"""The child process of callgrind_embedded, run as a script under valgrind: connect, run the
setup statements, then each phase between two calls of the marker function (each call closes a
callgrind window). It imports nothing of benchlib: its own start is counted, and the engine
registry would cost seconds under valgrind. The protocol is callgrind_embedded's docstring."""
import importlib
import json
import os
import sys
import time


def main(spec_path: str) -> None:
    """Every phase runs the same code, statements or none, between two marker calls."""
    with open(spec_path) as handle:
        spec = json.load(handle)
    marker = getattr(os, spec["marker"])
    clock = time.perf_counter
    driver = importlib.import_module(spec["module"])
    connection = driver.connect(spec["database"], **spec["connect_kwargs"])
    for statement in spec["setup"]:
        connection.execute(statement).fetchall()
    walls, results = [], []
    for _name, statements in spec["phases"]:
        marker()
        t0 = clock()
        rows = None
        for statement in statements:
            rows = connection.execute(statement).fetchall()
        walls.append(clock() - t0)
        results.append(rows)
    marker()
    connection.close()
    with open(spec["result"], "w") as handle:
        json.dump({"pid": os.getpid(), "wall_seconds": walls,
                   "rows": [None if r is None else [list(row) for row in r[:20]] for r in results]},
                  handle, default=str)


if __name__ == "__main__":
    main(sys.argv[1])
