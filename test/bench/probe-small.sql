-- Ad-hoc probes of what a small grouping costs, stock against gpuext
-- (test/bench/sweep.py --file): cm_1k_group's stock plan ran 0.20-0.27 ms
-- on some H100 instances and 0.35-0.42 on others (sessions 14-16) while
-- an ungrouped count of the same table did not move; these split its work.
-- name: p_group_full
select a / 100 as k, count(*), sum(b), min(e), max(e) from cm_1k group by 1
-- name: p_group_count
select a / 100 as k, count(*) from cm_1k group by 1
-- name: p_group_sum
select a / 100 as k, sum(b) from cm_1k group by 1
-- name: p_group_minmax
select a / 100 as k, min(e), max(e) from cm_1k group by 1
-- name: p_group_col
select b % 10 as k, count(*), sum(b), min(e), max(e) from cm_1k group by 1
-- name: p_agg_full
select count(*), sum(b), min(e), max(e) from cm_1k
-- name: p_count
select count(*) from cm_1k
-- name: p_group_50k
select a / 100 as k, count(*), sum(b), min(e), max(e) from cm_50k group by 1
