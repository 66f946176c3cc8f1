-- TPC-H Q1's shape: numeric sums and averages of expressions, two char keys
SELECT flag, status, sum(qty) AS sum_qty, sum(price) AS sum_base_price,
       sum(price * (1 - disc)) AS sum_disc_price,
       sum(price * (1 - disc) * (1 + tax)) AS sum_charge,
       avg(qty) AS avg_qty, avg(price) AS avg_price, avg(disc) AS avg_disc,
       count(*) AS count_order
  FROM load_fact WHERE shipdate <= date '1998-09-02'
 GROUP BY flag, status ORDER BY flag, status;
