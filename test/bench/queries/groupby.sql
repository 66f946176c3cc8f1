-- set: groupby
-- Group-by sweeps on grp (10 M rows x scale): the number of groups (1, 4,
-- 1 K, 1 M, 10 M: the 10 M key space has one group a row below scale 1),
-- then Zipf skew theta = 0, 0.5, 1, 1.5, 2 over 1024 groups.  Each query
-- groups, then folds the groups into one row (count of groups, total rows,
-- largest group, checksum), so the result is small whatever the group
-- count and the time is the aggregation's, not the transfer's.  The filter
-- v < 900 (90 %) gives gpuext a scan to offload until aggregation is
-- offloaded too.
-- tables: grp

-- name: gb_g1
select count(*), sum(n), max(n), sum(s) from (select g1, count(*) n, sum(v) s from grp where v < 900 group by g1) x
-- name: gb_g4
select count(*), sum(n), max(n), sum(s) from (select g4, count(*) n, sum(v) s from grp where v < 900 group by g4) x
-- name: gb_g1k
select count(*), sum(n), max(n), sum(s) from (select g1k, count(*) n, sum(v) s from grp where v < 900 group by g1k) x
-- name: gb_g1m
select count(*), sum(n), max(n), sum(s) from (select g1m, count(*) n, sum(v) s from grp where v < 900 group by g1m) x
-- name: gb_g10m
select count(*), sum(n), max(n), sum(s) from (select g10m, count(*) n, sum(v) s from grp where v < 900 group by g10m) x
-- name: gb_z00
select count(*), sum(n), max(n), sum(s) from (select z00, count(*) n, sum(v) s from grp where v < 900 group by z00) x
-- name: gb_z05
select count(*), sum(n), max(n), sum(s) from (select z05, count(*) n, sum(v) s from grp where v < 900 group by z05) x
-- name: gb_z10
select count(*), sum(n), max(n), sum(s) from (select z10, count(*) n, sum(v) s from grp where v < 900 group by z10) x
-- name: gb_z15
select count(*), sum(n), max(n), sum(s) from (select z15, count(*) n, sum(v) s from grp where v < 900 group by z15) x
-- name: gb_z20
select count(*), sum(n), max(n), sum(s) from (select z20, count(*) n, sum(v) s from grp where v < 900 group by z20) x
