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
import copy
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
from rejudge import load_run, verdict  # noqa: E402


def without_workers(shape):
    """A plan shape with its Gathers' worker counts left out."""
    return re.sub(r"\[[^\]]*\]", "", shape or "")


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
        return {q.name: json.loads(c.rows("EXPLAIN (FORMAT JSON) " + q.sql)[0][0]) for q in queries}
    finally:
        c.execute("ROLLBACK")
        c.close()


def predict(cases_by_q, queries, planned, stat):
    """Per query: the run's gx_auto case as the replanned plan would have run
    (its plan shape and gpuext nodes, and the runs of the configuration
    found for it, so that every statistic of it, paired ratios too, is that
    configuration's), and where the times came from."""
    out = {}
    for q in queries:
        cs = cases_by_q[q.name]
        shape, gx, _ = bench.plan_summary(planned[q.name])
        how, times = None, []
        for cfg in ("gx_auto", "pg_parallel", "gx_gpu"):
            rec = cs.get(cfg)
            if rec is not None and rec.status == "ok" and rec.times and \
                    without_workers(rec.shape) == without_workers(shape):
                how, times = cfg, list(rec.times)
                break
        if not times:
            cfg = "gx_gpu" if gx["nodes"] else "pg_parallel"
            rec = cs.get(cfg)
            if rec is not None and rec.times:
                how, times = "~" + cfg, list(rec.times)
        auto = copy.copy(cs["gx_auto"])
        auto.times = times
        auto.shape, auto.exec_shape, auto.gx = shape, None, gx
        out[q.name] = (auto, how)
    return out


def figures(cases_by_q, queries, pred, stat):
    """decisions.report's judged figures with gx_auto's cases predicted."""
    replanned = {name: dict(cs, gx_auto=pred[name][0]) for name, cs in cases_by_q.items()}
    return decisions.report(queries, replanned, True, stat=stat)["figures"]


def side(case):
    return "gpu" if (case.gx or {}).get("nodes") else "cpu"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("results")
    ap.add_argument("-c", dest="changes", action="append", default=[], help="a setting, as after SET")
    ap.add_argument("--conninfo", default="host=%s port=%s user=postgres dbname=bench" % (
        os.environ.get("BENCH_HOST", "/tmp/gpuext-bench"), os.environ.get("BENCH_PORT", "5497")))
    ap.add_argument("--stat", default=decisions.PAIRED, choices=decisions.DECISION_STATS)
    a = ap.parse_args()
    run, cases_by_q, queries = load_run(a.results)
    before = predict(cases_by_q, queries, plans(a.conninfo, run, queries, []), a.stat)
    after = predict(cases_by_q, queries, plans(a.conninfo, run, queries, a.changes), a.stat)
    print("%s (%d queries), judged by the %s of the run's times" % (a.results, len(queries), a.stat))
    shown = "p25" if a.stat == decisions.PAIRED else a.stat   # the time printed for a changed plan
    for q in queries:
        ran = cases_by_q[q.name]["gx_auto"]
        (b, b_how), (c, c_how) = before[q.name], after[q.name]
        if side(b) != side(ran):
            print("  %-17s replanned %s here, the run's auto chose %s" % (q.name, side(b), side(ran)))
        if (side(b), without_workers(b.shape)) != (side(c), without_workers(c.shape)):
            print("  %-17s %s %s -> %s %s (%s ms from %s -> %s ms from %s)" % (
                q.name, side(b), without_workers(b.shape), side(c), without_workers(c.shape),
                "%.3g" % b.stat(shown) if b.times else "-", b_how,
                "%.3g" % c.stat(shown) if c.times else "-", c_how))
    print("  as planned here:  " + verdict(figures(cases_by_q, queries, before, a.stat)))
    if a.changes:
        print("  with %s: %s" % ("; ".join(a.changes), verdict(figures(cases_by_q, queries, after, a.stat))))


if __name__ == "__main__":
    main()
