#!/usr/bin/env python3
"""gpuext's load and fault tests (started by test/load/run.sh, which starts
the cluster, loads the data and runs pgbench).  Python standard library
only, libpq through test/pq.py.

    load.py check           every query of test/load/queries/ with gpuext
                            and with stock PostgreSQL: the results must be
                            equal; writes the stock results (--out) and
                            compares them with earlier ones (--against)
    load.py pgbench-report  throughput of the pgbench runs, gpuext beside
                            stock, and their failures
    load.py status          save gpuext_status() (idle values before a run)
    load.py faults          clients run the query mix while a controller
                            injects faults in phases; every result and every
                            error is checked

The queries are pgbench scripts, one statement each; "\\set NAME
random(LO, HI)" lines give parameters, which check enumerates (every value)
and the fault clients draw.  Result comparison: rows in order, values as
text, except float4 and float8 columns, equal within a relative 1e-5 and
1e-9 (a parallel or device sum adds in another order).

The fault test ("faults"): --clients threads, each with its own session,
run random queries of the mix; each result is compared with the stock
result computed before (--ref), each error is counted by SQLSTATE.  The
controller runs these phases (--phase-secs each):

    warmup        nothing injected: no error allowed
    cancel        pg_cancel_backend of random busy clients every
                  --cancel-every-ms, and half of the queries under a random
                  statement_timeout of --short-timeout-ms (LO-HI): 57014
    kernel, alloc gpuext_debug_inject_fault('kernel' | 'alloc', N) re-armed
                  every 0.5 s, then 'none': the GPU fails requests, which
                  gpuext.cpu_fallback reruns on the CPU (or 58000, 53200);
                  skipped, and said so, when the function does not exist
    service_term  SIGTERM to the GPU service: the postmaster starts a new
                  one; waiting backends fall back or get 58000, no
                  connection may be lost
    service_kill  SIGKILL to the GPU service: PostgreSQL restarts the whole
                  cluster (its rule for any process attached to shared
                  memory), so sessions are lost: 57P02 (terminating
                  connection because of crash of another server process)
                  or 08006 (libpq's "server closed the connection"; it has
                  no SQLSTATE); clients reconnect
    recovered     nothing injected: no error allowed, queries must complete

with a quiet phase (no error allowed) between the fault phases.  An error
is allowed when its SQLSTATE is allowed by a phase its query overlapped
(phases count until --tail-ms after their end).  A violation (exit status
1): a wrong result; an error or a lost connection not allowed there; a
failed reconnection outside service_kill; a query that lasted longer than
its statement_timeout plus one gpuext.service_poll_interval plus
--slack-ms; a cancelled query that took longer than the poll interval
plus --slack-ms after its pg_cancel_backend; the service not back within
--service-back-secs, or back in another state; gpuext_status()'s
device_memory_in_use or dma_arena_in_use not back to their idle values
within --idle-wait-secs after the clients end; no query completed in the
last phase; a crash in the server log (--server-log) other than the
service's own SIGKILL.
"""
import argparse
import glob
import json
import math
import os
import random
import re
import signal
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # test/: pq
from pq import Conn, PGError  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FLOAT4, FLOAT8 = 700, 701
FLOAT_RTOL = {FLOAT4: 1e-5, FLOAT8: 1e-9}
MAX_INSTANCES = 64           # values a query's parameters may take in all
# libpq's messages (no SQLSTATE) for a connection the server dropped
CONNECTION_LOST = re.compile(r"server closed the connection|connection to server was lost|"
                             r"no connection to the server|could not send data to server|"
                             r"could not receive data from server|SSL SYSCALL error")

# SQLSTATEs allowed in each phase (see the module's docstring)
ALLOWED = {
    "warmup": set(),
    "quiet": set(),
    "cancel": {"57014"},
    "kernel": {"58000", "53200"},
    "alloc": {"58000", "53200"},
    "service_term": {"58000"},
    "service_kill": {"57P02", "08006"},
    "recovered": set(),
}
STATUS_COLS = ["service_state", "service_pid", "device_memory_in_use", "dma_arena_in_use",
               "requests_served", "requests_failed", "requests_cancelled", "gpu_batches",
               "cpu_batches", "fallbacks", "service_restarts"]


def log(msg):
    print(msg, flush=True)


# ---------------------------------------------------------------------------
# queries
# ---------------------------------------------------------------------------

class Query:
    """One query of the mix: a pgbench script of one statement."""

    def __init__(self, path):
        self.path = path
        self.name = os.path.splitext(os.path.basename(path))[0]
        self.params = {}
        lines = []
        with open(path) as f:
            for line in f:
                s = line.strip()
                if not s or s.startswith("--"):
                    continue
                m = re.match(r"\\set\s+(\w+)\s+random\(\s*(-?\d+)\s*,\s*(-?\d+)\s*\)$", s)
                if m:
                    self.params[m.group(1)] = (int(m.group(2)), int(m.group(3)))
                    continue
                if s.startswith("\\"):
                    raise SystemExit("load: %s: only \\set NAME random(LO, HI) is supported: %s"
                                     % (path, s))
                lines.append(line.rstrip())
        self.sql = "\n".join(lines).strip().rstrip(";")

    def instances(self):
        """(key, sql) for every combination of the parameters' values."""
        combos = [{}]
        for p, (lo, hi) in sorted(self.params.items()):
            combos = [dict(c, **{p: v}) for c in combos for v in range(lo, hi + 1)]
        if len(combos) > MAX_INSTANCES:
            raise SystemExit("load: %s: %d parameter values, at most %d"
                             % (self.path, len(combos), MAX_INSTANCES))
        out = []
        for c in combos:
            sql = self.sql
            for p, v in c.items():
                sql = re.sub(r"(?<![:\w]):%s\b" % p, str(v), sql)
            key = self.name + ("[%s]" % ",".join("%s=%d" % kv for kv in sorted(c.items())) if c else "")
            out.append((key, sql))
        return out


def load_queries(qdir):
    """The queries of the mix, in file name order."""
    qs = [Query(p) for p in sorted(glob.glob(os.path.join(qdir, "*.sql")))]
    if not qs:
        raise SystemExit("load: no queries in %s" % qdir)
    return qs


def conninfo(args, options, appname="gpuext-load"):
    """A libpq connection string; options: session settings ('-c name=value ...')."""
    parts = ["host='%s'" % args.host, "port=%s" % args.port, "dbname='%s'" % args.dbname,
             "application_name='%s'" % appname]
    if args.user:
        parts.append("user='%s'" % args.user)
    if options:
        parts.append("options='%s'" % options.replace("\\", "\\\\").replace("'", "\\'"))
    return " ".join(parts)


def same_result(types, got, want):
    """None when the rows are equal, else a short description of the first difference."""
    if len(got) != len(want):
        return "%d rows, expected %d" % (len(got), len(want))
    for i, (g, w) in enumerate(zip(got, want)):
        if len(g) != len(w):
            return "row %d has %d columns, expected %d" % (i + 1, len(g), len(w))
        for j, (a, b) in enumerate(zip(g, w)):
            if a == b:
                continue
            t = types[j] if j < len(types) else None
            if t in FLOAT_RTOL and a is not None and b is not None:
                try:
                    x, y = float(a), float(b)
                except ValueError:
                    x, y = math.nan, 0.0
                if x == y or (math.isfinite(x) and math.isfinite(y) and
                              abs(x - y) <= FLOAT_RTOL[t] * max(abs(x), abs(y))):
                    continue
            return "row %d column %d: %r, expected %r" % (i + 1, j + 1, a, b)
    return None


def read_status(conn):
    """gpuext_status()'s state, memory and counters, as a dict of text values."""
    row = conn.rows("SELECT %s FROM gpuext_status()" % ", ".join(STATUS_COLS))[0]
    return dict(zip(STATUS_COLS, row))


MEMORY_COLS = ("device_memory_in_use", "dma_arena_in_use")
COUNTER_COLS = ("requests_served", "requests_failed", "requests_cancelled", "gpu_batches",
                "cpu_batches", "fallbacks", "service_restarts")


def wait_idle(fetch, before, secs):
    """gpuext_status() once device memory and arena use are back to before's
    values (the service frees what dead owners held by itself), or after secs."""
    after = fetch()
    deadline = time.time() + secs
    while any(int(after[k]) > int(before[k]) for k in MEMORY_COLS) and time.time() < deadline:
        time.sleep(0.2)
        after = fetch()
    return after


def status_lines(before, after, secs, reset_note=""):
    """Report lines of memory and counters; violations where memory is not back."""
    lines = ["  memory (gpuext_status, idle): device_memory_in_use %s -> %s bytes, "
             "dma_arena_in_use %s -> %s bytes"
             % (before["device_memory_in_use"], after["device_memory_in_use"],
                before["dma_arena_in_use"], after["dma_arena_in_use"]),
             "  counters before -> after%s: " % reset_note
             + ", ".join("%s %s -> %s" % (k, before[k], after[k]) for k in COUNTER_COLS)]
    bad = ["%s is %s, %s before (after %d s idle)" % (k, after[k], before[k], secs)
           for k in MEMORY_COLS if int(after[k]) > int(before[k])]
    return lines, bad


def cmd_status(args):
    """Save gpuext_status() to a file (the load test's idle values)."""
    with Conn(conninfo(args, "")) as c:
        st = read_status(c)
    with open(args.out, "w") as f:
        json.dump(st, f)
    return 0


# ---------------------------------------------------------------------------
# check
# ---------------------------------------------------------------------------

def offloaded_nodes(conn, sql):
    """The gpuext nodes of a query's plan (e.g. ['GpuAgg', 'GpuJoin'])."""
    plan = "\n".join(r[0] for r in conn.rows("EXPLAIN (COSTS OFF) " + sql))
    return sorted(set(re.findall(r"Custom Scan \((\w+)\)", plan)))


def cmd_check(args):
    """Each query instance with gpuext and with stock settings: equal results."""
    queries = load_queries(args.queries)
    g = Conn(conninfo(args, args.gpuext_options))
    s = Conn(conninfo(args, args.stock_options))
    against = None
    if args.against:
        with open(args.against) as f:
            against = json.load(f)
    ref = {}
    problems = []
    n = 0
    for q in queries:
        nodes = offloaded_nodes(g, q.instances()[0][1])
        for key, sql in q.instances():
            rs, srows = s.query(sql)
            rg, grows = g.query(sql)
            n += 1
            ref[key] = {"types": rs.types, "rows": srows}
            d = same_result(rs.types, grows, srows)
            if d:
                problems.append("%s: gpuext differs from stock: %s" % (key, d))
            if against is not None:
                if key not in against:
                    problems.append("%s: not in %s" % (key, args.against))
                else:
                    d = same_result(rs.types, srows, [tuple(r) for r in against[key]["rows"]])
                    if d:
                        problems.append("%s: stock's result changed since %s: %s"
                                        % (key, args.against, d))
        log("  %-14s %-28s %s" % (q.name, "offloaded: " + (", ".join(nodes) or "no"),
                                  "%d instance(s)" % len(q.instances())))
        if args.require_offload and not nodes:
            problems.append("%s: not offloaded with the gpuext settings (%s)"
                            % (q.name, args.gpuext_options or "defaults"))
    g.close()
    s.close()
    if args.out:
        with open(args.out, "w") as f:
            json.dump(ref, f)
    for p in problems:
        log("  MISMATCH " + p)
    log("results %s: %d query instances, gpuext %s stock%s"
        % (args.label, n, "equal to" if not problems else "NOT equal to",
           (", stock unchanged since " + os.path.basename(args.against)) if against is not None and not problems else ""))
    return 1 if problems else 0


# ---------------------------------------------------------------------------
# pgbench-report
# ---------------------------------------------------------------------------

def parse_pgbench(path):
    """tps, processed and failed transactions, aborts and per-script figures of a pgbench log."""
    out = {"tps": None, "processed": 0, "failed": None, "aborted": [], "scripts": [], "rc": None}
    cur = None
    with open(path, errors="replace") as f:
        for line in f:
            line = line.rstrip("\n")
            m = re.match(r"tps = ([0-9.]+)", line)
            if m:
                out["tps"] = float(m.group(1))
            m = re.match(r"number of transactions actually processed: (\d+)", line)
            if m:
                out["processed"] = int(m.group(1))
            m = re.match(r"number of failed transactions: (\d+)", line)
            if m:
                out["failed"] = int(m.group(1))
            m = re.match(r"pgbench exit status: (\d+)", line)
            if m:
                out["rc"] = int(m.group(1))
            if "aborted" in line or re.search(r"\b(ERROR|FATAL)\b", line):
                out["aborted"].append(line)
            m = re.match(r"SQL script \d+: (.*)", line)
            if m:
                cur = {"name": os.path.splitext(os.path.basename(m.group(1)))[0]}
                out["scripts"].append(cur)
            m = re.match(r" - \d+ transactions \(.*tps = ([0-9.]+)\)", line)
            if m and cur is not None:
                cur["tps"] = float(m.group(1))
            m = re.match(r" - latency average = ([0-9.]+) ms", line)
            if m and cur is not None:
                cur["lat"] = float(m.group(1))
    return out


def cmd_pgbench_report(args):
    """The load test's throughput table; non-zero when a run failed or aborted."""
    g = parse_pgbench(args.gpuext)
    s = parse_pgbench(args.stock)
    bad = []
    for label, r in (("gpuext", g), ("stock", s)):
        if r["tps"] is None:
            bad.append("%s: pgbench printed no tps" % label)
        if r["failed"]:
            bad.append("%s: %d failed transactions" % (label, r["failed"]))
        if r["rc"]:
            bad.append("%s: pgbench exit status %d" % (label, r["rc"]))
        for a in r["aborted"][:5]:
            bad.append("%s: %s" % (label, a))
    ratio = (g["tps"] / s["tps"]) if g["tps"] and s["tps"] else None
    log("pgbench: %d clients, %d threads, %d s a configuration; gpuext: %s; stock: %s"
        % (args.clients, args.threads, args.duration, args.gpuext_options or "default settings",
           args.stock_options))
    log("  %-14s %12s %12s %8s %14s %14s" % ("query", "gpuext tps", "stock tps", "ratio",
                                             "gpuext ms", "stock ms"))
    sb = {x["name"]: x for x in s["scripts"]}
    for x in g["scripts"]:
        y = sb.get(x["name"], {})
        r = (x.get("tps", 0) / y["tps"]) if y.get("tps") else None
        log("  %-14s %12.2f %12.2f %8s %14.1f %14.1f"
            % (x["name"], x.get("tps", 0), y.get("tps", 0), "%.2fx" % r if r else "-",
               x.get("lat", 0), y.get("lat", 0)))
    log("  %-14s %12.2f %12.2f %8s   (%d and %d transactions, %s and %s failed)"
        % ("all", g["tps"] or 0, s["tps"] or 0, "%.2fx" % ratio if ratio else "-",
           g["processed"], s["processed"], g["failed"], s["failed"]))
    if args.status_before:
        with open(args.status_before) as f:
            before = json.load(f)
        with Conn(conninfo(args, "")) as c:
            after = wait_idle(lambda: read_status(c), before, args.idle_wait_secs)
        lines, mem_bad = status_lines(before, after, args.idle_wait_secs,
                                      " the gpuext run")
        for line in lines:
            log(line)
        bad += mem_bad
    for b in bad:
        log("  VIOLATION " + b)
    return 1 if bad else 0


# ---------------------------------------------------------------------------
# faults
# ---------------------------------------------------------------------------

class Phase:
    """A phase of the fault test: its time span and the SQLSTATEs it allows."""

    def __init__(self, name, start):
        self.name = name
        self.start = start
        self.end = None
        self.allowed = ALLOWED[name]
        self.note = ""


class Record:
    """One statement a client ran."""
    __slots__ = ("key", "t0", "t1", "state", "timeout_ms", "cancel_at", "msg")

    def __init__(self, key, t0, t1, state, timeout_ms, cancel_at, msg):
        self.key = key
        self.t0 = t0
        self.t1 = t1
        self.state = state          # None: completed
        self.timeout_ms = timeout_ms
        self.cancel_at = cancel_at  # when a pg_cancel_backend was sent during it
        self.msg = msg


class Client(threading.Thread):
    """A session running random queries of the mix until stopped."""

    def __init__(self, idx, run):
        super().__init__(name="client-%d" % idx, daemon=True)
        self.idx = idx
        self.run_ = run
        self.rng = random.Random(run.args.seed * 1000 + idx)
        self.conn = None
        self.pid = None
        self.busy_since = None
        self.cancel_at = None
        self.records = []
        self.connect_failures = []     # (time, message)
        self.wrong = []                # (key, difference)
        self.crashed = None

    def connect(self):
        """A new session (after a lost one too); False, recorded, when refused."""
        r = self.run_
        try:
            self.conn = Conn(r.client_conninfo)
            self.pid = self.conn.backend_pid()
            self.conn.execute("SET statement_timeout = %d" % r.args.statement_timeout_ms)
            self.timeout_ms = r.args.statement_timeout_ms
            return True
        except PGError as e:
            if self.conn is not None:
                self.conn.close()
            self.conn = None
            self.connect_failures.append((time.time(), str(e).splitlines()[0][:160]))
            return False

    def statement(self, key, sql, timeout_ms):
        """Run one statement, record what it gave; the rows when it completed."""
        self.cancel_at = None
        t0 = time.time()
        self.busy_since = t0
        try:
            res, rows = self.conn.query(sql)
            state, msg = None, None
        except PGError as e:
            res, rows = None, None
            state, msg = e.sqlstate, str(e).splitlines()[0][:200] if str(e) else ""
            # libpq's own "server closed the connection unexpectedly" has no
            # SQLSTATE, and the connection's status is not always
            # CONNECTION_BAD yet when PQexec returns it
            if not self.conn.alive() or (state is None and CONNECTION_LOST.search(str(e))):
                state = state or "08006"
                self.conn.close()
                self.conn = None
            state = state or "none"
        t1 = time.time()
        self.busy_since = None
        self.records.append(Record(key, t0, t1, state, timeout_ms, self.cancel_at, msg))
        return res, rows

    def run(self):
        """Random queries until stopped, each result checked against stock's."""
        r = self.run_
        try:
            while not r.stop.is_set():
                if self.conn is None and not self.connect():
                    time.sleep(0.2)
                    continue
                key, sql = self.rng.choice(r.instances)
                want = r.args.statement_timeout_ms
                if r.phase.name == "cancel" and self.rng.random() < 0.5:
                    want = self.rng.randint(*r.short_timeout)
                if want != self.timeout_ms:
                    self.statement("SET", "SET statement_timeout = %d" % want, want)
                    if self.conn is None or self.records[-1].state is not None:
                        continue
                    self.timeout_ms = want
                res, rows = self.statement(key, sql, want)
                if res is not None:
                    types, want_rows = r.ref[key]
                    d = same_result(types, rows, want_rows)
                    if d:
                        self.wrong.append((key, d))
        except Exception as e:  # noqa: BLE001 (reported as a violation)
            self.crashed = "%s: %s" % (type(e).__name__, e)
        finally:
            if self.conn is not None:
                self.conn.close()
                self.conn = None


class FaultRun:
    """The controller: phases, injections, the service's restarts, the checks."""

    def __init__(self, args):
        self.args = args
        self.stop = threading.Event()
        self.phases = []
        self.phase = None
        self.violations = []
        self.notes = []
        self.instances = [i for q in load_queries(args.queries) for i in q.instances()]
        with open(args.ref) as f:
            self.ref = {k: (v["types"], [tuple(r) for r in v["rows"]]) for k, v in json.load(f).items()}
        missing = [k for k, _ in self.instances if k not in self.ref]
        if missing:
            raise SystemExit("load: no reference result for %s in %s" % (", ".join(missing), args.ref))
        lo, hi = (int(x) for x in args.short_timeout_ms.split("-"))
        self.short_timeout = (lo, hi)
        self.client_conninfo = conninfo(args, args.gpuext_options)
        self.ctl_conninfo = conninfo(args, "", appname="gpuext-load-controller")
        self.ctl = None
        self.services = []

    # -- the controller's session, which survives the cluster's restart ------
    def q(self, sql, retry=True):
        """Rows of sql on the controller's session, reconnecting; with retry,
        trying again for up to --service-back-secs (the cluster restarts)."""
        deadline = time.time() + (self.args.service_back_secs if retry else 0)
        while True:
            try:
                if self.ctl is None or not self.ctl.alive():
                    if self.ctl is not None:
                        self.ctl.close()
                    self.ctl = Conn(self.ctl_conninfo)
                return self.ctl.rows(sql)
            except PGError:
                if self.ctl is not None and not self.ctl.alive():
                    self.ctl.close()
                    self.ctl = None
                if time.time() >= deadline:
                    raise
                time.sleep(0.2)

    def status(self):
        """gpuext_status() through the controller's session."""
        row = self.q("SELECT %s FROM gpuext_status()" % ", ".join(STATUS_COLS))[0]
        return dict(zip(STATUS_COLS, row))

    def begin(self, name):
        """End the current phase and start the next."""
        now = time.time()
        if self.phase is not None:
            self.phase.end = now
        self.phase = Phase(name, now)
        self.phases.append(self.phase)
        log("  %6.1f s  phase %s" % (now - self.t_start, name))
        return self.phase

    def sleep_until(self, t):
        """Sleep until time t (time.time()'s clock)."""
        while time.time() < t:
            time.sleep(min(0.05, max(0.0, t - time.time())))

    def service_back(self, old_pid, old_state):
        """Wait for a new service in its old state; seconds it took, or None."""
        t0 = time.time()
        while time.time() - t0 < self.args.service_back_secs:
            try:
                st = self.status()
                if st["service_pid"] not in (None, str(old_pid)) and st["service_state"] in ("ready", "no gpu"):
                    if st["service_state"] != old_state:
                        self.violations.append("the service came back as '%s', it was '%s'"
                                               % (st["service_state"], old_state))
                    return time.time() - t0, st["service_pid"]
            except PGError:
                pass
            time.sleep(0.1)
        return None, None

    # -- phases ---------------------------------------------------------------
    def phase_quiet(self, name, secs):
        """A phase with nothing injected."""
        self.begin(name)
        self.sleep_until(time.time() + secs)

    def phase_cancel(self, secs):
        """pg_cancel_backend of a random busy client every --cancel-every-ms
        (the clients draw short statement_timeouts themselves meanwhile)."""
        p = self.begin("cancel")
        end = time.time() + secs
        sent = 0
        every = self.args.cancel_every_ms / 1000.0
        while time.time() < end:
            busy = [c for c in self.clients if c.busy_since is not None and c.pid]
            if busy:
                c = self.rng.choice(busy)
                c.cancel_at = time.time()
                try:
                    self.q("SELECT pg_cancel_backend(%d)" % c.pid, retry=False)
                    sent += 1
                except PGError as e:
                    self.violations.append("pg_cancel_backend failed: %s" % e)
            time.sleep(every)
        p.note = "%d pg_cancel_backend, half the queries under a %d-%d ms statement_timeout" % (
            sent, self.short_timeout[0], self.short_timeout[1])

    def phase_inject(self, kind, secs):
        """Device faults of one kind, re-armed every 0.5 s, cleared at the end."""
        p = self.begin(kind)
        end = time.time() + secs
        calls = 0
        while time.time() < end:
            self.q("SELECT gpuext_debug_inject_fault('%s', %d)" % (kind, self.args.fault_count))
            calls += 1
            time.sleep(0.5)
        self.q("SELECT gpuext_debug_inject_fault('none')")
        p.note = "gpuext_debug_inject_fault('%s', %d) %d times" % (kind, self.args.fault_count, calls)

    def phase_service(self, name, sig, secs):
        """Signal the GPU service and wait for its successor."""
        p = self.begin(name)
        st = self.status()
        pid = int(st["service_pid"]) if st["service_pid"] else None
        if pid is None:
            self.violations.append("%s: no service pid in gpuext_status()" % name)
            self.sleep_until(p.start + secs)
            return
        try:
            os.kill(pid, sig)
        except OSError as e:
            self.violations.append("%s: cannot signal the service (pid %d): %s" % (name, pid, e))
            self.sleep_until(p.start + secs)
            return
        back, newpid = self.service_back(pid, st["service_state"])
        what = "SIGKILL" if sig == signal.SIGKILL else "SIGTERM"
        if back is None:
            self.violations.append("%s: the service (pid %d) was not back within %d s"
                                   % (name, pid, self.args.service_back_secs))
            p.note = "%s to pid %d: NOT back" % (what, pid)
        else:
            p.note = "%s to pid %d: back after %.1f s as pid %s" % (what, pid, back, newpid)
            self.services.append((name, pid, back, newpid))
        if sig == signal.SIGKILL:
            self.killed_pid = pid
            self.killed_at = p.start
        # the clients' reconnections belong to the phase
        self.sleep_until(max(p.start + secs, time.time() + 1.0))

    # -- checks ---------------------------------------------------------------
    def allowed(self, t0, t1):
        """SQLSTATEs allowed to a statement that ran from t0 to t1."""
        tail = self.args.tail_ms / 1000.0
        out = set()
        for p in self.phases:
            if t0 <= p.end + tail and t1 >= p.start:
                out |= p.allowed
        return out

    def check_records(self):
        """Wrong results, errors not allowed, latencies over their bounds."""
        poll = self.poll_ms / 1000.0
        slack = self.args.slack_ms / 1000.0
        self.over = []        # latency over the statement_timeout, of timed-out queries
        self.cancel_delay = []
        for c in self.clients:
            if c.crashed:
                self.violations.append("client %d stopped: %s" % (c.idx, c.crashed))
            for key, d in c.wrong:
                self.violations.append("wrong result of %s: %s" % (key, d))
            for t, msg in c.connect_failures:
                if "08006" not in self.allowed(t, t):
                    self.violations.append("client %d could not connect at %.1f s: %s"
                                           % (c.idx, t - self.t_start, msg))
            for r in c.records:
                lat = r.t1 - r.t0
                if lat > r.timeout_ms / 1000.0 + poll + slack:
                    self.violations.append("%s took %.3f s under statement_timeout = %d ms (%s)"
                                           % (r.key, lat, r.timeout_ms, r.state or "completed"))
                if r.state is None:
                    continue
                if r.state not in self.allowed(r.t0, r.t1):
                    self.violations.append("%s at %.1f s: SQLSTATE %s not allowed there: %s"
                                           % (r.key, r.t0 - self.t_start, r.state, r.msg))
                if r.state == "57014":
                    if r.cancel_at is not None and r.t0 <= r.cancel_at <= r.t1:
                        d = r.t1 - r.cancel_at
                        self.cancel_delay.append(d)
                        if d > poll + slack:
                            self.violations.append("%s ended %.3f s after its pg_cancel_backend"
                                                   % (r.key, d))
                    elif lat >= r.timeout_ms / 1000.0:
                        self.over.append(lat - r.timeout_ms / 1000.0)

    def check_log(self):
        """Crashes in the server log since the run began, but the service's own SIGKILL."""
        if not self.args.server_log:
            return
        try:
            with open(self.args.server_log, errors="replace") as f:
                f.seek(self.log_pos)
                text = f.read()
        except OSError as e:
            self.notes.append("server log not read: %s" % e)
            return
        for line in text.splitlines():
            if not re.search(r"PANIC|TRAP:|terminated by signal|terminated by exception", line):
                continue
            if self.killed_pid and "(PID %d) was terminated by signal 9" % self.killed_pid in line:
                continue
            self.violations.append("server log: %s" % line.strip()[:300])

    def run(self):
        """The phases, then the checks and the report; the exit status."""
        a = self.args
        self.rng = random.Random(a.seed)
        self.killed_pid = None
        self.killed_at = None
        self.log_pos = os.path.getsize(a.server_log) if a.server_log and os.path.exists(a.server_log) else 0
        poll = self.q("SELECT setting FROM pg_settings WHERE name = 'gpuext.service_poll_interval'")
        self.poll_ms = int(poll[0][0]) if poll else 100
        has_inject = self.q("SELECT to_regprocedure('gpuext_debug_inject_fault(text,integer)') IS NOT NULL")[0][0] == "t"
        before = self.status()
        self.t_start = time.time()
        log("faults: %d clients, phases of %.0f s; service '%s' (pid %s)"
            % (a.clients, a.phase_secs, before["service_state"], before["service_pid"]))
        self.clients = [Client(i, self) for i in range(a.clients)]
        self.phase = None
        self.begin("warmup")
        for c in self.clients:
            c.start()
        P = a.phase_secs
        self.sleep_until(self.phase.start + P)
        self.phase_cancel(P)
        self.phase_quiet("quiet", P / 2)
        if has_inject:
            self.phase_inject("kernel", P)
            self.phase_inject("alloc", P)
            self.phase_quiet("quiet", P / 2)
        else:
            self.notes.append("kernel and alloc phases skipped: the function "
                              "gpuext_debug_inject_fault(text, integer) does not exist in this build")
        self.phase_service("service_term", signal.SIGTERM, P)
        self.phase_quiet("quiet", P / 2)
        self.phase_service("service_kill", signal.SIGKILL, P)
        self.phase_quiet("recovered", P)
        self.phase.end = time.time()
        self.stop.set()
        hang = a.statement_timeout_ms / 1000.0 + self.poll_ms / 1000.0 + a.slack_ms / 1000.0 + 5
        for c in self.clients:
            c.join(max(0.0, self.phase.end + hang - time.time()))
            if c.is_alive():
                self.violations.append("client %d still running %.0f s after the end (a hang)"
                                       % (c.idx, time.time() - self.phase.end))
        t_end = time.time()
        after = wait_idle(self.status, before, a.idle_wait_secs)
        self.memory_report, mem_bad = status_lines(
            before, after, a.idle_wait_secs, " (the SIGKILL's restart resets them)")
        self.violations += mem_bad
        self.check_records()
        self.check_log()
        last = self.phases[-1]
        done_last = sum(1 for c in self.clients for r in c.records
                        if r.state is None and r.key != "SET" and r.t0 >= last.start)
        if done_last == 0:
            self.violations.append("no query completed in the phase '%s'" % last.name)
        self.report(before, after, t_end - self.t_start)
        return 1 if self.violations else 0

    def report(self, before, after, secs):
        """The fault test's report (stdout)."""
        a = self.args
        recs = [r for c in self.clients for r in c.records if r.key != "SET"]
        ok = sum(1 for r in recs if r.state is None)
        errs = {}
        for c in self.clients:
            for r in c.records:
                if r.state is not None:
                    errs[r.state] = errs.get(r.state, 0) + 1
        reconnects = sum(len(c.connect_failures) for c in self.clients)
        out = []
        out.append("fault test: %d clients, %.0f s, %d queries completed (%.1f/s), %d wrong results; "
                   "gpuext: %s" % (a.clients, secs, ok, ok / secs if secs else 0,
                                   sum(len(c.wrong) for c in self.clients),
                                   a.gpuext_options or "default settings"))
        out.append("  %-13s %6s %7s %7s  %-30s %s" % ("phase", "secs", "done", "done/s",
                                                      "errors by SQLSTATE", "what"))
        for p in self.phases:
            # by the time each statement ended
            pe = {}
            for c in self.clients:
                for r in c.records:
                    if r.state is not None and p.start <= r.t1 < p.end:
                        pe[r.state] = pe.get(r.state, 0) + 1
            n = sum(1 for r in recs if r.state is None and p.start <= r.t1 < p.end)
            d = p.end - p.start
            out.append("  %-13s %6.1f %7d %7.1f  %-30s %s"
                       % (p.name, d, n, n / d if d else 0,
                          ", ".join("%s: %d" % kv for kv in sorted(pe.items())) or "-", p.note))
        out.append("  errors by SQLSTATE: %s (SET statement_timeout included); failed connection "
                   "attempts: %d" % (", ".join("%s: %d" % kv for kv in sorted(errs.items())) or "none",
                                     reconnects))
        if self.killed_at is not None:
            # sessions the SIGKILL cost, and how soon their clients ran queries again
            lost = [c for c in self.clients
                    if any(r.state == "08006" and r.t1 >= self.killed_at for r in c.records)]
            again = [min((r.t1 for r in c.records if r.state is None and r.t0 > self.killed_at),
                         default=None) for c in lost]
            out.append("  SIGKILL of the service: a crash restart of the cluster; %d of %d clients "
                       "lost their session (08006) and %s"
                       % (len(lost), len(self.clients),
                          "completed queries again within %.1f s" % (max(again) - self.killed_at)
                          if lost and None not in again else
                          "did not all complete a query again" if lost else "none needed to reconnect"))
        lat_over = max(self.over) if self.over else None
        out.append("  latency: statement_timeout exceeded by at most %s over %d timed-out queries; "
                   "pg_cancel_backend answered within %s over %d; bound: poll interval %d ms + "
                   "slack %d ms"
                   % ("%.3f s" % lat_over if lat_over is not None else "-", len(self.over),
                      "%.3f s" % max(self.cancel_delay) if self.cancel_delay else "-",
                      len(self.cancel_delay), self.poll_ms, a.slack_ms))
        out += self.memory_report
        for n in self.notes:
            out.append("  note: " + n)
        for v in self.violations[:50]:
            out.append("  VIOLATION " + v)
        if len(self.violations) > 50:
            out.append("  ... %d violations in all" % len(self.violations))
        out.append("fault test: %s" % ("PASSED" if not self.violations else
                                       "FAILED (%d violations)" % len(self.violations)))
        for line in out:
            log(line)


def cmd_faults(args):
    """The fault test; its exit status."""
    return FaultRun(args).run()


def main():
    """Options and the subcommand; the exit status."""
    env = os.environ.get
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--host", default=env("PGHOST", "/tmp"))
    ap.add_argument("--port", default=env("PGPORT", "5432"))
    ap.add_argument("--user", default=env("PGUSER"))
    ap.add_argument("--dbname", default="load")
    ap.add_argument("--queries", default=os.path.join(HERE, "queries"))
    ap.add_argument("--gpuext-options", default="", help="session options with gpuext ('-c name=value ...')")
    ap.add_argument("--stock-options", default="-c gpuext.enabled=off",
                    help="session options of stock PostgreSQL")
    sub = ap.add_subparsers(dest="cmd", required=True)

    c = sub.add_parser("check")
    c.add_argument("--out")
    c.add_argument("--against")
    c.add_argument("--label", default="")
    c.add_argument("--require-offload", action="store_true")

    r = sub.add_parser("pgbench-report")
    r.add_argument("--gpuext", required=True)
    r.add_argument("--stock", required=True)
    r.add_argument("--clients", type=int, required=True)
    r.add_argument("--threads", type=int, required=True)
    r.add_argument("--duration", type=int, required=True)
    r.add_argument("--status-before", help="gpuext_status() before the gpuext run (load.py status)")
    r.add_argument("--idle-wait-secs", type=int, default=30)

    st = sub.add_parser("status")
    st.add_argument("--out", required=True)

    f = sub.add_parser("faults")
    f.add_argument("--ref", required=True)
    f.add_argument("--clients", type=int, default=64)
    f.add_argument("--phase-secs", type=float, default=20)
    f.add_argument("--seed", type=int, default=1)
    f.add_argument("--statement-timeout-ms", type=int, default=60000)
    f.add_argument("--short-timeout-ms", default="20-300")
    f.add_argument("--cancel-every-ms", type=int, default=50)
    f.add_argument("--fault-count", type=int, default=20)
    f.add_argument("--slack-ms", type=int, default=1000)
    f.add_argument("--tail-ms", type=int, default=500)
    f.add_argument("--service-back-secs", type=int, default=120)
    f.add_argument("--idle-wait-secs", type=int, default=30)
    f.add_argument("--server-log")

    args = ap.parse_args()
    try:
        if args.cmd == "check":
            return cmd_check(args)
        if args.cmd == "pgbench-report":
            return cmd_pgbench_report(args)
        if args.cmd == "status":
            return cmd_status(args)
        return cmd_faults(args)
    except PGError as e:
        log("load: %s" % e)
        return 2


if __name__ == "__main__":
    sys.exit(main())
