#!/usr/bin/env python3
"""What a pull costs a user who is a member of many shared spaces, over HTTP.

    tools/measure-space-pull.py sqlite|postgres [--spaces N] [--rows R] [--repeat K]

Starts sync-server ($BIN, default .build/debug) on a fresh SQLite file or a
throwaway PostgreSQL cluster (tools/pg-test-cluster.sh). An owner creates N
shared spaces (default 200) of R pins each (default 5) and makes the member
an editor of all of them; a second member is put in the first space only,
the baseline. Then, timed on loopback with the wall clock (K requests each,
default 40; the median and the 90th percentile are printed):

- backfill: the member's first pull of every space, page after page (once);
- current, 1 space / N spaces: a pull with every cursor current (nothing
  changed), one request, of the baseline member and of the member;
- one changed of N: the same after the owner changed one pin of one space.

Each line is "name value"; the pull of the member is always one request.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import uuid

from sync_server_process import HERE, Failure, Server, Storage


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("backend", choices=["sqlite", "postgres"])
    parser.add_argument("--spaces", type=int, default=200)
    parser.add_argument("--rows", type=int, default=5)
    parser.add_argument("--repeat", type=int, default=40)
    args = parser.parse_args()
    binaries = os.environ.get("BIN", os.path.join(HERE, ".build", "debug"))
    work = tempfile.mkdtemp(prefix="syncjournal-space-pull.")
    try:
        with Storage(args.backend, work) as storage:
            server = Server(binaries, storage.arguments, work, users=["t-owner:owner", "t-member:member", "t-one:one"])
            try:
                server.start()
                measure(server.base, args)
            finally:
                server.stop()
    except Failure as failure:
        sys.exit(str(failure))


def post(base, path, body, token):
    request = urllib.request.Request(base + path, data=json.dumps(body).encode(), method="POST",
                                     headers={"Authorization": "Bearer " + token, "Content-Type": "application/json",
                                              "Sync-Row-Members": "modelVersion, space"})
    try:
        with urllib.request.urlopen(request) as reply:
            return json.loads(reply.read())
    except urllib.error.HTTPError as error:
        sys.exit("%s: %d %s" % (path, error.code, error.read().decode(errors="replace")))


def timed(function, repeat):
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        function()
        samples.append((time.perf_counter() - started) * 1000)
    samples.sort()
    return statistics.median(samples), samples[int(len(samples) * 0.9) - 1]


def pull_everything(base, token, spaces):
    """Pulls every page from `spaces` (what the device holds); returns the
    spaces as the device holds them afterwards, and the pages taken."""
    held = {space: {"version": state["version"], "cursors": dict(state["cursors"])} for space, state in spaces.items()}
    pages = 0
    while True:
        page = post(base, "/v1/sync/pull", {"cursors": {"pin": None}, "spaces": held, "limit": 1000, "resync": False}, token)
        pages += 1
        for described in page["spaces"]:
            held.setdefault(described["space"], {"version": None, "cursors": {}})["version"] = described["version"]
        for space, cursors in page["nextSpaceCursors"].items():
            held.setdefault(space, {"version": None, "cursors": {}})["cursors"].update(cursors)
        if not page["hasMore"]:
            return held, pages


def measure(base, args):
    spaces = [str(uuid.uuid4()) for _ in range(args.spaces)]
    rows = {}
    for number, space in enumerate(spaces):
        post(base, "/v1/spaces/create", {"space": space, "name": "list %d" % number}, "t-owner")
        post(base, "/v1/spaces/members/set", {"space": space, "user": "member", "role": "editor"}, "t-owner")
        mutations = [{"operationId": str(uuid.uuid4()), "kind": "pin", "op": "create", "recordId": "p%d" % row,
                      "baseUpdatedAt": None, "fields": {"title": "pin %d of list %d" % (row, number)}, "space": space}
                     for row in range(args.rows)]
        results = post(base, "/v1/sync/push", {"mutations": mutations}, "t-owner")["results"]
        rows[space] = results[0]["row"]
    post(base, "/v1/spaces/members/set", {"space": spaces[0], "user": "one", "role": "editor"}, "t-owner")

    started = time.perf_counter()
    held, pages = pull_everything(base, "t-member", {})
    backfill = (time.perf_counter() - started) * 1000
    print("spaces %d" % args.spaces)
    print("rows_per_space %d" % args.rows)
    print("backfill_ms %.1f" % backfill)
    print("backfill_pages %d" % pages)
    one, _ = pull_everything(base, "t-one", {})

    def current(token, holding):
        page = post(base, "/v1/sync/pull", {"cursors": {"pin": None}, "spaces": holding, "limit": 1000, "resync": False}, token)
        assert not page["rows"] and not page["hasMore"], "a current pull returned rows"

    median, p90 = timed(lambda: current("t-one", one), args.repeat)
    print("current_1_space_median_ms %.2f" % median)
    print("current_1_space_p90_ms %.2f" % p90)
    median_many, p90 = timed(lambda: current("t-member", held), args.repeat)
    print("current_%d_spaces_median_ms %.2f" % (args.spaces, median_many))
    print("current_%d_spaces_p90_ms %.2f" % (args.spaces, p90))
    print("current_ratio_%d_to_1 %.2f" % (args.spaces, median_many / median))

    changed = rows[spaces[len(spaces) // 2]]
    post(base, "/v1/sync/push", {"mutations": [{"operationId": str(uuid.uuid4()), "kind": "pin", "op": "update",
                                                "recordId": changed["id"], "baseUpdatedAt": changed["updatedAt"],
                                                "fields": {"title": "changed"}, "space": changed["space"]}]}, "t-owner")

    def one_changed():
        page = post(base, "/v1/sync/pull", {"cursors": {"pin": None}, "spaces": held, "limit": 1000, "resync": False}, "t-member")
        assert len(page["rows"]) == 1, "expected the one changed row"

    median, p90 = timed(one_changed, args.repeat)
    print("one_changed_of_%d_median_ms %.2f" % (args.spaces, median))
    print("one_changed_of_%d_p90_ms %.2f" % (args.spaces, p90))


if __name__ == "__main__":
    main()
