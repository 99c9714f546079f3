#!/usr/bin/env python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# A fake instance metadata service on 127.0.0.1 for the imds: key source tests (AWS IMDSv2, GCP,
# Azure, a URL with headers of its own, and misbehaviour).
# Usage: imds-server.py PORTFILE LIFETIME_S [ADDRESS [PORT [LOG [KEYFILE]]]]: listens on ADDRESS:PORT
# (default 127.0.0.1 and any free port), writes its port to PORTFILE, appends one line per request
# to LOG ("METHOD PATH STATUS"), serves KEYFILE's bytes as the key (default: bytes 0..31), and
# exits by itself after LIFETIME_S seconds, or as soon as the process that started it has gone,
# whatever happens to the test.
import base64
import http.server
import os
import sys
import threading
import time

TOKEN = "AQAEAFakeToken-thaw=="
KEY = bytes(range(32))
LOG = None
# What the imds:URL tests send: "Authorization:Bearer%20Oracle" and "X-Thaw:a%20b%2Cc%3Bd%25".
CUSTOM = {"Authorization": "Bearer Oracle", "X-Thaw": "a b,c;d%"}


class Handler(http.server.BaseHTTPRequestHandler):
    def reply(self, code, body=b"", headers=()):
        if LOG:
            with open(LOG, "a") as f:
                f.write("%s %s %d\n" % (self.command, self.path, code))
        self.send_response(code)
        for k, v in headers:
            self.send_header(k, v)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_PUT(self):
        if self.path != "/latest/api/token":
            return self.reply(405)
        if not self.headers.get("X-aws-ec2-metadata-token-ttl-seconds", "").isdigit():
            return self.reply(400)
        self.reply(200, TOKEN.encode())

    def do_GET(self):
        p = self.path
        if p.startswith("/latest/"):
            if self.headers.get("X-aws-ec2-metadata-token") != TOKEN:
                return self.reply(401)
            p = p[len("/latest"):]
        elif p.startswith("/computeMetadata/"):
            if self.headers.get("Metadata-Flavor") != "Google":
                return self.reply(403)
            p = p[len("/computeMetadata"):]
        elif p.startswith("/custom/"):
            if any(self.headers.get(k) != v for k, v in CUSTOM.items()):
                return self.reply(403)
            p = p[len("/custom"):]
        elif p.startswith("/metadata/"):
            if self.headers.get("Metadata") != "true":
                return self.reply(400)
            p = p[len("/metadata"):]
        else:
            return self.reply(404)
        if p == "/raw":
            return self.reply(200, KEY)
        if p == "/b64":
            return self.reply(200, base64.b64encode(KEY) + b"\n")
        if p == "/badb64":
            return self.reply(200, b"not base64!")
        if p == "/big":
            return self.reply(200, b"k" * 6000)  # more than any key, even in base64
        if p == "/big64":
            return self.reply(200, b"k" * 5464)  # valid base64 of 4098 bytes
        if p == "/slow":
            time.sleep(4)
            return self.reply(200, KEY)
        if p == "/busy":
            return self.reply(503)
        if p == "/redirect":
            return self.reply(302, b"", [("Location", "/latest/raw")])
        self.reply(404)

    def log_message(self, *args):
        pass


def main():
    global KEY, LOG
    args = sys.argv[3:] + [None] * 4
    if args[2]:
        LOG = args[2]
    if args[3]:
        with open(args[3], "rb") as f:
            KEY = f.read()
    server = http.server.ThreadingHTTPServer((args[0] or "127.0.0.1", int(args[1] or 0)), Handler)
    server.daemon_threads = True
    tmp = sys.argv[1] + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(server.server_address[1]))
    os.rename(tmp, sys.argv[1])
    threading.Timer(float(sys.argv[2]), server.shutdown).start()
    threading.Thread(target=orphan_exit, args=(os.getppid(),), daemon=True).start()
    server.serve_forever()


def orphan_exit(parent):
    # A wrapper (pyenv's shim) may stand between the test and this process: the test kills the
    # wrapper, and this process must not outlive it.
    while os.getppid() == parent:
        time.sleep(0.2)
    os._exit(0)


main()
