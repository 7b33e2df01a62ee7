#!/usr/bin/env python3
"""One large job-control request (cancel of N ids no job has) to a running daemon, while
another client asks for the status every 10 ms: how long the large request takes, what comes
back, and the status requests' latency meanwhile (the daemon's loop stalls them all).

    python3 test/bench/big_control_request.py SOCKET [N]     # N: 450000 by default

One line of JSON on stdout. Standard library only; the frame layout is include/gshare/protocol.h's."""
import json
import os
import re
import socket
import struct
import sys
import threading
import time

PROTOCOL_H = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include",
                          "gshare", "protocol.h")
with open(PROTOCOL_H) as f:
    VERSION = int(re.search(r"kVersion = (\d+);", f.read()).group(1))
MAGIC, STATUS_REQUEST, JOB_CONTROL = 0x52485347, 35, 39


def frame(type_, payload):
    return struct.pack("<IHHII", MAGIC, VERSION, type_, len(payload), 0) + payload


def read_exact(s, n):
    data = b""
    while len(data) < n:
        chunk = s.recv(min(1 << 20, n - len(data)))
        if not chunk:
            return None
        data += chunk
    return data


def read_frame(s):
    """The payload of the next frame, or None when the daemon closed the connection."""
    try:
        head = read_exact(s, 16)
        return None if head is None else read_exact(s, struct.unpack("<IHHII", head)[3])
    except ConnectionResetError:
        return None


def main():
    path = sys.argv[1]
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 450_000
    payload = json.dumps({"action": "cancel", "ids": list(range(10 ** 6, 10 ** 6 + n))}).encode()
    latencies, stop = [], threading.Event()

    def probe():
        while not stop.is_set():
            t0 = time.monotonic()
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(path)
            s.sendall(frame(STATUS_REQUEST, b"{}"))
            read_frame(s)
            s.close()
            latencies.append(time.monotonic() - t0)
            time.sleep(0.01)

    prober = threading.Thread(target=probe)
    prober.start()
    time.sleep(0.3)
    t0 = time.monotonic()
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(path)
    s.sendall(frame(JOB_CONTROL, payload))
    reply = read_frame(s)
    took = time.monotonic() - t0
    time.sleep(0.3)
    stop.set()
    prober.join()
    latencies.sort()
    print(json.dumps({
        "ids": n, "request_bytes": len(payload), "reply_s": round(took, 3),
        "reply_bytes": None if reply is None else len(reply),
        "reply_head": None if reply is None else reply[:100].decode(errors="replace"),
        "status_requests": len(latencies),
        "status_p50_ms": round(1000 * latencies[len(latencies) // 2], 1),
        "status_max_ms": round(1000 * latencies[-1], 1)}))


if __name__ == "__main__":
    main()
