-- set: scan
-- Scan-filter-aggregate over scan_t (50 M rows x scale, or BENCH_SCAN_ROWS):
-- a selectivity sweep on an int4 column, arithmetic, and a multi-type
-- predicate (text LIKE, numeric, date range) like the first smoke test.
-- The aggregates run on the host; the filter is what gpuext offloads.
-- Float sums are over positive values (no cancellation).
-- tables: scan_t

-- name: s_sel_0p1
select count(*), sum(c) from scan_t where b < 10
-- name: s_sel_10
select count(*), sum(a), sum(c) from scan_t where b < 1000
-- name: s_sel_50
select count(*), sum(d), avg(a) from scan_t where b < 5000
-- name: s_sel_100
select count(*), sum(a) from scan_t where b >= 0
-- name: s_arith
select count(*), max(c) from scan_t where a * 3 + b > 10500 and c * 2.0 < g
-- name: s_multi
select count(*), sum(d) from scan_t
 where a < 100 and f like 'str1%' and d > 500.5 and e between date '2020-03-01' and date '2021-06-01'
