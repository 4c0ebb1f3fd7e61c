"""One JSON-RPC call on the agent's control socket, for the scripts in this folder (docs/protocol.md:
one request a line, one answer a line). Python standard library only."""
import json
import socket
import time


def call(path, method, params=None, timeout=10.0):
    """Sends `method` with `params` to the socket at `path` and reads one answer line.

    Returns (seconds the answer took, the answer's bytes), or (None, b"") when the agent did not
    answer within `timeout` or the connection failed."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(timeout)
    t = time.time()
    try:
        s.connect(path)
        s.sendall((json.dumps({"jsonrpc": "2.0", "id": 1, "method": method, "params": params or {}}) + "\n").encode())
        buf = b""
        while not buf.endswith(b"\n"):
            c = s.recv(1 << 16)
            if not c:
                return None, b""
            buf += c
        return time.time() - t, buf
    except OSError:
        return None, b""
    finally:
        s.close()
