#!/usr/bin/env python3
"""Fault-injecting loopback proxy between Phalanx and kube-apiserver (faults).

Usage:
  proxy.py tcp  --listen PORT --upstream HOST:PORT [--cut-every S] [--delay-prob P]
                [--delay-ms MS] [--seed N] [--log FILE]
      Byte-level TCP relay (TLS passes through untouched, so a kubeconfig keeps the
      apiserver's CA and only changes the port). Every S seconds it cuts (shutdown + close)
      every established connection, watch streams included; a new connection is delayed by
      MS before its first byte is relayed with probability P.
  proxy.py http --listen PORT --upstream HOST:PORT --cert CRT --key KEY --upstream-ca CA
                [--p409 P] [--p429 P] [--p503 P] [--p410 P] [--pslow P] [--slow-ms MS]
                [--bind-delay-ms MS] [--patch-delay-ms MS] [--seed N] [--log FILE]
      TLS-terminating HTTP/1.1 proxy with its own certificate (ALPN http/1.1 only). One
      request per client connection (the upstream request gets Connection: close, so the
      apiserver's response says so too). Faults, each drawn independently per request:
        --p409  POST .../pods/NAME/binding answered 409 Conflict; half of them before the
                request reaches the apiserver, half after it succeeded there (the bind
                happened, the client is told it conflicted)
        --p429  any request except watches: 429 Too Many Requests, Retry-After: 1
        --p503  any request except watches: 503 Service Unavailable, Retry-After: 1
        --p410  watch requests: the stream answers one ERROR event with code 410 (Expired)
                and ends, as kube-apiserver does for a too old resourceVersion
        --pslow the request is held MS before it is forwarded
      --bind-delay-ms holds every binding POST MS before forwarding, one at a time (so that
      the bindings of one gang are spread out in time and a kill can fall between them).
      --patch-delay-ms does the same for PATCHes of a pod itself (not of a subresource:
      GpuShare's annotation write before the binding), with a lock of its own.
Every injected fault is one line "FAULT <kind> <method> <path> <body-sha1> <unix-time>" in
--log (default stderr); in http mode every request is also logged as
"REQ - <method> <path> <body-sha1> <unix-time>" (so that retries can be matched);
SIGTERM ends the proxy. Python 3 standard library only.
"""
import argparse
import hashlib
import random
import signal
import socket
import ssl
import sys
import threading
import time

LOCK = threading.Lock()
BIND_LOCK = threading.Lock()
PATCH_LOCK = threading.Lock()


class Log:
    def __init__(self, path):
        self.f = open(path, "a", buffering=1) if path else sys.stderr

    def fault(self, kind, method="-", path="-", key="-"):
        with LOCK:
            self.f.write(f"FAULT {kind} {method} {path} {key} {time.time():.3f}\n")

    def request(self, method, path, key):
        with LOCK:
            self.f.write(f"REQ - {method} {path} {key} {time.time():.3f}\n")


def pump(src, dst):
    try:
        while True:
            b = src.recv(65536)
            if not b:
                break
            dst.sendall(b)
    except OSError:
        pass
    for s in (dst, src):
        try:
            s.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def listen(port):
    ls = socket.socket()
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind(("127.0.0.1", port))
    ls.listen(256)
    return ls


def run_tcp(a, log, rng):
    host, port = a.upstream.rsplit(":", 1)
    conns = set()

    def cutter():
        while True:
            time.sleep(a.cut_every)
            with LOCK:
                live = list(conns)
                conns.clear()
            for c, u in live:
                log.fault("cut")
                for s in (c, u):
                    try:
                        s.shutdown(socket.SHUT_RDWR)
                    except OSError:
                        pass

    if a.cut_every > 0:
        threading.Thread(target=cutter, daemon=True).start()
    ls = listen(a.listen)
    while True:
        c, _ = ls.accept()
        with LOCK:
            delay = rng.random() < a.delay_prob

        def serve(c=c, delay=delay):
            try:
                u = socket.create_connection((host, int(port)), timeout=10)
                u.settimeout(None)
            except OSError:
                c.close()
                return
            if delay:
                log.fault("delay")
                time.sleep(a.delay_ms / 1000)
            with LOCK:
                conns.add((c, u))
            t = threading.Thread(target=pump, args=(u, c), daemon=True)
            t.start()
            pump(c, u)
            t.join()
            with LOCK:
                conns.discard((c, u))
            c.close()
            u.close()

        threading.Thread(target=serve, daemon=True).start()


def read_request(c):
    """Reads one HTTP/1.1 request: (head bytes, method, path, headers dict, body) or None."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        b = c.recv(65536)
        if not b:
            return None
        buf += b
        if len(buf) > 1 << 20:
            return None
    head, body = buf.split(b"\r\n\r\n", 1)
    lines = head.decode("latin-1").split("\r\n")
    method, path, _ = lines[0].split(" ", 2)
    hdrs = {}
    for ln in lines[1:]:
        k, _, v = ln.partition(":")
        hdrs[k.strip().lower()] = v.strip()
    n = int(hdrs.get("content-length", "0") or 0)
    if len(body) < n and hdrs.get("expect", "").lower() == "100-continue":
        c.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
    while len(body) < n:
        b = c.recv(65536)
        if not b:
            return None
        body += b
    return lines, method, path, hdrs, body


def respond(c, code, text, body, extra=""):
    c.sendall((f"HTTP/1.1 {code} {text}\r\nContent-Type: application/json\r\n"
               f"Content-Length: {len(body)}\r\n{extra}Connection: close\r\n\r\n").encode() + body)


def status_body(code, reason, msg):
    return (f'{{"kind":"Status","apiVersion":"v1","metadata":{{}},"status":"Failure",'
            f'"message":"{msg}","reason":"{reason}","code":{code}}}').encode()


def run_http(a, log, rng):
    host, port = a.upstream.rsplit(":", 1)
    sctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    sctx.load_cert_chain(a.cert, a.key)
    sctx.set_alpn_protocols(["http/1.1"])
    uctx = ssl.create_default_context(cafile=a.upstream_ca)
    ls = listen(a.listen)

    def draw(p):
        with LOCK:
            return rng.random() < p

    def serve(raw):
        try:
            c = sctx.wrap_socket(raw, server_side=True)
        except (OSError, ssl.SSLError):
            raw.close()
            return
        try:
            req = read_request(c)
            if req is None:
                return
            lines, method, path, hdrs, body = req
            key = hashlib.sha1(body).hexdigest()[:12]
            log.request(method, path, key)
            is_watch = "watch=true" in path or "watch=1" in path
            is_bind = method == "POST" and path.split("?")[0].endswith("/binding")
            if not is_watch and draw(a.p429):
                log.fault("429", method, path, key)
                return respond(c, 429, "Too Many Requests",
                               status_body(429, "TooManyRequests", "injected: too many requests"),
                               "Retry-After: 1\r\n")
            if not is_watch and draw(a.p503):
                log.fault("503", method, path, key)
                return respond(c, 503, "Service Unavailable",
                               status_body(503, "ServiceUnavailable", "injected: unavailable"),
                               "Retry-After: 1\r\n")
            if is_watch and draw(a.p410):
                log.fault("410", method, path, key)
                ev = (b'{"type":"ERROR","object":' +
                      status_body(410, "Expired", "injected: too old resource version") + b"}\n")
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                          b"Transfer-Encoding: chunked\r\nConnection: close\r\n\r\n" +
                          f"{len(ev):x}\r\n".encode() + ev + b"\r\n0\r\n\r\n")
                return
            conflict = is_bind and draw(a.p409)
            conflict_before = conflict and draw(0.5)
            if conflict_before:
                log.fault("409-before", method, path, key)
                return respond(c, 409, "Conflict", status_body(409, "Conflict", "injected: conflict"))
            if draw(a.pslow):
                log.fault("slow", method, path, key)
                time.sleep(a.slow_ms / 1000)
            out = [lines[0]] + [ln for ln in lines[1:] 
                   if not ln.lower().startswith(("connection:", "expect:"))]
            out.append("Connection: close")
            data = ("\r\n".join(out) + "\r\n\r\n").encode("latin-1") + body
            parts = path.split("?")[0].split("/")
            is_pod_patch = (method == "PATCH" and len(parts) == 7 and parts[1:3] == ["api", "v1"]
                            and parts[3] == "namespaces" and parts[5] == "pods")
            lock, delay = None, 0
            if is_bind and a.bind_delay_ms > 0:
                lock, delay = BIND_LOCK, a.bind_delay_ms
            elif is_pod_patch and a.patch_delay_ms > 0:
                lock, delay = PATCH_LOCK, a.patch_delay_ms
            if lock:
                lock.acquire()
                time.sleep(delay / 1000)
            try:
                u = uctx.wrap_socket(socket.create_connection((host, int(port)), timeout=10),
                                     server_hostname=host)
                u.settimeout(None)
                u.sendall(data)
                if conflict:
                    resp = b""
                    while True:
                        b = u.recv(65536)
                        if not b:
                            break
                        resp += b
                    u.close()
                    log.fault("409-after" if b" 201 " in resp.split(b"\r\n", 1)[0] else "409-after-failed",
                              method, path, key)
                    return respond(c, 409, "Conflict", status_body(409, "Conflict", "injected: conflict"))
            finally:
                if lock:
                    lock.release()
            pump(u, c)
            u.close()
        except (OSError, ssl.SSLError, ValueError):
            pass
        finally:
            try:
                c.close()
            except OSError:
                pass

    while True:
        raw, _ = ls.accept()
        threading.Thread(target=serve, args=(raw,), daemon=True).start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["tcp", "http"])
    ap.add_argument("--listen", type=int, required=True)
    ap.add_argument("--upstream", required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--log", default="")
    ap.add_argument("--cut-every", type=float, default=0)
    ap.add_argument("--delay-prob", type=float, default=0)
    ap.add_argument("--delay-ms", type=float, default=500)
    ap.add_argument("--cert")
    ap.add_argument("--key")
    ap.add_argument("--upstream-ca")
    for p in ("p409", "p429", "p503", "p410", "pslow"):
        ap.add_argument("--" + p, type=float, default=0)
    ap.add_argument("--slow-ms", type=float, default=1000)
    ap.add_argument("--bind-delay-ms", type=float, default=0)
    ap.add_argument("--patch-delay-ms", type=float, default=0)
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    log = Log(a.log)
    rng = random.Random(a.seed)
    if a.mode == "tcp":
        run_tcp(a, log, rng)
    else:
        if not (a.cert and a.key and a.upstream_ca):
            ap.error("http mode needs --cert, --key and --upstream-ca")
        run_http(a, log, rng)


if __name__ == "__main__":
    main()
