#!/usr/bin/env python3
"""A TCP proxy whose faults a test controls: the link between a board and its MQTT broker.

    fault_proxy.py --target HOST:PORT [--listen HOST:PORT] [--control PATH]

It listens (port 0: one the kernel picks), prints one JSON line {"listening": PORT} on standard
output, and forwards every accepted connection to the target. Commands come one a line on the Unix
socket --control (each connection: lines in, one JSON line out per command; the proxy runs until
`quit` or SIGTERM), or without --control on standard input (answers on standard output; the proxy
ends at the end of its input):

    mode pass        forward bytes (the default)
    mode blackhole   keep every socket open and drop every byte both ways: a dead cellular link
                     (no FIN, no RST); new connections are accepted and their bytes dropped too
    mode stall       keep every socket open and stop reading: bytes wait (TCP backpressure) and
                     flow again, in order, when the mode changes
    mode refuse      reset new connections at once (a broker that is down)
    rst              reset (RST) every open connection now; the mode stays
    delay MS         hold each chunk MS milliseconds before writing it (both ways, order kept)
    throttle BPS     at most BPS bytes a second each way (0: no limit)
    cut N [rst|fin]  after N more bytes (both ways together) close every connection, mid-chunk if
                     that is where the N-th byte falls (RST by default); once, then pass again
    flip HEX         flip the lowest bit of the last byte of the first occurrence of the bytes HEX
                     in data towards the client (found across reads); once, then pass again
    stats            {"mode":…, "up":…, "down":…, "droppedUp":…, "droppedDown":…,
                      "accepted":…, "open":…, "resets":…}: up = client to target, in bytes
                     forwarded; dropped = bytes thrown away by blackhole
    zero             set the counters to zero
    quit             close everything and exit

Stdlib only (asyncio). Every answer is {"ok": true, …} or {"ok": false, "error": "…"}.
"""

import argparse
import asyncio
import json
import socket
import struct
import sys
import time


class Link:
    """One client connection and its upstream connection."""

    def __init__(self, proxy, client_reader, client_writer):
        self.proxy = proxy
        self.client_reader = client_reader
        self.client_writer = client_writer
        self.up_writer = None
        self.tasks = []
        self.closed = False
        self.ended = 0

    def writers(self):
        return [w for w in (self.client_writer, self.up_writer) if w is not None]

    def abort(self, how="rst"):
        if self.closed:
            return
        self.closed = True
        for w in self.writers():
            sock = w.get_extra_info("socket")
            try:
                if how == "rst" and sock is not None:
                    sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                if how == "rst":
                    w.transport.abort()
                else:
                    w.close()
            except OSError:
                pass
        for t in self.tasks:
            if t is not asyncio.current_task():
                t.cancel()
        self.proxy.links.discard(self)


class Proxy:
    def __init__(self, target):
        self.target = target
        self.mode = "pass"
        self.delay = 0.0
        self.throttle = 0
        self.cut_left = None
        self.cut_how = "rst"
        self.flip = None
        self.flip_tail = b""
        self.flipped = 0
        self.links = set()
        self.resumed = asyncio.Event()
        self.resumed.set()
        self.done = asyncio.Event()
        self.zero()

    def zero(self):
        self.counts = {"up": 0, "down": 0, "droppedUp": 0, "droppedDown": 0, "accepted": 0, "resets": 0}

    def set_mode(self, mode):
        self.mode = mode
        if mode == "stall":
            self.resumed.clear()
        else:
            self.resumed.set()

    async def open_target(self):
        if self.target.startswith("unix:"):
            return await asyncio.open_unix_connection(self.target[5:])
        host, port = self.target.rsplit(":", 1)
        return await asyncio.open_connection(host, int(port))

    async def accept(self, reader, writer):
        self.counts["accepted"] += 1
        link = Link(self, reader, writer)
        if self.mode == "refuse":
            self.counts["resets"] += 1
            link.abort("rst")
            return
        self.links.add(link)
        try:
            up_reader, up_writer = await self.open_target()
        except OSError:
            self.counts["resets"] += 1
            link.abort("rst")
            return
        link.up_writer = up_writer
        link.tasks = [
            asyncio.ensure_future(self.pump(link, reader, up_writer, "up")),
            asyncio.ensure_future(self.pump(link, up_reader, writer, "down")),
        ]

    async def pump(self, link, reader, writer, direction):
        """Reads from one side and writes to the other, applying the faults in force."""
        queue = asyncio.Queue()
        writer_task = asyncio.ensure_future(self.drain(link, queue, writer, direction))
        link.tasks.append(writer_task)
        try:
            while not link.closed:
                await self.resumed.wait()
                data = await reader.read(65536)
                if not data:
                    break
                if self.mode == "blackhole":
                    self.counts["dropped" + direction.capitalize()] += len(data)
                    continue
                await self.resumed.wait()
                if direction == "down" and self.flip is not None:
                    data = self.flip_in(data)
                cut_now = False
                if self.cut_left is not None:
                    if len(data) >= self.cut_left:
                        data = data[: self.cut_left]
                        cut_now = True
                    else:
                        self.cut_left -= len(data)
                await queue.put((time.monotonic() + self.delay, data))
                if cut_now:
                    how = self.cut_how
                    self.cut_left = None
                    await queue.join()
                    for other in list(self.links):
                        self.counts["resets"] += 1
                        other.abort(how)
                    return
            await queue.join()
            # An orderly end on one side is passed on as an orderly end on the other.
            if not link.closed and writer.can_write_eof():
                writer.write_eof()
        except asyncio.CancelledError:
            return
        except (ConnectionError, OSError):
            link.abort("rst")
            return
        link.ended += 1
        if link.ended == 2:
            link.abort("fin")

    def flip_in(self, data):
        """Flips the pattern's last byte when it ends in `data` (its start may be in the reads before)."""
        pattern = self.flip
        joined = self.flip_tail + data
        at = joined.find(pattern)
        if at < 0:
            self.flip_tail = joined[-(len(pattern) - 1):] if len(pattern) > 1 else b""
            return data
        last = at + len(pattern) - 1 - len(self.flip_tail)
        self.flip = None
        self.flip_tail = b""
        self.flipped += 1
        changed = bytearray(data)
        changed[last] ^= 1
        return bytes(changed)

    async def drain(self, link, queue, writer, direction):
        try:
            while True:
                at, data = await queue.get()
                wait = at - time.monotonic()
                if wait > 0:
                    await asyncio.sleep(wait)
                offset = 0
                while offset < len(data):
                    if self.throttle > 0:
                        step = max(1, self.throttle // 20)
                        piece = data[offset: offset + step]
                        writer.write(piece)
                        await writer.drain()
                        self.counts[direction] += len(piece)
                        offset += len(piece)
                        await asyncio.sleep(len(piece) / self.throttle)
                    else:
                        writer.write(data[offset:])
                        await writer.drain()
                        self.counts[direction] += len(data) - offset
                        offset = len(data)
                queue.task_done()
        except asyncio.CancelledError:
            pass
        except (ConnectionError, OSError):
            link.abort("rst")

    def command(self, line):
        line = line.strip()
        words = line.split()
        if not words:
            return {"ok": False, "error": "empty command"}
        name, args = words[0], words[1:]
        try:
            if name == "mode" and len(args) == 1 and args[0] in ("pass", "blackhole", "stall", "refuse"):
                self.set_mode(args[0])
            elif name == "rst" and not args:
                for link in list(self.links):
                    self.counts["resets"] += 1
                    link.abort("rst")
            elif name == "delay" and len(args) == 1:
                self.delay = max(0, int(args[0])) / 1000.0
            elif name == "throttle" and len(args) == 1:
                self.throttle = max(0, int(args[0]))
            elif name == "cut" and len(args) in (1, 2) and (len(args) == 1 or args[1] in ("rst", "fin")):
                self.cut_left = max(1, int(args[0]))
                self.cut_how = args[1] if len(args) == 2 else "rst"
            elif name == "flip" and len(args) == 1:
                self.flip = bytes.fromhex(args[0])
                self.flip_tail = b""
            elif name == "stats" and not args:
                pass
            elif name == "zero" and not args:
                self.zero()
            elif name == "quit" and not args:
                self.done.set()
            else:
                return {"ok": False, "error": "unknown command: %r (see fault_proxy.py's docstring)" % line}
        except ValueError:
            return {"ok": False, "error": "not a number in %r" % line}
        answer = {"ok": True, "mode": self.mode, "open": len(self.links), "flipped": self.flipped}
        answer.update(self.counts)
        return answer


async def serve_control(proxy, path):
    async def client(reader, writer):
        while True:
            line = await reader.readline()
            if not line:
                break
            writer.write((json.dumps(proxy.command(line.decode(errors="replace"))) + "\n").encode())
            await writer.drain()
        writer.close()

    return await asyncio.start_unix_server(client, path=path)


async def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--target", required=True, help="HOST:PORT or unix:PATH")
    parser.add_argument("--listen", default="127.0.0.1:0", help="HOST:PORT (port 0: any free one)")
    parser.add_argument("--control", help="a Unix socket path for commands, besides standard input")
    options = parser.parse_args()

    proxy = Proxy(options.target)
    host, port = options.listen.rsplit(":", 1)
    server = await asyncio.start_server(proxy.accept, host, int(port))
    if options.control:
        await serve_control(proxy, options.control)
    print(json.dumps({"listening": server.sockets[0].getsockname()[1]}), flush=True)

    if options.control:
        # Commands come on the control socket; standard input is not read (it may be /dev/null).
        await proxy.done.wait()
    else:
        loop = asyncio.get_event_loop()
        reader = asyncio.StreamReader()
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
        while not proxy.done.is_set():
            line = await reader.readline()
            if not line:
                # The test that started the proxy has gone: end with it.
                break
            print(json.dumps(proxy.command(line.decode(errors="replace"))), flush=True)
    for link in list(proxy.links):
        link.abort("rst")

if __name__ == "__main__":
    try:
        asyncio.run(main())
    except (KeyboardInterrupt, SystemExit):
        pass
