"""Plan a finished costmodel run's queries again, on a cluster of the same
data (the 2-core machine's, made by a bench run of the same SCALE), under
that run's calibration and the run's auto settings, and then once more with
some settings changed; judge both sets of plans with the run's own times.
This predicts what a change to the cost model or a parameter would have
done on that GPU machine, before spending a device run on it.

    python3 test/bench/replan.py GPU-RUN/results.json [-c "gpuext.stock_byref_us = 0.04" ...]
        [--conninfo "host=/tmp/gx-cm port=5498 user=postgres dbname=bench"] [--stat p25]

A replanned query whose plan is a configuration's plan in the run (its
shape, the workers of its Gathers aside) takes that configuration's time;
otherwise a stock plan takes pg_parallel's time and a gpuext plan gx_gpu's,
marked "~" (the forced plan may differ from it).  The fact tables should
get the run's parallel_workers (its machine's cores) for the planning, in
a transaction rolled back after.  The cluster's own calibration does not
count: every gpuext.* parameter of the run is set in the session, and one
the run did not have (a later version's) at its default.
"""
import argparse
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
import bench  # noqa: E402
import decisions  # noqa: E402
import pq  # noqa: E402
from rejudge import StoredCase  # noqa: E402


def shape_of(plan_json):
    """A plan's shape with its Gathers' worker counts left out."""
    return re.sub(r"\[[^\]]*\]", "", bench.plan_summary(plan_json)[0])


def session(conninfo, run, changes):
    """A session set up as the run's gx_auto, with the changes on top, in a
    transaction (rolled back: nothing stays) in which the tables the bench
    gives parallel workers have the run's machine's count."""
    c = pq.Conn(conninfo)
    c.execute("BEGIN")
    for (rel,) in c.rows("SELECT oid::regclass::text FROM pg_class WHERE relkind = 'r' AND "
                         "array_to_string(reloptions, ',') LIKE '%parallel_workers=%'"):
        c.execute("ALTER TABLE %s SET (parallel_workers = %d)" % (rel, int(run["meta"]["nproc"])))
    # a parameter the run did not have (a later version's) is at its default
    have = {p["parameter"] for p in run["calibration"]["in_force"]}
    for name, default in c.rows("SELECT parameter, default_value FROM gpuext_calibration"):
        if name not in have and default is not None:
            c.execute("SET gpuext.%s = %s" % (name, default))
    for p in run["calibration"]["in_force"]:
        if p["value_in_force"] is not None:
            c.execute("SET gpuext.%s = %r" % (p["parameter"], p["value_in_force"]))
    c.execute("SET gpuext.device = gpu")      # plan as the GPU machine did
    auto = [cfg for cfg in run["configs"] if cfg["name"] == "gx_auto"][0]
    for g in auto["gucs"] + list(changes):
        c.execute("SET " + g)
    return c


def plans(conninfo, run, queries, changes):
    c = session(conninfo, run, changes)
    try:
        return {name: json.loads(c.rows("EXPLAIN (FORMAT JSON) " + sql)[0][0]) for name, sql in queries}
    finally:
        c.execute("ROLLBACK")
        c.close()


def predict(run, cases, queries, planned, stat):
    """Per query: (side, time, how the time was found, plan shape)."""
    out = {}
    for name, _ in queries:
        pj = planned[name]
        shape = shape_of(pj)
        gx = bench.plan_summary(pj)[1]["nodes"] > 0
        how, t = None, None
        for cfg in ("gx_auto", "pg_parallel", "gx_gpu"):
            rec = cases.get((name, cfg))
            if rec is not None and rec.status == "ok" and rec.times and \
                    re.sub(r"\[[^\]]*\]", "", rec.shape or "") == shape:
                how, t = cfg, rec.stat(stat)
                break
        if t is None:
            rec = cases.get((name, "gx_gpu" if gx else "pg_parallel"))
            if rec is not None and rec.times:
                how, t = "~" + ("gx_gpu" if gx else "pg_parallel"), rec.stat(stat)
        out[name] = ("gpu" if gx else "cpu", t, how, shape)
    return out


def judge(cases, queries, pred, stat):
    over, slow, picked, n = [], [], 0, 0
    for name, _ in queries:
        side, t, _, _ = pred[name]
        cpu, gpu = cases.get((name, "pg_parallel")), cases.get((name, "gx_gpu"))
        if t is None or cpu is None or not cpu.times:
            continue
        n += 1
        cpu_t = cpu.stat(stat)
        gpu_t = gpu.stat(stat) if gpu is not None and gpu.status == "ok" and gpu.times and \
            (gpu.gx or {}).get("nodes") else None
        best = min(cpu_t, gpu_t) if gpu_t is not None else cpu_t
        faster = "gpu" if gpu_t is not None and gpu_t < cpu_t else "cpu"
        if side == faster or t <= best * (1 + decisions.PICK_TOL):
            picked += 1
        if t > best * (1 + decisions.SLOW_TOL):
            over.append("%s %.2f" % (name, t / best))
        if side == "gpu" and t > cpu_t * (1 + decisions.STOCK_TOL):
            slow.append(name)
    return "picked %.1f%%, over 1.10: %d (%s), gpuext slower than stock: %d (%s)" % (
        100.0 * picked / max(n, 1), len(over), ", ".join(over), len(slow), ", ".join(slow))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("-c", dest="changes", action="append", default=[], help="a setting, as after SET")
    ap.add_argument("--conninfo", default="host=%s port=%s user=postgres dbname=bench" % (
        os.environ.get("BENCH_HOST", "/tmp/gpuext-bench"), os.environ.get("BENCH_PORT", "5497")))
    ap.add_argument("--stat", default="p25", choices=("best", "median", "p25"))
    a = ap.parse_args()
    with open(a.results) as f:
        run = json.load(f)
    judged = {r["query"] for r in (run.get("decisions") or {}).get("queries", [])}
    cases, queries = {}, []
    for rec in run["cases"]:
        if rec["query"] not in judged:
            continue
        cases[(rec["query"], rec["config"])] = StoredCase(rec)
        if rec["query"] not in [q for q, _ in queries]:
            queries.append((rec["query"], rec["sql"]))
    before = predict(run, cases, queries, plans(a.conninfo, run, queries, []), a.stat)
    after = predict(run, cases, queries, plans(a.conninfo, run, queries, a.changes), a.stat)
    print("%s (%d queries), judged by the %s of the run's times" % (a.results, len(queries), a.stat))
    for name, _ in queries:
        rec = cases.get((name, "gx_auto"))
        ran_gx = rec is not None and bool((rec.gx or {}).get("nodes"))
        b, c = before[name], after[name]
        if b[0] != ("gpu" if ran_gx else "cpu"):
            print("  %-17s replanned %s here, the run's auto chose %s" % (
                name, b[0], "gpu" if ran_gx else "cpu"))
        if (b[0], b[3]) != (c[0], c[3]):
            print("  %-17s %s %s -> %s %s (%s ms from %s -> %s ms from %s)" % (
                name, b[0], b[3], c[0], c[3], "-" if b[1] is None else "%.3g" % b[1], b[2],
                "-" if c[1] is None else "%.3g" % c[1], c[2]))
    print("  as planned here:  " + judge(cases, queries, before, a.stat))
    if a.changes:
        print("  with %s: %s" % ("; ".join(a.changes), judge(cases, queries, after, a.stat)))


if __name__ == "__main__":
    main()
