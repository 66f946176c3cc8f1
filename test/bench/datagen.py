"""Benchmark tables, generated in SQL.

Every value is a function of the row's key and the seed, through
PostgreSQL's seeded 64-bit hash (hashint8extended(key, seed + column)), not
of a session's random() state: the data is the same whatever the number of
loader sessions or the order in which they run, so loading is split into
disjoint key ranges that several sessions insert at once.  Tables are
ordinary (WAL-logged) tables: an UNLOGGED table would be emptied by the
crash recovery that follows a backend crash, which an experimental
extension can cause in the middle of a run (logging costs about 15 % more
load time with fsync off).

A table is regenerated when its row count, seed or SQL text changed; the
bench_meta table records what was generated.
"""
import hashlib
import math

GEN_VERSION = 1

# Filler text for comment columns (TPC-H style), cut at hashed offsets.
FILLER = ("furiously regular deposits sleep carefully final packages haggle "
          "blithely ironic accounts nag slyly even requests wake quickly special "
          "theodolites boost above the bold pinto beans cajole ruthlessly express "
          "instructions integrate fluffily pending dependencies among the")

HELPERS = r"""
CREATE OR REPLACE FUNCTION bench_u(id int8, stream int8) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT ((hashint8extended(id, stream) & 9007199254740991)::float8 + 0.5) / 9007199254740992.0 $$;

CREATE OR REPLACE FUNCTION bench_i(id int8, stream int8, n int4) RETURNS int4
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT ((hashint8extended(id, stream) & 9223372036854775807) % n)::int4 $$;

CREATE OR REPLACE FUNCTION bench_i8(id int8, stream int8, n int8) RETURNS int8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT (hashint8extended(id, stream) & 9223372036854775807) % n $$;

-- standard normal (Box-Muller on two hashed uniforms)
CREATE OR REPLACE FUNCTION bench_n(id int8, stream int8) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT sqrt(-2.0 * ln(bench_u(id, stream))) * cos(2.0 * pi() * bench_u(id, stream + 7777)) $$;

-- rank 1..n with P(k) ~ k^-theta: the inverse CDF of the continuous power
-- law on [1, n+1), floored (theta = 0 is uniform)
CREATE OR REPLACE FUNCTION bench_zipf(u float8, n int4, theta float8) RETURNS int4
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT least(n, greatest(1, floor(CASE WHEN theta = 1.0 THEN power(n + 1.0, u)
        ELSE power(1.0 + u * (power(n + 1.0, 1.0 - theta) - 1.0), 1.0 / (1.0 - theta)) END)))::int4 $$;

-- TPC-H order date: shared by orders and lineitem
CREATE OR REPLACE FUNCTION bench_odate(o int8, stream int8) RETURNS date
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT date '1992-01-01' + bench_i(o, stream, 2406) $$;

CREATE OR REPLACE FUNCTION bench_pprice(k int8) RETURNS numeric
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT ((90000 + ((k / 10) % 20001) + 100 * (k % 1000)) / 100.0)::numeric(15,2) $$;

CREATE OR REPLACE FUNCTION bench_ymd(d date) RETURNS int4
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT (date_part('year', d) * 10000 + date_part('month', d) * 100 + date_part('day', d))::int4 $$;

-- v rounded to sig significant digits, in float8 (for result digests)
CREATE OR REPLACE FUNCTION bench_round(v float8, sig int4) RETURNS float8
LANGUAGE sql IMMUTABLE PARALLEL SAFE AS
$$ SELECT CASE WHEN v IS NULL OR abs(v) < 1e-290 OR v = 'NaN'::float8 OR abs(v) = 'Infinity'::float8 THEN v
   ELSE round(v / power(10.0::float8, floor(log(abs(v))) - (sig - 1)))
        * power(10.0::float8, floor(log(abs(v))) - (sig - 1)) END $$;

CREATE TABLE IF NOT EXISTS bench_nations (nk int4 PRIMARY KEY, name text, rk int4, region text);
INSERT INTO bench_nations VALUES
 (0,'ALGERIA',0,'AFRICA'), (1,'ARGENTINA',1,'AMERICA'), (2,'BRAZIL',1,'AMERICA'),
 (3,'CANADA',1,'AMERICA'), (4,'EGYPT',4,'MIDDLE EAST'), (5,'ETHIOPIA',0,'AFRICA'),
 (6,'FRANCE',3,'EUROPE'), (7,'GERMANY',3,'EUROPE'), (8,'INDIA',2,'ASIA'),
 (9,'INDONESIA',2,'ASIA'), (10,'IRAN',4,'MIDDLE EAST'), (11,'IRAQ',4,'MIDDLE EAST'),
 (12,'JAPAN',2,'ASIA'), (13,'JORDAN',4,'MIDDLE EAST'), (14,'KENYA',0,'AFRICA'),
 (15,'MOROCCO',0,'AFRICA'), (16,'MOZAMBIQUE',0,'AFRICA'), (17,'PERU',1,'AMERICA'),
 (18,'CHINA',2,'ASIA'), (19,'ROMANIA',3,'EUROPE'), (20,'SAUDI ARABIA',4,'MIDDLE EAST'),
 (21,'VIETNAM',2,'ASIA'), (22,'RUSSIA',3,'EUROPE'), (23,'UNITED KINGDOM',3,'EUROPE'),
 (24,'UNITED STATES',1,'AMERICA')
ON CONFLICT DO NOTHING;

CREATE TABLE IF NOT EXISTS bench_meta (
  tbl text PRIMARY KEY, rows int8, seed int8, spec_md5 text, gen_version int4,
  generated_at timestamptz DEFAULT now(), gen_seconds float8);
"""


def _comment(key, s, off, minlen, spread):
    return ("substr('%s', 1 + bench_i(%s, %s + %d, 100), %d + bench_i(%s, %s + %d, %d))"
            % (FILLER, key, s, off, minlen, key, s, off + 1, spread))


def _phone(key, nk, s, off):
    return ("(10 + %s) || '-' || (100 + bench_i(%s, %s + %d, 900)) || '-' || "
            "(100 + bench_i(%s, %s + %d, 900)) || '-' || (1000 + bench_i(%s, %s + %d, 9000))"
            % (nk, key, s, off, key, s, off + 1, key, s, off + 2))


def _coprime(n, p=1000003):
    while math.gcd(n, p) != 1:
        p += 2
    return p


class Table:
    """One table: DDL, a chunk INSERT over a key range, post-load steps."""

    def __init__(self, name, rows, create, insert, post=(), row_bytes=100, fact=False,
                 unit_rows=1.0, first_key=1, chunk=1_000_000):
        self.name = name
        self.rows = int(rows)          # keys to generate (orders for lineitem/lineorder)
        self.create = create
        self.insert = insert            # with @LO@ @HI@ (inclusive key range)
        self.post = list(post)          # statements after loading (indexes)
        self.row_bytes = row_bytes      # heap bytes a row (for shared_buffers sizing)
        self.fact = fact                # gets parallel_workers = cores
        self.unit_rows = unit_rows      # rows a key yields (lineitem: ~4 a order)
        self.first_key = first_key
        self.chunk = max(1, int(chunk / unit_rows))

    def est_rows(self):
        return int(self.rows * self.unit_rows)

    def est_bytes(self):
        return self.est_rows() * self.row_bytes

    def set_parallelism(self, jobs):
        """Chunks small enough that `jobs` sessions share the work evenly
        (the data does not depend on the chunking)."""
        rows = min(1_000_000, max(50_000, self.est_rows() / (4.0 * max(1, jobs))))
        self.chunk = max(1, int(rows / self.unit_rows))

    def chunks(self):
        lo = self.first_key
        last = self.first_key + self.rows - 1
        while lo <= last:
            hi = min(last, lo + self.chunk - 1)
            yield self.insert.replace("@LO@", str(lo)).replace("@HI@", str(hi))
            lo = hi + 1

    def spec_md5(self):
        text = "\n".join([str(GEN_VERSION), HELPERS, self.create, self.insert] + self.post)
        return hashlib.md5(text.encode()).hexdigest()


def tables(scale, seed, scan_rows=None):
    """All benchmark tables at this scale, by name."""
    s = float(scale)

    def n(base, minimum=100):
        return max(minimum, int(round(base * s)))

    def S(no):
        return str(seed * 100000 + no * 100)

    T = {}

    def add(t):
        T[t.name] = t

    # --- seed 001: the Virginian test table -------------------------------
    st = S(1)
    add(Table("virginian", n(8_000_000, 1000),
              "CREATE TABLE virginian (id int4 NOT NULL, uniformi int4 NOT NULL, "
              "normali5 int4 NOT NULL, normali20 int4 NOT NULL, uniformf float4 NOT NULL, "
              "normalf5 float4 NOT NULL, normalf20 float4 NOT NULL)",
              "INSERT INTO virginian SELECT id, trunc(uf)::int4, trunc(n5)::int4, trunc(n20)::int4, "
              "uf, n5, n20 FROM (SELECT id, (-100 + 200 * bench_u(id, %s + 1))::float4 AS uf, "
              "(5 * bench_n(id, %s + 2))::float4 AS n5, (20 * bench_n(id, %s + 3))::float4 AS n20 "
              "FROM generate_series(@LO@::int8, @HI@::int8) id) s" % (st, st, st),
              ["ALTER TABLE virginian ADD PRIMARY KEY (id)"], row_bytes=64, fact=True))

    # --- scan-filter-aggregate table, and two small tables like it -----------
    def scan_like(name, rows, st, **kw):
        return Table(name, rows,
                     "CREATE TABLE %s (id int4 NOT NULL, a int4, b int4, c float8, "
                     "d numeric(12,2), e date, f text, g float4)" % name,
                     ("INSERT INTO %s SELECT id, bench_i(id, {s} + 1, 1000), bench_i(id, {s} + 2, 10000), "
                      "bench_u(id, {s} + 3) * 1000, (bench_i(id, {s} + 4, 10000000) / 100.0)::numeric(12,2), "
                      "date '2020-01-01' + bench_i(id, {s} + 5, 1461), 'str' || bench_i(id, {s} + 6, 50), "
                      "(bench_u(id, {s} + 7) * 1000)::float4 "
                      "FROM generate_series(@LO@::int8, @HI@::int8) id" % name).replace("{s}", st), **kw)

    add(scan_like("scan_t", int(scan_rows) if scan_rows else n(50_000_000, 1000), S(2),
                  row_bytes=80, fact=True))
    # fixed sizes at every scale (the cost model's small side: see the
    # costmodel query set), with a primary key for point lookups
    add(scan_like("cm_1k", 1000, S(19), post=["ALTER TABLE cm_1k ADD PRIMARY KEY (id)"], row_bytes=80))
    add(scan_like("cm_50k", 50_000, S(20), post=["ALTER TABLE cm_50k ADD PRIMARY KEY (id)"], row_bytes=80))

    # --- TPC-H shaped --------------------------------------------------------
    nsupp, ncust, npart, nord = n(10_000), n(150_000, 1000), n(200_000, 1000), n(1_500_000, 1500)
    add(Table("region", 5,
              "CREATE TABLE region (r_regionkey int4 PRIMARY KEY, r_name char(25), "
              "r_comment varchar(152))",
              "INSERT INTO region SELECT DISTINCT rk, region, 'region ' || region FROM bench_nations "
              "WHERE @LO@ <= @HI@", row_bytes=100, chunk=10))
    add(Table("nation", 25,
              "CREATE TABLE nation (n_nationkey int4 PRIMARY KEY, n_name char(25), "
              "n_regionkey int4, n_comment varchar(152))",
              "INSERT INTO nation SELECT nk, name, rk, 'nation ' || name FROM bench_nations "
              "WHERE @LO@ <= @HI@", row_bytes=100, chunk=100))
    st = S(3)
    add(Table("supplier", nsupp,
              "CREATE TABLE supplier (s_suppkey int4 NOT NULL, s_name char(25), "
              "s_address varchar(40), s_nationkey int4, s_phone char(15), s_acctbal numeric(15,2), "
              "s_comment varchar(101))",
              "INSERT INTO supplier SELECT k, 'Supplier#' || lpad(k::text, 9, '0'), "
              "substr(md5(k::text || 'a'), 1, 10 + bench_i(k, {s} + 1, 20)), nk, %s, "
              "((bench_i(k, {s} + 3, 1099999) - 99999) / 100.0)::numeric(15,2), %s "
              "FROM (SELECT k, bench_i(k, {s} + 2, 25) AS nk FROM generate_series(@LO@::int8, @HI@::int8) k) x"
              .replace("{s}", st) % (_phone("k", "nk", st, 4), _comment("k", st, 7, 25, 75)),
              ["ALTER TABLE supplier ADD PRIMARY KEY (s_suppkey)"], row_bytes=200))
    st = S(4)
    add(Table("customer", ncust,
              "CREATE TABLE customer (c_custkey int4 NOT NULL, c_name varchar(25), "
              "c_address varchar(40), c_nationkey int4, c_phone char(15), c_acctbal numeric(15,2), "
              "c_mktsegment char(10), c_comment varchar(117))",
              "INSERT INTO customer SELECT k, 'Customer#' || lpad(k::text, 9, '0'), "
              "substr(md5(k::text || 'b'), 1, 10 + bench_i(k, {s} + 1, 20)), nk, %s, "
              "((bench_i(k, {s} + 3, 1099999) - 99999) / 100.0)::numeric(15,2), "
              "(ARRAY['AUTOMOBILE','BUILDING','FURNITURE','HOUSEHOLD','MACHINERY'])[1 + bench_i(k, {s} + 9, 5)], %s "
              "FROM (SELECT k, bench_i(k, {s} + 2, 25) AS nk FROM generate_series(@LO@::int8, @HI@::int8) k) x"
              .replace("{s}", st) % (_phone("k", "nk", st, 4), _comment("k", st, 7, 29, 88)),
              ["ALTER TABLE customer ADD PRIMARY KEY (c_custkey)"], row_bytes=230))
    st = S(5)
    add(Table("part", npart,
              "CREATE TABLE part (p_partkey int4 NOT NULL, p_name varchar(55), "
              "p_mfgr char(25), p_brand char(10), p_type varchar(25), p_size int4, "
              "p_container char(10), p_retailprice numeric(15,2), p_comment varchar(23))",
              "INSERT INTO part SELECT k, "
              "(ARRAY['almond','antique','aquamarine','azure','beige','bisque','black','blanched','blue','blush',"
              "'brown','burlywood','chartreuse','chocolate','coral','cornflower','cream','cyan','dark','deep'])"
              "[1 + bench_i(k, {s} + 1, 20)] || ' ' || "
              "(ARRAY['dim','dodger','drab','firebrick','floral','forest','frosted','gainsboro','ghost','goldenrod',"
              "'green','grey','honeydew','hot','indian','ivory','khaki','lace','lavender','lawn'])"
              "[1 + bench_i(k, {s} + 2, 20)], "
              "'Manufacturer#' || m, 'Brand#' || m || (1 + bench_i(k, {s} + 3, 5)), "
              "(ARRAY['STANDARD','SMALL','MEDIUM','LARGE','ECONOMY','PROMO'])[1 + bench_i(k, {s} + 4, 6)] || ' ' || "
              "(ARRAY['ANODIZED','BURNISHED','PLATED','POLISHED','BRUSHED'])[1 + bench_i(k, {s} + 5, 5)] || ' ' || "
              "(ARRAY['TIN','NICKEL','BRASS','STEEL','COPPER'])[1 + bench_i(k, {s} + 6, 5)], "
              "1 + bench_i(k, {s} + 7, 50), "
              "(ARRAY['SM','LG','MED','JUMBO','WRAP'])[1 + bench_i(k, {s} + 8, 5)] || ' ' || "
              "(ARRAY['CASE','BOX','BAG','JAR','PKG','PACK','CAN','DRUM'])[1 + bench_i(k, {s} + 9, 8)], "
              "bench_pprice(k), %s "
              "FROM (SELECT k, 1 + bench_i(k, {s}, 5) AS m FROM generate_series(@LO@::int8, @HI@::int8) k) x"
              .replace("{s}", st) % _comment("k", st, 11, 5, 18),
              ["ALTER TABLE part ADD PRIMARY KEY (p_partkey)"], row_bytes=170))
    st = S(6)
    so = S(9)   # order dates, shared by orders and lineitem
    add(Table("orders", nord,
              "CREATE TABLE orders (o_orderkey int4 NOT NULL, o_custkey int4, "
              "o_orderstatus char(1), o_totalprice numeric(15,2), o_orderdate date, "
              "o_orderpriority char(15), o_clerk char(15), o_shippriority int4, o_comment varchar(79))",
              "INSERT INTO orders SELECT o, 1 + bench_i(o, {s} + 1, %d), "
              "CASE WHEN od > date '1995-06-17' THEN 'O' WHEN bench_i(o, {s} + 2, 10) < 9 THEN 'F' ELSE 'P' END, "
              "((100000 + bench_i(o, {s} + 3, 50000000)) / 100.0)::numeric(15,2), od, "
              "(ARRAY['1-URGENT','2-HIGH','3-MEDIUM','4-NOT SPECIFIED','5-LOW'])[1 + bench_i(o, {s} + 4, 5)], "
              "'Clerk#' || lpad((1 + bench_i(o, {s} + 5, %d))::text, 9, '0'), 0, %s "
              "FROM (SELECT o, bench_odate(o, %s) AS od FROM generate_series(@LO@::int8, @HI@::int8) o) x"
              .replace("{s}", st) % (ncust, max(10, nord // 1500), _comment("o", st, 7, 19, 60), so),
              ["ALTER TABLE orders ADD PRIMARY KEY (o_orderkey)"], row_bytes=150, fact=True))
    st = S(7)
    add(Table("lineitem", nord,
              "CREATE TABLE lineitem (l_orderkey int4 NOT NULL, l_partkey int4 NOT NULL, "
              "l_suppkey int4 NOT NULL, l_linenumber int4 NOT NULL, l_quantity numeric(15,2), "
              "l_extendedprice numeric(15,2), l_discount numeric(15,2), l_tax numeric(15,2), "
              "l_returnflag char(1), l_linestatus char(1), l_shipdate date, l_commitdate date, "
              "l_receiptdate date, l_shipinstruct char(25), l_shipmode char(10), l_comment varchar(44))",
              "INSERT INTO lineitem SELECT o, pk, 1 + bench_i(lk, {s} + 3, %d), ln, q, q * bench_pprice(pk), "
              "bench_i(lk, {s} + 4, 11) / 100.0, bench_i(lk, {s} + 5, 9) / 100.0, "
              "CASE WHEN rd <= date '1995-06-17' THEN CASE WHEN bench_i(lk, {s} + 6, 2) = 0 THEN 'R' ELSE 'A' END "
              "ELSE 'N' END, CASE WHEN sd > date '1995-06-17' THEN 'O' ELSE 'F' END, "
              "sd, od + 30 + bench_i(lk, {s} + 7, 61), rd, "
              "(ARRAY['DELIVER IN PERSON','COLLECT COD','NONE','TAKE BACK RETURN'])[1 + bench_i(lk, {s} + 8, 4)], "
              "(ARRAY['REG AIR','AIR','RAIL','SHIP','TRUCK','MAIL','FOB'])[1 + bench_i(lk, {s} + 9, 7)], %s "
              "FROM (SELECT o, ln, lk, od, pk, q, sd, sd + 1 + bench_i(lk, {s} + 12, 30) AS rd "
              "FROM (SELECT o, ln, o * 8 + ln AS lk, od, 1 + bench_i(o * 8 + ln, {s} + 1, %d) AS pk, "
              "(1 + bench_i(o * 8 + ln, {s} + 2, 50))::numeric AS q, "
              "od + 1 + bench_i(o * 8 + ln, {s} + 13, 121) AS sd "
              "FROM (SELECT o, bench_odate(o, %s) AS od FROM generate_series(@LO@::int8, @HI@::int8) o) oo, "
              "generate_series(1, 1 + bench_i(o, {s} + 14, 7)) ln) a) b"
              .replace("{s}", st) % (nsupp, _comment("lk", st, 10, 10, 34), npart, so),
              row_bytes=165, fact=True, unit_rows=4.0))

    # --- Star Schema Benchmark -------------------------------------------------
    scust, ssupp, spart, sord = n(30_000, 3000), n(2_000, 500), n(200_000, 2000), n(1_500_000, 1500)
    add(Table("ssb_date", 1,
              "CREATE TABLE ssb_date (d_datekey int4 PRIMARY KEY, d_date varchar(18), "
              "d_dayofweek varchar(9), d_month varchar(9), d_year int4, d_yearmonthnum int4, "
              "d_yearmonth varchar(7), d_daynuminweek int4, d_daynuminmonth int4, d_daynuminyear int4, "
              "d_monthnuminyear int4, d_weeknuminyear int4, d_sellingseason varchar(12), "
              "d_lastdayinweekfl bool, d_lastdayinmonthfl bool, d_holidayfl bool, d_weekdayfl bool)",
              "INSERT INTO ssb_date SELECT bench_ymd(d), to_char(d, 'FMMonth FMDD, YYYY'), to_char(d, 'FMDay'), "
              "to_char(d, 'FMMonth'), date_part('year', d)::int, to_char(d, 'YYYYMM')::int, to_char(d, 'MonYYYY'), "
              "date_part('isodow', d)::int, date_part('day', d)::int, date_part('doy', d)::int, "
              "date_part('month', d)::int, (date_part('doy', d)::int - 1) / 7 + 1, "
              "CASE WHEN date_part('month', d) IN (12, 1, 2) THEN 'Winter' WHEN date_part('month', d) IN (3, 4, 5) "
              "THEN 'Spring' WHEN date_part('month', d) IN (6, 7, 8) THEN 'Summer' ELSE 'Fall' END, "
              "date_part('isodow', d) = 7, date_part('day', d + 1) = 1, "
              "(date_part('month', d) = 12 AND date_part('day', d) = 25) OR (date_part('month', d) = 1 AND date_part('day', d) = 1), "
              "date_part('isodow', d) < 6 "
              "FROM generate_series(timestamp '1992-01-01', timestamp '1998-12-31', interval '1 day') g(ts), "
              "LATERAL (SELECT ts::date AS d) x WHERE @LO@ <= @HI@", row_bytes=150))

    def city(nm):
        return "rpad(substr(%s, 1, 9), 9) || bench_i(k, {s} + 2, 10)" % nm

    st = S(11)
    add(Table("ssb_customer", scust,
              "CREATE TABLE ssb_customer (c_custkey int4 NOT NULL, c_name varchar(25), "
              "c_address varchar(25), c_city char(10), c_nation char(15), c_region char(12), "
              "c_phone char(15), c_mktsegment char(10))",
              ("INSERT INTO ssb_customer SELECT k, 'Customer#' || lpad(k::text, 9, '0'), "
               "substr(md5(k::text || 'c'), 1, 10 + bench_i(k, {s} + 3, 15)), %s, n.name, n.region, %s, "
               "(ARRAY['AUTOMOBILE','BUILDING','FURNITURE','HOUSEHOLD','MACHINERY'])[1 + bench_i(k, {s} + 9, 5)] "
               "FROM generate_series(@LO@::int8, @HI@::int8) k "
               "JOIN bench_nations n ON n.nk = bench_i(k, {s} + 1, 25)" % (city("n.name"), _phone("k", "n.nk", "{s}", 4)))
              .replace("{s}", st),
              ["ALTER TABLE ssb_customer ADD PRIMARY KEY (c_custkey)"], row_bytes=130))
    st = S(12)
    add(Table("ssb_supplier", ssupp,
              "CREATE TABLE ssb_supplier (s_suppkey int4 NOT NULL, s_name char(25), "
              "s_address varchar(25), s_city char(10), s_nation char(15), s_region char(12), s_phone char(15))",
              ("INSERT INTO ssb_supplier SELECT k, 'Supplier#' || lpad(k::text, 9, '0'), "
               "substr(md5(k::text || 'd'), 1, 10 + bench_i(k, {s} + 3, 15)), %s, n.name, n.region, %s "
               "FROM generate_series(@LO@::int8, @HI@::int8) k "
               "JOIN bench_nations n ON n.nk = bench_i(k, {s} + 1, 25)" % (city("n.name"), _phone("k", "n.nk", "{s}", 4)))
              .replace("{s}", st),
              ["ALTER TABLE ssb_supplier ADD PRIMARY KEY (s_suppkey)"], row_bytes=120))
    st = S(13)
    add(Table("ssb_part", spart,
              "CREATE TABLE ssb_part (p_partkey int4 NOT NULL, p_name varchar(22), p_mfgr char(6), "
              "p_category char(7), p_brand1 char(9), p_color varchar(11), p_type varchar(25), p_size int4, "
              "p_container char(10))",
              "INSERT INTO ssb_part SELECT k, "
              "(ARRAY['almond','antique','aquamarine','azure','beige','bisque','black','blanched','blue','blush'])"
              "[1 + bench_i(k, {s} + 4, 10)] || ' ' || "
              "(ARRAY['brown','coral','cream','cyan','dark','deep','green','ivory','khaki','lace'])"
              "[1 + bench_i(k, {s} + 5, 10)], "
              "'MFGR#' || m, 'MFGR#' || m || c, 'MFGR#' || m || c || (1 + bench_i(k, {s} + 3, 40)), "
              "(ARRAY['red','green','blue','white','black','yellow','orange','purple','pink','grey'])"
              "[1 + bench_i(k, {s} + 6, 10)], "
              "(ARRAY['STANDARD','SMALL','MEDIUM','LARGE','ECONOMY','PROMO'])[1 + bench_i(k, {s} + 7, 6)] || ' ' || "
              "(ARRAY['ANODIZED','BURNISHED','PLATED','POLISHED','BRUSHED'])[1 + bench_i(k, {s} + 8, 5)], "
              "1 + bench_i(k, {s} + 9, 50), "
              "(ARRAY['SM','LG','MED','JUMBO','WRAP'])[1 + bench_i(k, {s} + 10, 5)] || ' ' || "
              "(ARRAY['CASE','BOX','BAG','JAR','PKG'])[1 + bench_i(k, {s} + 11, 5)] "
              "FROM (SELECT k, 1 + bench_i(k, {s} + 1, 5) AS m, 1 + bench_i(k, {s} + 2, 5) AS c "
              "FROM generate_series(@LO@::int8, @HI@::int8) k) x".replace("{s}", st),
              ["ALTER TABLE ssb_part ADD PRIMARY KEY (p_partkey)"], row_bytes=110))
    st = S(14)
    so = S(15)
    add(Table("lineorder", sord,
              "CREATE TABLE lineorder (lo_orderkey int4 NOT NULL, lo_linenumber int4 NOT NULL, "
              "lo_custkey int4 NOT NULL, lo_partkey int4 NOT NULL, lo_suppkey int4 NOT NULL, "
              "lo_orderdate int4 NOT NULL, lo_orderpriority char(15), lo_shippriority char(1), "
              "lo_quantity int4, lo_extendedprice int4, lo_ordtotalprice int4, lo_discount int4, "
              "lo_revenue int4, lo_supplycost int4, lo_tax int4, lo_commitdate int4, lo_shipmode char(10))",
              "INSERT INTO lineorder SELECT o, ln, ck, pk, 1 + bench_i(lk, {s} + 3, %d), bench_ymd(od), prio, '0', "
              "q, q * pp, tot, disc, (q * pp * (100 - disc)) / 100, 6 * pp / 10, "
              "bench_i(lk, {s} + 5, 9), bench_ymd(od + 30 + bench_i(lk, {s} + 7, 61)), "
              "(ARRAY['REG AIR','AIR','RAIL','SHIP','TRUCK','MAIL','FOB'])[1 + bench_i(lk, {s} + 9, 7)] "
              "FROM (SELECT o, ln, lk, od, ck, prio, tot, pk, q, disc, "
              "90000 + ((pk / 10) %% 20001) + 100 * (pk %% 1000) AS pp "
              "FROM (SELECT o, ln, o * 8 + ln AS lk, od, ck, prio, tot, "
              "1 + bench_i(o * 8 + ln, {s} + 1, %d) AS pk, 1 + bench_i(o * 8 + ln, {s} + 2, 50) AS q, "
              "bench_i(o * 8 + ln, {s} + 4, 11) AS disc "
              "FROM (SELECT o, bench_odate(o, %s) AS od, 1 + bench_i(o, {s} + 8, %d) AS ck, "
              "(ARRAY['1-URGENT','2-HIGH','3-MEDIUM','4-NOT SPECI','5-LOW'])[1 + bench_i(o, {s} + 10, 5)] AS prio, "
              "100000 + bench_i(o, {s} + 11, 50000000) AS tot "
              "FROM generate_series(@LO@::int8, @HI@::int8) o) oo, "
              "generate_series(1, 1 + bench_i(o, {s} + 14, 7)) ln) a) b"
              .replace("{s}", st) % (ssupp, spart, so, scust),
              row_bytes=130, fact=True, unit_rows=4.0))

    # --- group-by sweep (group counts, Zipf skew) -----------------------------
    st = S(16)
    ng = n(10_000_000, 1000)
    add(Table("grp", ng,
              "CREATE TABLE grp (id int4 NOT NULL, g1 int4, g4 int4, g1k int4, g1m int4, "
              "g10m int4, z00 int4, z05 int4, z10 int4, z15 int4, z20 int4, v int4)",
              "INSERT INTO grp SELECT id, 0, (p %% 4)::int4, (p %% 1000)::int4, (p %% 1000000)::int4, "
              "(p %% 10000000)::int4, "
              "bench_zipf(bench_u(id, {s} + 1), 1024, 0.0), bench_zipf(bench_u(id, {s} + 2), 1024, 0.5), "
              "bench_zipf(bench_u(id, {s} + 3), 1024, 1.0), bench_zipf(bench_u(id, {s} + 4), 1024, 1.5), "
              "bench_zipf(bench_u(id, {s} + 5), 1024, 2.0), bench_i(id, {s} + 6, 1000) "
              "FROM (SELECT id, (id * %d) %% %d AS p FROM generate_series(@LO@::int8, @HI@::int8) id) x"
              .replace("{s}", st) % (_coprime(ng), ng),
              row_bytes=80, fact=True, first_key=0))

    # --- index lookups: keys and probes ---------------------------------------
    st = S(17)
    nk = n(4_000_000, 1000)
    add(Table("bench_keys", nk,
              "CREATE TABLE bench_keys (k int8 NOT NULL, payload int4, pad text)",
              "INSERT INTO bench_keys SELECT 1 + (id * %d) %% %d, bench_i(id, {s} + 1, 1000000), "
              "substr(md5(id::text), 1, 8 + bench_i(id, {s} + 2, 16)) "
              "FROM generate_series(@LO@::int8, @HI@::int8) id".replace("{s}", st) % (_coprime(nk), nk),
              ["ALTER TABLE bench_keys ADD PRIMARY KEY (k)"], row_bytes=90, fact=True, first_key=0))
    add(Table("bench_probes", n(1_000_000, 1000),
              "CREATE TABLE bench_probes (id int4 NOT NULL, pk int8 NOT NULL)",
              "INSERT INTO bench_probes SELECT id, 1 + bench_i8(id, {s} + 3, %d) "
              "FROM generate_series(@LO@::int8, @HI@::int8) id".replace("{s}", st) % (2 * nk),
              row_bytes=44, fact=True))

    # --- spatial: boxes and points (GiST) --------------------------------------
    st = S(18)
    add(Table("bench_boxes", n(200_000, 1000),
              "CREATE TABLE bench_boxes (id int4 NOT NULL, b box NOT NULL)",
              "INSERT INTO bench_boxes SELECT id, box(point(x - w, y - h), point(x + w, y + h)) "
              "FROM (SELECT id, 10000 * bench_u(id, {s} + 1) AS x, 10000 * bench_u(id, {s} + 2) AS y, "
              "1 + 24 * bench_u(id, {s} + 3) AS w, 1 + 24 * bench_u(id, {s} + 4) AS h "
              "FROM generate_series(@LO@::int8, @HI@::int8) id) s".replace("{s}", st),
              ["CREATE INDEX bench_boxes_b ON bench_boxes USING gist (b)"], row_bytes=70))
    add(Table("bench_points", n(1_000_000, 1000),
              "CREATE TABLE bench_points (id int4 NOT NULL, p point NOT NULL)",
              "INSERT INTO bench_points SELECT id, point(10000 * bench_u(id, {s} + 5), "
              "10000 * bench_u(id, {s} + 6)) FROM generate_series(@LO@::int8, @HI@::int8) id"
              .replace("{s}", st), row_bytes=48, fact=True))
    return T
