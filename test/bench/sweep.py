"""Time benchmark queries under each value of one setting, the values
interleaved round by round in one session, on a running bench cluster (a
costmodel run's, kept with BENCH_KEEP_RUNNING=1): what a parameter of the
cost model predicts, measured.  For each query and value: the plan's
Gather workers and nodes, the median run, and the median paired ratio to the first
value's run of the same round (decisions.paired_ratio).  A run of a query
under BATCH_MS is the mean of that many ms of executions back to back.

    python3 test/bench/sweep.py --query cm_scan_topn --query cm_join_ol \\
        --vary max_parallel_workers_per_gather=0,2,4,5,6,8,12,16 \\
        --set gpuext.force_offload=on [--rounds 7] [--conninfo ...]

The worker counts of gpuext's parallel paths are the most a Gather may
have under gpuext.force_offload (gx_choose_scan_workers keeps them), so
the sweep above times each count the cost model chooses among.  With
--file, ad-hoc queries ("-- name:" blocks) instead of or beside them, e.g.
stock against forced GpuAgg on small groupings:

    python3 test/bench/sweep.py --file test/bench/probe-small.sql \\
        --vary gpuext.enabled=off,on --set gpuext.force_offload=on \\
        --set max_parallel_workers_per_gather=0 --rounds 25
"""
import argparse
import json
import os
import re
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
import bench  # noqa: E402
import decisions  # noqa: E402
import pq  # noqa: E402

BATCH_MS = 20.0


def file_queries(path):
    """[(name, sql)] of a file's "-- name:" blocks, one statement each."""
    out, cur, buf = [], None, []
    for line in list(open(path)) + ["-- name: "]:
        m = re.match(r"\s*--\s*name:\s*(.*)$", line)
        if m:
            if cur:
                out.append((cur, "\n".join(buf).strip().rstrip(";").strip()))
            cur, buf = m.group(1).strip(), []
        elif cur and not line.strip().startswith("--"):
            buf.append(line.rstrip("\n"))
    return out


def query_sql(name):
    """The SQL of a benchmark query by its name, from queries/*.sql."""
    for _, (_, queries, _, _) in bench.load_sets().items():
        for q in queries:
            if q.name == name:
                return q.sql
    raise SystemExit("sweep: no query named %r" % name)


def timed_run(conn, sql):
    """One run in ms: one execution, or the mean of BATCH_MS of them."""
    secs, _ = conn.timed(sql)
    ms = secs * 1000.0
    if ms >= BATCH_MS:
        return ms
    n, total = 1, secs
    while total * 1000.0 < BATCH_MS:
        s, _ = conn.timed(sql)
        total += s
        n += 1
    return total * 1000.0 / n


def plan_of(conn, sql):
    """The plan's Gather workers (a list) and its nodes, top down (a string)."""
    plan = conn.rows("EXPLAIN (FORMAT JSON) " + sql)[0][0]
    text = plan if isinstance(plan, str) else json.dumps(plan)
    nodes = []
    for key, val in re.findall(r'"(Custom Plan Provider|Node Type|Strategy)": "([^"]+)"', text):
        if key == "Strategy" and nodes:
            nodes[-1] += "(%s)" % val
        elif val != "Custom Scan":
            nodes.append(val)
    return [int(w) for w in re.findall(r'"Workers Planned": (\d+)', text)], "+".join(nodes)


def sweep(conn, sql, name, values, rounds):
    """{value: [runs in ms]} with the values in a rotating order each round."""
    runs = {v: [] for v in values}
    plans = {}
    for v in values:
        conn.execute("SET %s = %s" % (name, v))
        plans[v] = plan_of(conn, sql)
        timed_run(conn, sql)                    # warm
    for r in range(rounds):
        k = r % len(values)
        for v in values[k:] + values[:k]:
            conn.execute("SET %s = %s" % (name, v))
            runs[v].append(timed_run(conn, sql))
    conn.execute("RESET %s" % name)
    return runs, plans


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--query", action="append", default=[], help="a benchmark query's name")
    ap.add_argument("--file", help='every "-- name:" query of this file (ad-hoc probes), after --query\'s')
    ap.add_argument("--vary", required=True, help="SETTING=V1,V2,...")
    ap.add_argument("--set", action="append", default=[], help="SETTING=VALUE, for every run")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--conninfo", default="host=%s port=%s user=postgres dbname=bench" % (
        os.environ.get("BENCH_HOST", "/tmp/gpuext-bench"), os.environ.get("BENCH_PORT", "5497")))
    a = ap.parse_args()
    name, _, vals = a.vary.partition("=")
    values = [v.strip() for v in vals.split(",") if v.strip()]
    todo = [(q, query_sql(q)) for q in a.query] + (file_queries(a.file) if a.file else [])
    if not todo:
        raise SystemExit("sweep: no queries (--query or --file)")
    pq.keep_freed_memory()
    with pq.Conn(a.conninfo) as conn:
        for s in a.set:
            k, _, v = s.partition("=")
            conn.execute("SET %s = %s" % (k, v))
        for qname, sql in todo:
            t0 = time.time()
            runs, plans = sweep(conn, sql, name, values, a.rounds)
            base = runs[values[0]]
            print("%s: %s swept (%s), %d rounds, %.0f s" % (qname, name, ", ".join(a.set) or "no other settings",
                                                            a.rounds, time.time() - t0))
            for v in values:
                ratio = decisions.paired_ratio_of_runs(runs[v], base)
                workers, nodes = plans[v]
                print("  %s = %-6s workers %-8s median %9.3f ms  paired to %s: %.3f  %s" % (
                    name, v, ",".join(map(str, workers)) or "-", statistics.median(runs[v]), values[0],
                    ratio, nodes))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
