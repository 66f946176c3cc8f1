-- set: costmodel
-- The cost model's decisions: a mixed set spanning both sides of the
-- GPU/CPU crossover, run after gpuext_calibrate() (the runner calibrates
-- first, see BENCH_CALIBRATE) and judged by the decision report: for each
-- query, stock PostgreSQL with parallel workers (pg_parallel, forced CPU),
-- gpuext forced on (gx_gpu, forced GPU) and the calibrated planner
-- (gx_auto, timed even when its plan has no gpuext node).  Small tables
-- (cm_1k and cm_50k have fixed sizes at every scale), point lookups and
-- index ranges should stay on the CPU; scans and aggregations over the big
-- tables that return few rows should go to the GPU; queries that return
-- many rows are bound by the host and sit near the crossover; joins are not
-- offloaded themselves, the scans under them may be.  The side expected to
-- win at scale 0.3 on the GPU machine is in each query's comment.
-- Results are deterministic: LIMIT only under a total order, float sums
-- over positive values only, no sum(float4).
-- report: decisions
-- tables: cm_1k, cm_50k, virginian, scan_t, grp, lineitem, orders, customer, part, nation, region
-- tables: supplier, ssb_date, lineorder, bench_keys, bench_probes

-- small tables: the GPU's fixed cost per query dominates

-- CPU: 1 K rows, filter and aggregate
-- name: cm_1k_count
select count(*), sum(b), sum(c) from cm_1k where a < 500
-- CPU: 1 K rows, 20 % of them returned
-- name: cm_1k_rows
select id, a, c, f from cm_1k where b < 2000
-- CPU: 1 K rows into 10 groups
-- name: cm_1k_group
select a / 100 as k, count(*), sum(b), min(e), max(e) from cm_1k group by 1
-- CPU: primary key lookup (forced GPU scans the table)
-- name: cm_1k_point
select * from cm_1k where id = 500
-- CPU: 50 K rows, filter and aggregate
-- name: cm_50k_count
select count(*), sum(d) from cm_50k where b < 5000 and a >= 100
-- CPU: 50 K rows into 1 000 groups, all returned
-- name: cm_50k_group
select a, count(*), sum(b), max(c) from cm_50k where b < 9000 group by a
-- CPU: 50 K rows, text, date and numeric predicate
-- name: cm_50k_multi
select count(*), sum(d) from cm_50k
 where f like 'str1%' and e >= date '2021-01-01' and d > 1000
-- CPU: 50 K rows, top 10 of a filter
-- name: cm_50k_topn
select id, c from cm_50k where g < 500 order by c desc, id limit 10
-- CPU: the 2 557-row date dimension
-- name: cm_date_dim
select d_year, count(*), sum(d_daynuminmonth) from ssb_date
 where d_weekdayfl and d_monthnuminyear <= 6 group by d_year
-- CPU: 25 x 5 rows joined
-- name: cm_nation_join
select r.r_name, count(*) from nation n join region r on r.r_regionkey = n.n_regionkey
 where n.n_nationkey < 20 group by r.r_name

-- point lookups and index ranges on big tables: an index beats any full
-- scan, and forced GPU has to scan the whole table

-- CPU: three primary keys of virginian
-- name: cm_pk_point
select id, uniformi, normali20, uniformf from virginian where id in (7, 777, 7777)
-- CPU: 2 001 keys of bench_keys through its index
-- name: cm_idx_range
select count(*), sum(payload), min(pad) from bench_keys where k between 1000 and 3000
-- CPU: 21 orders by primary key
-- name: cm_orders_range
select o_orderkey, o_totalprice, o_orderdate from orders where o_orderkey between 100 and 120
-- CPU: 2 000 probes joined to bench_keys by its index
-- name: cm_idx_join
select count(*), sum(k.payload) from bench_probes p join bench_keys k on k.k = p.pk where p.id < 2000
-- CPU only: no filter to offload (index scan, LIMIT)
-- name: cm_pk_first
select id, uniformi from virginian order by id limit 20
-- CPU only: the predicate cannot run on the device (int4 to text)
-- name: cm_host_only
select count(*) from virginian where id::text like '%777'

-- big scans that return few rows: bound by reading the table

-- GPU: 0.2 % of scan_t (15 M rows), aggregated
-- name: cm_scan_sel
select count(*), sum(c), max(e) from scan_t where b < 20
-- GPU: 50 % of scan_t, aggregated on the host (numeric min/max)
-- name: cm_scan_half
select count(*), sum(a), min(d), max(d) from scan_t where b between 2500 and 7499
-- GPU: arithmetic over int4, float8 and float4
-- name: cm_scan_arith
select count(*), sum(c) from scan_t where a * 7 + b % 100 < 500 and c > g * 0.5
-- GPU: text LIKE, date range and int4 together
-- name: cm_scan_multi
select count(*), sum(d) from scan_t
 where f like 'str4%' and e >= date '2021-01-01' and e < date '2021-07-01' and a < 500
-- GPU: device filter 1 %, then a host-only predicate (upper) on the rows left
-- name: cm_scan_partial
select count(*), sum(c) from scan_t where b < 100 and upper(f) = 'STR7'
-- GPU: int4 products over virginian (2.4 M rows)
-- name: cm_virg_int
select count(*) from virginian where normali5 * normali20 between -5 and 5
-- GPU: float4 comparisons over virginian, min/max of the rows found
-- name: cm_virg_float
select count(*), max(uniformf), min(normalf20) from virginian where uniformf > 60.0 and normalf5 < 0.0
-- near the crossover: orders (450 K rows), char and date predicate
-- name: cm_orders_scan
select count(*), sum(o_totalprice) from orders
 where o_orderdate >= date '1996-01-01' and o_orderstatus = 'O' and o_shippriority = 0
-- GPU: a selective filter over scan_t, then the top 10 on the host
-- name: cm_scan_topn
select id, c from scan_t where a = 7 and b < 5000 order by c desc, id limit 10

-- aggregations (GpuAgg): few groups win on the GPU; many groups and large
-- outputs move the work to the host

-- GPU: grp (3 M rows) into 4 groups
-- name: cm_agg_few
select g4, count(*), sum(v), min(v), max(v) from grp where v >= 100 group by g4
-- GPU: Zipf theta 1.5 over 1 024 groups, avg
-- name: cm_agg_zipf
select z15, count(*), avg(v) from grp where v < 950 group by z15
-- GPU: 1 M groups folded into one row (GPU 6x faster at 0.3 in the groupby set)
-- name: cm_agg_1m
select count(*), sum(n), max(n) from (select g1m, count(*) n from grp where v < 990 group by g1m) x
-- near the crossover: 1 M groups, all sent to the client (no filter)
-- name: cm_agg_1m_out
select g1m, count(*), sum(v) from grp group by g1m
-- GPU: TPC-H Q1 shape (numeric arithmetic, 4 groups)
-- name: cm_q1
select l_returnflag, l_linestatus, sum(l_quantity), sum(l_extendedprice * (1 - l_discount)),
       avg(l_discount), count(*)
  from lineitem where l_shipdate <= date '1997-12-01' group by 1, 2
-- GPU: TPC-H Q6 shape, another year
-- name: cm_q6
select sum(l_extendedprice * l_discount) from lineitem
 where l_shipdate >= date '1995-01-01' and l_shipdate < date '1996-01-01'
   and l_discount between 0.03 and 0.05 and l_quantity < 25

-- many rows to the client: bound by the host (near the crossover; a serial
-- GpuScan returns rows from one process where the stock plan uses all)

-- CPU or parity: 75 % of virginian (1.8 M rows) to the client
-- name: cm_rows_virg
select id, uniformi, normalf20 from virginian where uniformi > -50
-- near the crossover: 3 % of scan_t (450 K rows) to the client
-- name: cm_rows_scan
select id, a, c from scan_t where b < 300
-- near the crossover: 9 % of lineitem (160 K rows) to the client
-- name: cm_rows_lineitem
select l_orderkey, l_linenumber, l_extendedprice from lineitem where l_discount = 0.05
-- CPU or parity: 16 % of virginian sorted on the host
-- name: cm_sort_virg
select id, normali20 from virginian where normalf5 > 5.0 order by normali20, id

-- joins: not offloaded themselves, the scans under them may be

-- GPU: SSB Q1.1 shape, the lineorder filter offloaded under a hash join
-- name: cm_join_ssb
select sum(lo_extendedprice * lo_discount) from lineorder, ssb_date
 where lo_orderdate = d_datekey and d_year = 1994 and lo_discount between 4 and 6 and lo_quantity < 35
-- near the crossover: TPC-H Q12 shape, the lineitem filter under a join with orders
-- name: cm_join_ol
select l_shipmode, count(*), sum(o_totalprice) from orders join lineitem on o_orderkey = l_orderkey
 where l_shipmode in ('AIR', 'RAIL') and l_receiptdate >= date '1996-01-01'
   and l_receiptdate < date '1997-01-01' and l_commitdate < l_receiptdate
 group by l_shipmode
-- near the crossover: part (60 K rows) and lineitem both filtered, then joined
-- name: cm_join_part
select p_brand, count(*), sum(l_quantity) from part join lineitem on p_partkey = l_partkey
 where p_size < 5 and l_quantity > 45 group by p_brand
-- CPU: customer (45 K rows) filtered, joined to nation
-- name: cm_join_dim
select n_name, count(*), sum(c_acctbal) from customer join nation on n_nationkey = c_nationkey
 where c_mktsegment = 'BUILDING' and c_acctbal > 0 group by n_name
-- CPU: supplier (3 K rows) filtered, joined to nation
-- name: cm_join_supp
select n_name, count(*), sum(s_acctbal) from supplier join nation on n_nationkey = s_nationkey
 where s_acctbal > 0 group by n_name
