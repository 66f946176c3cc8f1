"""Time benchmark queries under each value of one setting, the values
interleaved round by round in one session, on a running bench cluster (a
costmodel run's, kept with BENCH_KEEP_RUNNING=1): what a parameter of the
cost model predicts, measured.  For each query and value: the plan's
Gather workers, the median run, and the median paired ratio to the first
value's run of the same round (decisions.paired_ratio).  A run of a query
under BATCH_MS is the mean of that many ms of executions back to back.

    python3 test/bench/sweep.py --query cm_scan_topn --query cm_join_ol \\
        --vary max_parallel_workers_per_gather=0,2,4,5,6,8,12,16 \\
        --set gpuext.force_offload=on [--rounds 7] [--conninfo ...]

The worker counts of gpuext's parallel paths are the most a Gather may
have under gpuext.force_offload (gx_choose_scan_workers keeps them), so
the sweep above times each count the cost model chooses among.
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


def workers_of(conn, sql):
    """The Workers Planned of every Gather in the plan, as a list."""
    plan = conn.rows("EXPLAIN (FORMAT JSON) " + sql)[0][0]
    return [int(w) for w in re.findall(r'"Workers Planned": (\d+)',
                                       plan if isinstance(plan, str) else json.dumps(plan))]


def sweep(conn, sql, name, values, rounds):
    """{value: [runs in ms]} with the values in a rotating order each round."""
    runs = {v: [] for v in values}
    plans = {}
    for v in values:
        conn.execute("SET %s = %s" % (name, v))
        plans[v] = workers_of(conn, sql)
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
    ap.add_argument("--query", action="append", required=True, help="a benchmark query's name")
    ap.add_argument("--vary", required=True, help="SETTING=V1,V2,...")
    ap.add_argument("--set", action="append", default=[], help="SETTING=VALUE, for every run")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--conninfo", default="host=%s port=%s user=postgres dbname=bench" % (
        os.environ.get("BENCH_HOST", "/tmp/gpuext-bench"), os.environ.get("BENCH_PORT", "5497")))
    a = ap.parse_args()
    name, _, vals = a.vary.partition("=")
    values = [v.strip() for v in vals.split(",") if v.strip()]
    with pq.Conn(a.conninfo) as conn:
        for s in a.set:
            k, _, v = s.partition("=")
            conn.execute("SET %s = %s" % (k, v))
        for qname in a.query:
            t0 = time.time()
            runs, plans = sweep(conn, query_sql(qname), name, values, a.rounds)
            base = runs[values[0]]
            print("%s: %s swept (%s), %d rounds, %.0f s" % (qname, name, ", ".join(a.set) or "no other settings",
                                                            a.rounds, time.time() - t0))
            for v in values:
                ratio = decisions.paired_ratio_of_runs(runs[v], base)
                print("  %s = %-6s workers %-12s median %9.3f ms  paired to %s: %.3f" % (
                    name, v, ",".join(map(str, plans[v])) or "-", statistics.median(runs[v]), values[0], ratio))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
