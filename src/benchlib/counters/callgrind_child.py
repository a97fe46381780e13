"""The child process of an embedded engine under valgrind (valgrind_child.Child), run as a script:
it imports the engine's DB-API module and serves statements read from stdin until stdin closes.
It imports nothing of benchlib: the engine registry would cost seconds under valgrind.

A request is a header line `<op> <connection> <bytes>` and that many bytes of UTF-8 payload; the
reply is `+<bytes>` (or `-<bytes>` with an error) on a line and that many bytes: the rows as JSON
when the statement returns rows, else nothing. Ops: o (open a connection to the file), x (execute
the payload on the connection's one cursor), n (nothing: the protocol's own cost, which the parent
counts once and takes out of every window), c (close the connection)."""
import importlib
import json
import sys


def main(module: str, database: str, connect_kwargs: str) -> None:
    driver = importlib.import_module(module)
    kwargs = json.loads(connect_kwargs)
    read_line, read, out = sys.stdin.buffer.readline, sys.stdin.buffer.read, sys.stdout.buffer
    connections, cursors = {}, {}
    while True:
        header = read_line()
        if not header:
            break
        op, key, size = header.split()
        text = read(int(size)).decode()
        status, reply = b"+", b""
        try:
            # The op n takes the same steps as x up to the statement, and the same reply: what
            # it costs is the protocol's, on every request.
            if op == b"x":
                cursor = cursors[key]
                cursor.execute(text)
                if cursor.description is not None:
                    reply = json.dumps(cursor.fetchall(), default=str).encode()
            elif op == b"o":
                connections[key] = driver.connect(database, **kwargs)
                cursors[key] = connections[key].cursor()
            elif op == b"c":
                cursors.pop(key).close()
                connections.pop(key).close()
        except Exception as exc:  # the parent raises it, named; the child serves on
            status, reply = b"-", f"{type(exc).__name__}: {exc}".encode()
        out.write(status + str(len(reply)).encode() + b"\n" + reply)
        out.flush()


if __name__ == "__main__":
    main(*sys.argv[1:4])
