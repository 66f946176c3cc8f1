"""Judge a finished run's decision report again, from its results.json, by
each statistic of the timed runs (the best run, the median, the lower
quartile) and by the configurations' paired ratios, and count the pairs
of configurations that ran the very same plan yet whose times differ by
more than 10 %: how much of a statistic's verdict is the machine's noise.

    python3 test/bench/rejudge.py OUT/results.json [...]
"""
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import decisions  # noqa: E402

JUDGED_CONFIGS = ("pg_parallel", "gx_gpu")


class StoredCase:
    """A case of results.json with what decisions.report reads of a case."""

    def __init__(self, rec):
        self.status, self.note, self.rows = rec["status"], rec["note"] or "", rec["rows"]
        self.times = rec["times_ms"] or []
        self.shape, self.exec_shape = rec.get("plan_shape"), rec.get("exec_plan_shape")
        self.gx, self.plan = rec.get("gpuext_nodes"), rec.get("plan")

    def stat(self, name):
        return decisions.stat_of(self.times, name)

    def value(self):
        return self.stat("median")


class StoredQuery:
    def __init__(self, qset, name, sql):
        self.set, self.name, self.sql, self.decisions = qset, name, sql, True


def load_run(path):
    """A finished run's results.json: (the run, {query: {config: StoredCase}},
    [StoredQuery]) for the queries of its decision report."""
    with open(path) as f:
        run = json.load(f)
    judged_sets = {r["set"] for r in (run.get("decisions") or {}).get("queries", [])}
    cases_by_q, queries = {}, []
    for rec in run["cases"]:
        if rec["set"] not in judged_sets:
            continue
        if rec["query"] not in cases_by_q:
            cases_by_q[rec["query"]] = {}
            queries.append(StoredQuery(rec["set"], rec["query"], rec["sql"]))
        cases_by_q[rec["query"]][rec["config"]] = StoredCase(rec)
    return run, cases_by_q, queries


def verdict(fig):
    """The judged figures of decisions.report in a line."""
    return "picked %.1f%%, over 1.10: %d (%s), gpuext slower than stock: %d (%s)" % (
        100 * fig["picked_faster_share"], len(fig["over_slow_tol"]), ", ".join(fig["over_slow_tol"]),
        len(fig["gpuext_slower_than_stock"]), ", ".join(fig["gpuext_slower_than_stock"]))


def same_plan_spread(cases_by_q, stat):
    """Pairs (auto, a forced configuration) that ran the same plan shape,
    and those of them more than 10 % apart by the statistic (or paired
    ratio), as (query, config, ratio)."""
    pairs, apart = 0, []
    for q, cs in cases_by_q.items():
        auto = cs.get("gx_auto")
        if auto is None or auto.status != "ok" or not auto.times:
            continue
        for name in JUDGED_CONFIGS:
            other = cs.get(name)
            if other is None or other.status != "ok" or not other.times or other.shape != auto.shape:
                continue
            pairs += 1
            if stat == decisions.PAIRED:
                ratio = decisions.paired_ratio(auto, other)
            else:
                ratio = auto.stat(stat) / other.stat(stat)
            if max(ratio, 1 / ratio) > 1.10:
                apart.append((q, name, ratio))
    return pairs, apart


def main(paths):
    for path in paths:
        run, cases_by_q, queries = load_run(path)
        print(path)
        interleaved = run.get("meta", {}).get("interleave")
        for stat in decisions.DECISION_STATS:
            if stat == decisions.PAIRED and not interleaved:
                continue
            fig = decisions.report(queries, cases_by_q, True, stat=stat)["figures"]
            pairs, apart = same_plan_spread(cases_by_q, stat)
            print("  %-6s %s; same-plan pairs over 10 %% apart: %d of %d (%s)" % (
                stat, verdict(fig), len(apart), pairs, ", ".join("%s/%s %.2f" % a for a in apart)))


if __name__ == "__main__":
    main(sys.argv[1:])
