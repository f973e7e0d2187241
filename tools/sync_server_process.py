"""sync-server as a child process for the tools' Python scripts: its storage
(a fresh SQLite file, or a throwaway PostgreSQL cluster from
tools/pg-test-cluster.sh) and the server itself, started on a port and
waited for until it listens.

    with Storage("sqlite", work) as storage:
        server = Server(binaries, storage.arguments, work, users=["t-a:alice"])
        server.start()
        ...
        server.stop()
"""
import os
import re
import signal
import socket
import subprocess
import time

HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class Failure(Exception):
    pass


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Storage:
    """The database a server runs on: `sqlite` (a file in `work`) or
    `postgres` (a cluster started on entry and stopped on exit)."""

    def __init__(self, backend, work):
        self.backend, self.work = backend, work
        self.cluster = os.path.join(HERE, "tools", "pg-test-cluster.sh")
        self.env = dict(os.environ, PG_TEST_CLUSTER_STATE=os.path.join(work, "pg.state"))
        self.arguments = None

    def __enter__(self):
        if self.backend == "sqlite":
            self.arguments = ["--db", os.path.join(self.work, "sync.sqlite")]
        else:
            subprocess.run([self.cluster, "start"], env=self.env, check=True, stdout=subprocess.DEVNULL)
            url = subprocess.run([self.cluster, "url"], env=self.env, check=True, capture_output=True, text=True).stdout.strip()
            self.arguments = ["--postgres", url]
        return self

    def __exit__(self, *_):
        if self.backend == "postgres":
            subprocess.run([self.cluster, "stop"], env=self.env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        return False


class Server:
    """sync-server on a fixed port (chosen free at first), restartable on
    the same database; each start logs to its own file in `work`."""

    def __init__(self, binaries, storage, work, users):
        self.binaries, self.storage, self.work, self.users = binaries, storage, work, users
        self.port = free_port()
        self.process = None
        self.starts = 0

    @property
    def base(self):
        return "http://127.0.0.1:%d" % self.port

    def start(self):
        self.starts += 1
        log = open(os.path.join(self.work, "server-%d.out" % self.starts), "w+")
        users = [argument for user in self.users for argument in ("--user", user)]
        self.process = subprocess.Popen([os.path.join(self.binaries, "sync-server"), "--port", str(self.port), *self.storage,
                                         *users], stdout=log, stderr=subprocess.STDOUT)
        for _ in range(600):
            log.seek(0)
            if re.search(r"listening on http://127\.0\.0\.1:\d+", log.read()):
                return
            if self.process.poll() is not None:
                raise Failure("sync-server ended: see " + log.name)
            time.sleep(0.05)
        raise Failure("sync-server did not start")

    def kill(self):
        self.process.send_signal(signal.SIGKILL)
        self.process.wait()

    def stop(self):
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait()

    def rss_kib(self):
        with open("/proc/%d/status" % self.process.pid) as status:
            return int(re.search(r"VmRSS:\s+(\d+)", status.read()).group(1))
