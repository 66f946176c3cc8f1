-- set: mixed
-- Index lookups (bench_keys: 4 M keys x scale with a primary key, probed by
-- bench_probes, half of whose keys exist), spatial queries (bench_boxes with
-- a GiST index, bench_points), and TPC-H shaped joins (Q3, Q12 shapes).
-- None is offloaded today except the filters of the scans; they measure
-- what a GPU join and GiST offload would have to beat.
-- tables: bench_keys, bench_probes, bench_boxes, bench_points, lineitem, orders, customer

-- name: mx_idx_join
select count(*), sum(k.payload) from bench_probes p join bench_keys k on k.k = p.pk
-- name: mx_idx_point
select count(*), sum(k.payload) from bench_keys k
 where k.k in (select pk from bench_probes where id % 1000 = 0)
-- name: mx_idx_range
select count(*), sum(payload), min(pad) from bench_keys where k between 1000 and 41000
-- name: mx_sp_join
select count(*), count(distinct b.id) from bench_points p join bench_boxes b on b.b @> p.p where p.id % 10 = 0
-- name: mx_sp_points
select count(*) from bench_points where p <@ box '((2000,2000),(3000,3000))'
-- name: mx_sp_boxes
select count(*), sum(id::int8) from bench_boxes where b && box '((5000,5000),(5500,5500))'
-- name: mx_tpch_q3
select l_orderkey, sum(l_extendedprice * (1 - l_discount)) as revenue, o_orderdate, o_shippriority
  from customer, orders, lineitem
 where c_mktsegment = 'BUILDING' and c_custkey = o_custkey and l_orderkey = o_orderkey
   and o_orderdate < date '1995-03-15' and l_shipdate > date '1995-03-15'
 group by l_orderkey, o_orderdate, o_shippriority
-- name: mx_tpch_q12
select l_shipmode,
       sum(case when o_orderpriority = '1-URGENT' or o_orderpriority = '2-HIGH' then 1 else 0 end) as high_line_count,
       sum(case when o_orderpriority <> '1-URGENT' and o_orderpriority <> '2-HIGH' then 1 else 0 end) as low_line_count
  from orders, lineitem
 where o_orderkey = l_orderkey and l_shipmode in ('MAIL', 'SHIP')
   and l_commitdate < l_receiptdate and l_shipdate < l_commitdate
   and l_receiptdate >= date '1994-01-01' and l_receiptdate < date '1995-01-01'
 group by l_shipmode
 order by l_shipmode
