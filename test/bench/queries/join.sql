-- set: join
-- Two-table (and star) join sweep for GpuJoin: scan_t (50 M rows x scale,
-- a in 0..999, b in 0..9999) probes inner tables of 1 K rows (cm_1k),
-- 50 K rows (cm_50k) and 10 M rows x scale (grp), as inner, semi, anti
-- and left joins, two inner tables in one pass, and with the joined rows
-- streamed back to PostgreSQL's aggregate (an inner column is summed).
-- The others fold to one row; those whose aggregates read only scan_t are
-- fused with GpuAgg (scan, probe and aggregation in one node).
-- tables: scan_t, cm_1k, cm_50k, grp

-- name: join_1k
select count(*), sum(s.c) from scan_t s join cm_1k d on s.a = d.id where d.b < 5000
-- name: join_50k
select count(*), sum(s.c) from scan_t s join cm_50k d on s.b = d.id where d.b < 5000
-- name: join_10m
select count(*), sum(s.c) from scan_t s join grp g on s.id = g.id where g.v < 900
-- name: join_semi_1k
select count(*), sum(s.c) from scan_t s where exists (select 1 from cm_1k d where d.id = s.a and d.b < 1000)
-- name: join_anti_1k
select count(*), sum(s.c) from scan_t s where not exists (select 1 from cm_1k d where d.id = s.a and d.b < 1000)
-- name: join_left_50k
select count(*), sum(s.c) from scan_t s left join (select id from cm_50k where b < 5000) d on s.b = d.id
-- name: join_star2
select count(*), sum(s.c) from scan_t s join cm_1k d1 on s.a = d1.id join cm_50k d2 on s.b = d2.id
 where d1.b < 5000 and d2.b < 5000
-- name: join_stream_1k
select count(*), sum(length(d.f)) from scan_t s join cm_1k d on s.a = d.id where s.c < 500
