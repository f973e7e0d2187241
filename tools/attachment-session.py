#!/usr/bin/env python3
"""A large file through the notes app and a real sync-server, cut by kills.

    tools/attachment-session.py sqlite|postgres [--megabytes N] [--measure]

Starts sync-server ($BIN, default .build/debug) on a fresh SQLite file or a
throwaway PostgreSQL cluster (tools/pg-test-cluster.sh), behind a small
HTTP proxy of this script's that logs every attachment request and can kill
a process at a chosen request. Then:

1. device A adds a note and attaches an N MB file (default 50) while
   offline (no server named);
2. A syncs; at the middle upload chunk, while its body is on the way, A is
   killed with SIGKILL;
3. A syncs again; at the next upload chunk the server is killed with
   SIGKILL (the sync fails, exit 69); the server is started again on the
   same database;
4. A syncs again and ends well: the note and its file are on the server;
5. device B syncs, and writes the file out with `notes attachment`; in the
   middle of the download the server is killed and started again, and the
   command is run again;
6. the file B wrote is compared with the original, byte for byte.

It prints what each step saw and "chunks sent again after the device's
restart" (the goal: at most 1), and exits non-zero when anything differs.

With --measure it also times, without the proxy, an upload and a download
of the file (default 100 MB then) against a plain copy of the same bytes
over a loopback socket into a synced file, and reports the resident memory
growth of the device process (peak, against a sync of the same device with nothing to do)
and of the server (peak during the transfer, against before it).
"""
import argparse
import hashlib
import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time

from sync_server_process import HERE, Failure, Server, Storage


class Proxy:
    """Forwards HTTP/1.1 requests one at a time per connection, logs the
    attachment ones, and runs `trigger(kind, index)` when a request's head
    arrives: returning True cuts the request there (its body half sent)."""

    def __init__(self, target_port):
        self.target_port = target_port
        self.listener = socket.socket()
        self.listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(64)
        self.port = self.listener.getsockname()[1]
        self.log = []          # (kind, offset, length) of every attachment request seen
        self.trigger = lambda kind, index: False
        self.lock = threading.Lock()
        threading.Thread(target=self.accept, daemon=True).start()

    def accept(self):
        while True:
            client, _ = self.listener.accept()
            threading.Thread(target=self.serve, args=(client,), daemon=True).start()

    @staticmethod
    def read_head(connection, buffer):
        while b"\r\n\r\n" not in buffer:
            data = connection.recv(65536)
            if not data:
                return None, buffer
            buffer += data
        head, rest = buffer.split(b"\r\n\r\n", 1)
        return head, rest

    @staticmethod
    def header(head, name):
        found = re.search(rb"\r\n" + name.encode() + rb":\s*([^\r\n]*)", head, re.IGNORECASE)
        return found.group(1).decode() if found else None

    @staticmethod
    def read_exactly(connection, buffer, count):
        while len(buffer) < count:
            data = connection.recv(max(65536, count - len(buffer)))
            if not data:
                raise ConnectionError("closed")
            buffer += data
        return buffer[:count], buffer[count:]

    def serve(self, client):
        upstream = None
        pending = b""
        try:
            upstream = socket.create_connection(("127.0.0.1", self.target_port))
            back = b""
            while True:
                head, pending = self.read_head(client, pending)
                if head is None:
                    return
                length = int(self.header(head, "Content-Length") or 0)
                path = head.split(b" ", 2)[1].decode()
                kind = {"/v1/attachments/upload": "upload", "/v1/attachments/download": "download"}.get(path)
                if self.header(head, "Expect"):
                    head = re.sub(rb"\r\nExpect:[^\r\n]*", b"", head, flags=re.IGNORECASE)
                    client.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
                if kind:
                    with self.lock:
                        index = sum(1 for entry in self.log if entry[0] == kind)
                        offset = self.header(head, "Sync-Offset")
                        self.log.append((kind, int(offset) if offset else None, length))
                    if self.trigger(kind, index):
                        return
                body, pending = self.read_exactly(client, pending, length)
                upstream.sendall(head + b"\r\n\r\n" + body)
                reply_head, back = self.read_head(upstream, back)
                if reply_head is None:
                    return
                reply_length = int(self.header(reply_head, "Content-Length") or 0)
                reply_body, back = self.read_exactly(upstream, back, reply_length)
                client.sendall(reply_head + b"\r\n\r\n" + reply_body)
        except (ConnectionError, OSError):
            return
        finally:
            client.close()
            if upstream is not None:
                upstream.close()


def notes(binaries, *arguments, check=True, server=None, background=False):
    command = [os.path.join(binaries, "notes"), *arguments] + (["--server", server, "--token", "t-a"] if server else [])
    if background:
        return subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    done = subprocess.run(command, capture_output=True, text=True)
    if check and done.returncode != 0:
        raise Failure("notes %s: exit %d: %s" % (" ".join(arguments), done.returncode, done.stderr.strip()))
    return done


def wait_with_rusage(process):
    _, status, usage = os.wait4(process.pid, 0)
    process.returncode = os.waitstatus_to_exitcode(status)
    return usage.ru_maxrss


def digest(path):
    hash = hashlib.sha256()
    with open(path, "rb") as file:
        for block in iter(lambda: file.read(1 << 20), b""):
            hash.update(block)
    return hash.hexdigest()


def write_random(path, megabytes):
    with open(path, "wb") as file:
        for _ in range(megabytes):
            file.write(os.urandom(1 << 20))


def session(binaries, server, work, megabytes):
    proxy = Proxy(server.port)
    through = "http://127.0.0.1:%d" % proxy.port
    original = os.path.join(work, "photo.bin")
    write_random(original, megabytes)
    a, b = os.path.join(work, "a"), os.path.join(work, "b")
    note = notes(binaries, "add", "the photo", "--dir", a).stdout.strip()
    attached = notes(binaries, "attach", note, original, "--type", "image/jpeg", "--dir", a).stdout.split()
    print("1. A attached %s (%s bytes) to note %s offline" % (attached[0], attached[1], note))

    chunks = (megabytes * (1 << 20) + (1 << 20) - 1) >> 20
    device = {}
    kill_at = chunks // 2

    def kill_device(kind, index):
        if kind == "upload" and index == kill_at:
            device["process"].send_signal(signal.SIGKILL)
            return True
        return False

    proxy.trigger = kill_device
    device["process"] = notes(binaries, "sync", "--dir", a, server=through, background=True)
    device["process"].communicate()
    first_run = list(proxy.log)
    sent_before = max(offset + length for kind, offset, length in first_run if kind == "upload")
    print("2. A killed (SIGKILL, exit %d) while sending upload chunk %d of %d (bytes %d to %d)"
          % (device["process"].returncode, kill_at + 1, chunks, first_run[-1][1], sent_before))
    if device["process"].returncode != -signal.SIGKILL:
        raise Failure("the device was not killed in the middle of its upload")

    server_kill = {}

    def kill_server(kind, index):
        if kind == "upload" and index == kill_at + 2 and not server_kill:
            server_kill["at"] = index
            server.kill()
            return True
        return False

    proxy.trigger = kill_server
    cut = notes(binaries, "sync", "--dir", a, server=through, check=False)
    second_run = proxy.log[len(first_run):]
    resent = sum(1 for kind, offset, _ in second_run if kind == "upload" and offset < sent_before)
    print("3. A restarted: its upload went on from byte %d; chunks sent again after the device's restart: %d"
          % (second_run[0][1] if second_run else -1, resent))
    if not server_kill or cut.returncode != 69:
        raise Failure("the server was not killed in the middle of the upload (notes sync exit %d: %s)" % (cut.returncode, cut.stderr.strip()))
    print("   the server was killed (SIGKILL) in the middle of the upload (at bytes from %d); notes sync exit 69: %s"
          % (second_run[-1][1], cut.stderr.strip()))
    server.start()
    proxy.trigger = lambda kind, index: False
    mark = len(proxy.log)
    done = notes(binaries, "sync", "--dir", a, server=through)
    third = [entry for entry in proxy.log[mark:] if entry[0] == "upload"]
    print("4. server restarted; A synced: %s; it went on from byte %d" % (done.stdout.strip(), third[0][1] if third else -1))
    if resent > 1:
        raise Failure("%d chunks were sent again after the device's restart (at most 1)" % resent)

    notes(binaries, "sync", "--dir", b, server=through)
    listed = notes(binaries, "list", "--json", "--dir", b).stdout
    if '"local":false' not in listed:
        raise Failure("B's list does not show the file as not here: " + listed)
    download_kill = {}

    def kill_during_download(kind, index):
        if kind == "download" and index == chunks // 2 and not download_kill:
            download_kill["at"] = index
            server.kill()
            return True
        return False

    proxy.trigger = kill_during_download
    output = os.path.join(work, "written.bin")
    cut = notes(binaries, "attachment", note, "photo.bin", "--out", output, "--dir", b, server=through, check=False)
    if not download_kill or cut.returncode != 69 or os.path.exists(output):
        raise Failure("the download was not cut as planned (exit %d, output %s)" % (cut.returncode, os.path.exists(output)))
    print("5. B's download cut by a server kill at its chunk %d of %d: exit 69, nothing written at the output" % (download_kill["at"] + 1, chunks))
    server.start()
    proxy.trigger = lambda kind, index: False
    notes(binaries, "attachment", note, "photo.bin", "--out", output, "--dir", b, server=through)
    same = digest(output) == digest(original)
    print("6. server restarted; B wrote the file out: %s" % ("byte-identical" if same else "DIFFERENT"))
    if not same:
        raise Failure("the file B wrote differs from the original")


def measure(binaries, server, work, megabytes):
    base = "http://127.0.0.1:%d" % server.port
    original = os.path.join(work, "measured.bin")
    write_random(original, megabytes)
    size = os.path.getsize(original)
    a, b = os.path.join(work, "ma"), os.path.join(work, "mb")
    note = notes(binaries, "add", "measured", "--dir", a).stdout.strip()
    notes(binaries, "sync", "--dir", a, server=base)
    idle = notes(binaries, "sync", "--dir", a, server=base, background=True)
    idle_rss = wait_with_rusage(idle)
    notes(binaries, "attach", note, original, "--dir", a)

    def sampled(process):
        peak = [server.rss_kib()]
        while process.poll() is None:
            peak.append(server.rss_kib())
            time.sleep(0.02)
        return max(peak)

    before = server.rss_kib()
    started = time.monotonic()
    upload = notes(binaries, "sync", "--dir", a, server=base, background=True)
    peak = [before]
    watcher = threading.Thread(target=lambda: peak.append(sampled(upload)))
    watcher.start()
    upload_rss = wait_with_rusage(upload)
    upload_seconds = time.monotonic() - started
    watcher.join()
    upload_server = max(peak) - before
    if upload.returncode != 0:
        raise Failure("the measured upload failed")

    notes(binaries, "sync", "--dir", b, server=base)
    idle_b = wait_with_rusage(notes(binaries, "sync", "--dir", b, server=base, background=True))
    before = server.rss_kib()
    started = time.monotonic()
    download = notes(binaries, "attachment", note, "measured.bin", "--out", os.path.join(work, "measured.out"), "--dir", b,
                     server=base, background=True)
    peak = [before]
    watcher = threading.Thread(target=lambda: peak.append(sampled(download)))
    watcher.start()
    download_rss = wait_with_rusage(download)
    download_seconds = time.monotonic() - started
    watcher.join()
    download_server = max(peak) - before
    if download.returncode != 0 or digest(os.path.join(work, "measured.out")) != digest(original):
        raise Failure("the measured download failed")

    copy_seconds = plain_copy(original, os.path.join(work, "copied.bin"))
    content = digest(original)
    raw = {}
    for token, chunk in (("t-b", 1 << 20), ("t-c", 4 << 20)):
        raw[chunk] = raw_upload(server.port, token, original, content, chunk)
    mib = size / (1 << 20)
    print("measured: %d MB over loopback, release build: %s" % (megabytes, binaries))
    print("plain copy (socket into a synced file)  %.2f s  %.0f MB/s" % (copy_seconds, mib / copy_seconds))
    print("upload (notes sync)                     %.2f s  %.0f MB/s  %.2fx the copy" % (upload_seconds, mib / upload_seconds, copy_seconds / upload_seconds))
    print("download (notes attachment)             %.2f s  %.0f MB/s  %.2fx the copy" % (download_seconds, mib / download_seconds, copy_seconds / download_seconds))
    for chunk, seconds in sorted(raw.items()):
        print("upload by a plain HTTP client, %d MiB chunks %.2f s  %.0f MB/s  %.2fx the copy"
              % (chunk >> 20, seconds, mib / seconds, copy_seconds / seconds))
    print("device RSS growth, upload               %.1f MB (peak %.1f MB, idle sync %.1f MB)" % ((upload_rss - idle_rss) / 1024, upload_rss / 1024, idle_rss / 1024))
    print("device RSS growth, download             %.1f MB (peak %.1f MB, idle sync %.1f MB)" % ((download_rss - idle_b) / 1024, download_rss / 1024, idle_b / 1024))
    print("server RSS growth, upload / download    %.1f MB / %.1f MB" % (upload_server / 1024, download_server / 1024))


def raw_upload(port, token, path, content, chunk):
    """The upload protocol spoken by Python's http.client on one kept-alive
    connection, chunk after chunk: what the server and the protocol cost
    without the device's HTTP stack."""
    import http.client
    size = os.path.getsize(path)
    connection = http.client.HTTPConnection("127.0.0.1", port)
    started = time.monotonic()
    with open(path, "rb") as file:
        offset = 0
        while offset < size:
            body = file.read(chunk)
            headers = {"Authorization": "Bearer " + token, "Content-Type": "application/octet-stream",
                       "Sync-Content": content, "Sync-Content-Size": str(size), "Sync-Offset": str(offset),
                       "Sync-Chunk-SHA256": hashlib.sha256(body).hexdigest()}
            connection.request("POST", "/v1/attachments/upload", body=body, headers=headers)
            reply = connection.getresponse()
            answer = reply.read()
            if reply.status != 200:
                raise Failure("plain upload: %d %s" % (reply.status, answer[:200]))
            offset += len(body)
    elapsed = time.monotonic() - started
    connection.close()
    return elapsed


def plain_copy(source, target):
    """The same bytes over a loopback TCP socket into a file that is synced: the baseline."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)

    def sink():
        connection, _ = listener.accept()
        with open(target, "wb") as file:
            while True:
                data = connection.recv(1 << 20)
                if not data:
                    break
                file.write(data)
            file.flush()
            os.fsync(file.fileno())
        connection.sendall(b"ok")
        connection.close()

    receiver = threading.Thread(target=sink)
    receiver.start()
    started = time.monotonic()
    with socket.create_connection(listener.getsockname()) as connection, open(source, "rb") as file:
        connection.sendfile(file)
        connection.shutdown(socket.SHUT_WR)
        connection.recv(2)
    receiver.join()
    elapsed = time.monotonic() - started
    listener.close()
    return elapsed


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("backend", choices=["sqlite", "postgres"])
    parser.add_argument("--megabytes", type=int, default=None)
    parser.add_argument("--measure", action="store_true")
    args = parser.parse_args()
    binaries = os.environ.get("BIN", os.path.join(HERE, ".build", "debug"))
    work = tempfile.mkdtemp(prefix="syncjournal-attachments.")
    server = None
    try:
        with Storage(args.backend, work) as storage:
            server = Server(binaries, storage.arguments, work, users=["t-a:alice", "t-b:bob", "t-c:carol"])
            try:
                server.start()
                if args.measure:
                    measure(binaries, server, work, args.megabytes or 100)
                else:
                    session(binaries, server, work, args.megabytes or 50)
            finally:
                server.stop()
        print("ok")
    except Failure as failure:
        print("FAILED: %s (files in %s)" % (failure, work))
        sys.exit(1)


if __name__ == "__main__":
    main()
