-- set: tpch
-- TPC-H shaped Q1 and Q6 on a generated lineitem (about 6 M rows x scale,
-- numeric(15,2) money columns as in the specification).  The date bound of Q1
-- is written as a date constant (DELTA = 90 days) so the filter is a plain
-- date comparison.
-- tables: lineitem

-- name: tpch_q1
select l_returnflag, l_linestatus,
       sum(l_quantity) as sum_qty,
       sum(l_extendedprice) as sum_base_price,
       sum(l_extendedprice * (1 - l_discount)) as sum_disc_price,
       sum(l_extendedprice * (1 - l_discount) * (1 + l_tax)) as sum_charge,
       avg(l_quantity) as avg_qty,
       avg(l_extendedprice) as avg_price,
       avg(l_discount) as avg_disc,
       count(*) as count_order
  from lineitem
 where l_shipdate <= date '1998-09-02'
 group by l_returnflag, l_linestatus
 order by l_returnflag, l_linestatus
-- name: tpch_q6
select sum(l_extendedprice * l_discount) as revenue
  from lineitem
 where l_shipdate >= date '1994-01-01'
   and l_shipdate < date '1995-01-01'
   and l_discount between 0.05 and 0.07
   and l_quantity < 24
