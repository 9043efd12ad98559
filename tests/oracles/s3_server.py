#!/usr/bin/env python3
"""An S3-compatible server (moto's, pinned in requirements.txt) on
127.0.0.1, for the object-store tests.

Usage: s3_server.py BUCKET FILE...

Starts moto's standalone server on a free port, creates BUCKET, uploads
each FILE under its base name, prints the port on the first line of
stdout, then reads commands from stdin until it closes:

  put KEY PATH    uploads PATH as KEY (a new ETag), answers "ok"
"""

import logging
import os
import socket
import sys

try:
    import boto3
    from moto.server import ThreadedMotoServer
except ImportError as e:  # pragma: no cover - reported to the Rust test
    sys.exit(f"s3_server.py: cannot import moto ({e}); pip install -r tests/oracles/requirements.txt")


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def main():
    bucket, files = sys.argv[1], sys.argv[2:]
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    port = free_port()
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
    server.start()
    s3 = boto3.client(
        "s3",
        endpoint_url=f"http://127.0.0.1:{port}",
        region_name="us-east-1",
        aws_access_key_id="testing",
        aws_secret_access_key="testing",
    )
    s3.create_bucket(Bucket=bucket)
    for path in files:
        s3.upload_file(path, bucket, os.path.basename(path))
    print(port, flush=True)
    for line in sys.stdin:
        cmd = line.split()
        if cmd[:1] == ["put"] and len(cmd) == 3:
            s3.upload_file(cmd[2], bucket, cmd[1])
            print("ok", flush=True)
    server.stop()


if __name__ == "__main__":
    main()
