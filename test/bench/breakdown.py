#!/usr/bin/env python3
"""Where each query's time went, from the EXPLAIN ANALYZE that make bench
keeps in results.json (one run a case, the bench's timing included):

    python3 test/bench/breakdown.py BENCH_OUT/results.json [CONFIG] [SET]

For every case of CONFIG (default gx_gpu): the median wall time of the timed
runs, EXPLAIN ANALYZE's execution time, and the gpuext nodes' own figures
summed over the plan: the inner plans run on the host (Inner Rows Time),
the host's work on the inner tables (Inner Hash Time: keys, hashes, and
chains where the host builds them), their upload, the device time of the
batches, the host's per-page work, the time waiting on the service, and the
fetch of the results.  Times in ms."""
import json
import sys

FIELDS = [("inner rows", "Inner Rows Time"), ("inner hash", "Inner Hash Time"),
          ("upload", "Inner Upload Time"), ("device", "Device Time"),
          ("host pages", "Host Page Time"), ("wait", "Wait Time"), ("fetch", "Fetch Time")]


def gx_sums(node, sums):
    """Add the gpuext nodes' figures of the plan tree 'node' into sums."""
    if node.get("Node Type") == "Custom Scan":
        for _, key in FIELDS:
            sums[key] += float(node.get(key, 0) or 0)
    for child in node.get("Plans", []):
        gx_sums(child, sums)


def main():
    path = sys.argv[1]
    config = sys.argv[2] if len(sys.argv) > 2 else "gx_gpu"
    only_set = sys.argv[3] if len(sys.argv) > 3 else None
    cases = json.load(open(path))["cases"]
    head = ["query", "wall", "explain"] + [f for f, _ in FIELDS]
    print(" ".join("%-10s" % h if i == 0 else "%10s" % h for i, h in enumerate(head)))
    for c in cases:
        if c["config"] != config or (only_set and c["set"] != only_set) or not c.get("plan"):
            continue
        sums = {key: 0.0 for _, key in FIELDS}
        gx_sums(c["plan"][0]["Plan"], sums)
        row = [c["query"], c.get("median_ms"), c.get("explain_execution_ms")] + \
            [sums[key] for _, key in FIELDS]
        print(" ".join("%-10s" % v if i == 0 else "%10.1f" % (v or 0) for i, v in enumerate(row)))


if __name__ == "__main__":
    main()
