# Worker of reference-python-writers.mjs (docs/design/contention.md, "Where the targets end"):
# N Python processes append messages to one state.db the way the Python original's write path
# does (SPEC.md section 4): sqlite3 with a 1 s busy timeout and autocommit, BEGIN IMMEDIATE per
# write, up to 15 attempts with a 20-150 ms sleep after a lock error, PASSIVE checkpoint every 50
# writes. Each process appends its own list of messages from the JSON file, one per transaction.
#
#   python3 reference-python-writers.py <state.db> <messages.json> <processes> <appends each>
#
# Prints one JSON line: processes, aggregate appends/s, p50/p99/max latency per append in ms.
import json
import multiprocessing as mp
import random
import sqlite3
import sys
import time

INSERT = (
    "INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, "
    "timestamp, token_count, finish_reason, reasoning) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
)
BUMP = (
    "UPDATE sessions SET message_count = message_count + 1, "
    "tool_call_count = tool_call_count + ? WHERE id = ?"
)


def write(conn, fn, state):
    last = None
    for attempt in range(15):
        try:
            conn.execute("BEGIN IMMEDIATE")
            try:
                fn(conn)
                conn.execute("COMMIT")
            except BaseException:
                try:
                    conn.execute("ROLLBACK")
                except sqlite3.Error:
                    pass
                raise
            state["writes"] += 1
            if state["writes"] % 50 == 0:
                try:
                    conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
                except sqlite3.Error:
                    pass
            return
        except sqlite3.OperationalError as error:
            text = str(error).lower()
            if "locked" not in text and "busy" not in text:
                raise
            last = error
            if attempt < 14:
                time.sleep(random.uniform(0.020, 0.150))
    raise last


def worker(path, messages, count, results, go):
    conn = sqlite3.connect(path, timeout=1.0, isolation_level=None, check_same_thread=False)
    conn.execute("PRAGMA foreign_keys = ON")
    state = {"writes": 0}
    go.wait()
    latencies = []
    started = time.time()
    for m in messages[:count]:
        t0 = time.perf_counter()

        def append(c, m=m):
            c.execute(INSERT, (m[0], m[1], m[2], m[3], m[4], m[5], time.time(), m[6], m[7], m[8]))
            c.execute(BUMP, (m[9], m[0]))

        write(conn, append, state)
        latencies.append((time.perf_counter() - t0) * 1000)
    results.put((latencies, started, time.time()))
    conn.close()


def main():
    path, messages_path, processes, count = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    with open(messages_path, encoding="utf-8") as f:
        messages = json.load(f)
    results = mp.Queue()
    go = mp.Event()
    procs = [mp.Process(target=worker, args=(path, messages[w], count, results, go)) for w in range(processes)]
    for p in procs:
        p.start()
    time.sleep(1)
    go.set()
    reports = [results.get() for _ in procs]
    for p in procs:
        p.join()
    latencies = sorted(x for r in reports for x in r[0])
    wall = max(r[2] for r in reports) - min(r[1] for r in reports)

    def q(p):
        return latencies[min(len(latencies) - 1, int(p * len(latencies)))]

    print(json.dumps({
        "processes": processes,
        "appendsPerSec": round(len(latencies) / wall),
        "p50Ms": round(q(0.5), 2),
        "p99Ms": round(q(0.99), 2),
        "maxMs": round(latencies[-1], 1),
    }))


if __name__ == "__main__":
    main()
