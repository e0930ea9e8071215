#!/usr/bin/env python3
"""A webhook receiver that verifies every delivery with the `standardwebhooks` package.

Usage: receiver.py --secret LABEL=whsec_... [--secret LABEL=whsec_...]

Listens on 127.0.0.1 (a free port), prints `listening <port>`, then one JSON line per POST:
{"id": webhook-id, "verified_by": [labels whose secret verifies it], "errors": {label: error},
 "signatures": n, "content_type": ..., "body": parsed JSON or null}.
Answers 204 when at least one secret verifies the delivery, 400 otherwise.
"""

import argparse
import json
import sys
from http.server import BaseHTTPRequestHandler, HTTPServer

from standardwebhooks import Webhook


def parse_args():
    parser = argparse.ArgumentParser()
    parser.add_argument("--secret", action="append", required=True, help="LABEL=whsec_...")
    args = parser.parse_args()
    secrets = []
    for item in args.secret:
        label, _, secret = item.partition("=")
        secrets.append((label, Webhook(secret)))
    return secrets


def make_handler(secrets):
    class Handler(BaseHTTPRequestHandler):
        def do_POST(self):
            length = int(self.headers.get("content-length", "0"))
            body = self.rfile.read(length)
            headers = {key: value for key, value in self.headers.items()}
            verified_by, errors, parsed = [], {}, None
            for label, webhook in secrets:
                try:
                    parsed = webhook.verify(body, headers)
                    verified_by.append(label)
                except Exception as error:  # the verifier's verdict, reported to the test
                    errors[label] = f"{type(error).__name__}: {error}"
            line = {
                "id": headers.get("webhook-id"),
                "verified_by": verified_by,
                "errors": errors,
                "signatures": len(headers.get("webhook-signature", "").split()),
                "content_type": headers.get("content-type"),
                "body": parsed,
            }
            print(json.dumps(line, ensure_ascii=False), flush=True)
            self.send_response(204 if verified_by else 400)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, format, *args):
            pass

    return Handler


def main():
    server = HTTPServer(("127.0.0.1", 0), make_handler(parse_args()))
    print(f"listening {server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
