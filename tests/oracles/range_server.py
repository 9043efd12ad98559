#!/usr/bin/env python3
"""An HTTP file server with real Range support, request counting and fault
injection, for the remote-reading tests (standard library only).

Usage: range_server.py DIR

Listens on 127.0.0.1 on a free port, prints the port on the first line of
stdout, and serves the files of DIR until stdin closes.

  GET /NAME                   the file, honouring `Range: bytes=A-B`, with
                              ETag and Last-Modified
  GET /O/R/resolve/REV/NAME   the same (the Hub's resolve URLs, hf://)
  GET /models/O/R/resolve/REV/NAME  the same (ModelScope's, ms://)
  GET /v2/NS/M/manifests/TAG  an OCI registry's manifest (ollama://): the
                              file manifests/registry.ollama.ai/NS/M/TAG of
                              DIR laid out as an Ollama store, whole, and
                              only to a client that Accepts its media type
  GET /v2/NS/M/blobs/sha256:HEX  the store's blobs/sha256-HEX, with Range
  GET /_stats                 {"requests": N, "bytes": M, "auth": [...]}
                              for the file requests so far; /_reset zeroes it
  GET /fault/KIND/NAME        NAME served with a fault:
    ignore-range      200 and the whole body, Range ignored
    no-content-range  206 without Content-Range
    wrong-content-range 206 with a Content-Range one byte off
    short-body        206, Content-Length and body half of the range
    drop              206 announcing the range, half of it sent, then the
                      connection closed
    status-NNN        that status, no body
    stall             no answer for 30 s
    stall-body        headers and half the body, then 30 s of silence
    changing          a new ETag on every request
    changing-lm       a new Last-Modified on every request
    redirect-PORT     302 to the same NAME on 127.0.0.1:PORT
"""

import hashlib
import json
import os
import socket
import sys
import threading
import time
from email.utils import formatdate
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

ROOT = os.path.abspath(sys.argv[1])
LOCK = threading.Lock()
STATS = {"requests": 0, "bytes": 0, "auth": []}
COUNTER = [0]
MANIFEST_TYPE = "application/vnd.docker.distribution.manifest.v2+json"


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def send_json(self, obj):
        body = json.dumps(obj).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def write(self, data):
        # Counted before sending: a client that has its bytes may ask for
        # /_stats at once, before this thread would run again.
        with LOCK:
            STATS["bytes"] += len(data)
        self.wfile.write(data)
        self.wfile.flush()

    def do_GET(self):
        path = self.path.split("?", 1)[0]
        if path == "/_stats":
            with LOCK:
                return self.send_json(dict(STATS))
        if path == "/_reset":
            with LOCK:
                STATS.update(requests=0, bytes=0, auth=[])
            return self.send_json({})
        fault = None
        parts = path.lstrip("/").split("/")
        if len(parts) >= 6 and parts[0] == "models" and parts[3] == "resolve":
            parts = parts[5:]
        elif len(parts) >= 5 and parts[2] == "resolve":
            parts = parts[4:]
        manifest = False
        if len(parts) == 5 and parts[0] == "v2" and parts[3] == "manifests":
            if MANIFEST_TYPE not in self.headers.get("Accept", ""):
                return self.status(406)
            manifest = True
            parts = ["manifests", "registry.ollama.ai", parts[1], parts[2], parts[4]]
        elif len(parts) == 5 and parts[0] == "v2" and parts[3] == "blobs":
            parts = ["blobs", parts[4].replace(":", "-", 1)]
        if parts[0] == "fault" and len(parts) >= 3:
            fault, parts = parts[1], parts[2:]
        name = "/".join(parts)
        with LOCK:
            STATS["requests"] += 1
            STATS["auth"].append(self.headers.get("Authorization"))
            COUNTER[0] += 1
            serial = COUNTER[0]
        full = os.path.normpath(os.path.join(ROOT, name))
        if not full.startswith(ROOT + os.sep) or not os.path.isfile(full):
            return self.status(404)
        if manifest:
            with open(full, "rb") as f:
                body = f.read()
            self.send_response(200)
            self.send_header("Content-Type", MANIFEST_TYPE)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            return self.write(body)
        try:
            self.serve(full, fault, serial)
        except (BrokenPipeError, ConnectionResetError):
            pass

    def status(self, code):
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def serve(self, full, fault, serial):
        st = os.stat(full)
        size = st.st_size
        etag = '"%s"' % hashlib.sha1(f"{full}:{st.st_mtime_ns}:{size}".encode()).hexdigest()[:16]
        mtime = st.st_mtime
        if fault == "changing":
            etag = '"v%d"' % serial
        if fault == "changing-lm":
            mtime += serial
        if fault and fault.startswith("status-"):
            return self.status(int(fault[7:]))
        if fault and fault.startswith("redirect-"):
            port = int(fault[9:])
            self.send_response(302)
            self.send_header("Location", f"http://127.0.0.1:{port}/{os.path.relpath(full, ROOT)}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        if fault == "stall":
            time.sleep(30)
            return
        rng = self.headers.get("Range")
        with open(full, "rb") as f:
            data = f.read()
        if rng is None or fault == "ignore-range":
            self.send_response(200)
            self.send_header("Content-Length", str(size))
            self.send_header("ETag", etag)
            self.send_header("Last-Modified", formatdate(mtime, usegmt=True))
            self.end_headers()
            # Stream in pieces: a client that stops reading closes the
            # connection and the rest is never sent.
            for i in range(0, size, 65536):
                self.write(data[i : i + 65536])
            return
        spec = rng.strip().removeprefix("bytes=")
        first, _, last = spec.partition("-")
        if first == "":
            start, end = max(0, size - int(last)), size
        else:
            start = int(first)
            end = min(size, int(last) + 1) if last else size
        if start >= size:
            self.send_response(416)
            self.send_header("Content-Range", f"bytes */{size}")
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        body = data[start:end]
        self.send_response(206)
        if fault == "wrong-content-range":
            self.send_header("Content-Range", f"bytes {start + 1}-{end}/{size}")
        elif fault != "no-content-range":
            self.send_header("Content-Range", f"bytes {start}-{end - 1}/{size}")
        if fault == "short-body":
            body = body[: len(body) // 2]
        self.send_header("Content-Length", str(len(body)))
        self.send_header("ETag", etag)
        self.send_header("Last-Modified", formatdate(mtime, usegmt=True))
        self.end_headers()
        if fault in ("drop", "stall-body"):
            self.write(body[: len(body) // 2])
            if fault == "stall-body":
                time.sleep(30)
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        self.write(body)


def main():
    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    # Stop when the test harness closes our stdin (or dies).
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
