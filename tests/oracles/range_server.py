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
  HEAD of any of these       the same status and headers, no body
  GET /_stats                 {"requests": N, "bytes": M, "auth": [...],
                              "headers": [{name: value}, ...]} for the file
                              requests so far (names lower-case); /_reset
                              zeroes it
  GET /_set?KEY=VALUE         server settings (no parameter: clears them):
    blob_redirect=BASE        302 every /v2/.../blobs/... request to
                              BASE + the same path
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
    echo-500          a GET: 500 with a body echoing the request line and
                      headers (and an ESC); a HEAD: served normally
    trickle           206 announcing the range, then one byte every 50 ms
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
STATS = {"requests": 0, "bytes": 0, "auth": [], "headers": []}
SETTINGS = {}
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

    head = False

    def write(self, data):
        if self.head:
            return
        # Counted before sending: a client that has its bytes may ask for
        # /_stats at once, before this thread would run again.
        with LOCK:
            STATS["bytes"] += len(data)
        self.wfile.write(data)
        self.wfile.flush()

    def do_HEAD(self):
        self.head = True
        self.answer()

    def do_GET(self):
        # One handler serves every request of a kept-alive connection.
        self.head = False
        self.answer()

    def answer(self):
        path, _, query = self.path.partition("?")
        if path == "/_stats":
            with LOCK:
                return self.send_json(dict(STATS))
        if path == "/_reset":
            with LOCK:
                STATS.update(requests=0, bytes=0, auth=[], headers=[])
            return self.send_json({})
        if path == "/_set":
            with LOCK:
                SETTINGS.clear()
                SETTINGS.update(p.split("=", 1) for p in query.split("&") if "=" in p)
            return self.send_json(dict(SETTINGS))
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
            base = SETTINGS.get("blob_redirect")
            if base:
                self.send_response(302)
                self.send_header("Location", base + path)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            parts = ["blobs", parts[4].replace(":", "-", 1)]
        if parts[0] == "fault" and len(parts) >= 3:
            fault, parts = parts[1], parts[2:]
        name = "/".join(parts)
        with LOCK:
            STATS["requests"] += 1
            STATS["auth"].append(self.headers.get("Authorization"))
            STATS["headers"].append({k.lower(): v for k, v in self.headers.items()})
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
        if fault == "echo-500" and not self.head:
            lines = [self.requestline] + [f"{k}: {v}" for k, v in self.headers.items()]
            body = ("\x1b[31m" + "\r\n".join(lines)).encode()
            self.send_response(500)
            self.send_header("Content-Type", "text/plain")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            return self.write(body)
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
        if fault == "trickle":
            for i in range(len(body)):
                self.write(body[i : i + 1])
                time.sleep(0.05)
            return
        if fault in ("drop", "stall-body"):
            self.write(body[: len(body) // 2])
            if fault == "stall-body":
                time.sleep(30)
            self.connection.shutdown(socket.SHUT_RDWR)
            self.close_connection = True
            return
        self.write(body)


class Server(ThreadingHTTPServer):
    def handle_error(self, request, client_address):
        # A client that hangs up (a fault test, a deadline) is expected.
        if isinstance(sys.exc_info()[1], (BrokenPipeError, ConnectionResetError)):
            return
        super().handle_error(request, client_address)


def main():
    server = Server(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    print(server.server_address[1], flush=True)
    # Stop when the test harness closes our stdin (or dies).
    sys.stdin.read()
    server.shutdown()


if __name__ == "__main__":
    main()
