#!/usr/bin/env python3
"""Differential query generator for gpuext (Python standard library only).

Generates random SELECTs over the tables of test/fuzz/setup.sql (filters,
projections, aggregation with GROUP BY/HAVING/FILTER, joins of every type,
semi and anti joins, derived tables, correlated subqueries), runs each one
twice in one session (libpq through ctypes), with gpuext forced on
(gpuext.enabled = on, gpuext.force_offload = on) and with gpuext off (stock
PostgreSQL), and compares:

  * both return rows: the results must be the same multiset of rows.
    Columns are compared as text (floats print exactly), except
      - sum/avg over floats: within 1e-9 (float4 results 1e-5) of the same
        aggregate over |x|, as the order of a float sum is free;
      - numeric and float group keys, min/max over them and DISTINCT
        columns: by value (1.5 and 1.50, or 0 and -0, are equal, and which
        of them represents a group is not defined);
  * both raise an error: the SQLSTATEs must be the same;
  * otherwise (only one raises, or they raise different errors): PostgreSQL
    does not define the order in which the operands of AND/OR (in WHERE,
    join conditions, FILTER, HAVING) are evaluated, nor the order of rows,
    and gpuext evaluates its device quals first, in batches, so one side may
    meet an erroring row or subexpression that the other never evaluates.
    Every "leaf" of the query that can raise (the query split at AND, OR,
    NOT and BETWEEN wherever they are; a CASE without AND/OR inside stays
    whole, as its order is defined) is run alone over all rows of its
    tables (groups for HAVING), on both sides:
      - a leaf whose two runs disagree is a real mismatch, reported with the
        leaf as its reproducer (alone, its evaluation is defined);
      - if every SQLSTATE that the two sides raised is raised by some leaf,
        the difference is "order-dependent": a warning, not a failure;
      - else it is a real mismatch.
    A float sum/avg overflow (22003) raised by one side only is
    order-dependent when the sum of |x| (or of x*x) overflows, unless the
    other side's result could come from no order: for a group of finite
    values, an infinite result, a sum beyond the float range of values of
    one sign, or an avg whose sum of squared deviations (which PostgreSQL's
    avg keeps) is beyond it: PostgreSQL raises for those in every order.
  * a dropped connection ("server closed the connection") is a crash.

Each failure is minimized (settings, WHERE, HAVING, DISTINCT, FILTER,
select items, group keys and subexpressions dropped or replaced one at a
time while it fails the same way) and printed as a reproducer that needs
only test/fuzz/setup.sql.  Exit status: 1 after a real mismatch or a crash,
2 on a usage, setup or connection error.

Half of the queries are in "safe mode": most operations that can raise are
guarded by a CASE (fewer queries end in an error, and the device must
honour CASE's laziness).  Queries also get random settings (parallel plans,
small gpuext.max_batch_pages, join/aggregation methods off, and with a GPU
gpuext.device = cpu), applied to both runs.

Query I of seed S is the same on every run and machine (the settings differ
only by gpuext.device = cpu where there is a GPU): --only I runs it again,
--print prints queries without running them.  --skip-known-bugs (the
'make test' suite) reports the bugs of KNOWN_BUGS without failing.

  python3 test/fuzz/fuzz.py --setup --seed 1 --queries 500 --host /tmp/x --port 5432
"""
import argparse
import copy
import math
import os
import random
import re
import subprocess
import sys
import time
from collections import Counter, defaultdict
from fractions import Fraction

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # test/: pq
import pq  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))

# ---------------------------------------------------------------------------
# libpq through ctypes
# ---------------------------------------------------------------------------

from pq import PGRES_COMMAND_OK, PGRES_TUPLES_OK, CONNECTION_OK  # noqa: E402
PG_DIAG_SQLSTATE = ord('C')


def libpq():
    """libpq through the ctypes loader shared with the benchmark (test/pq.py)."""
    try:
        return pq.lib()
    except pq.PGError as e:
        raise SystemExit("fuzz: %s" % e)


class Outcome:
    """What one execution gave: rows, an error (SQLSTATE), or a crash."""
    __slots__ = ("status", "rows", "types", "state", "msg", "secs")

    def __init__(self, status, rows=None, types=None, state=None, msg=None, secs=0.0):
        self.status = status        # ok | error | crash
        self.rows = rows
        self.types = types
        self.state = state
        self.msg = msg
        self.secs = secs

    def brief(self):
        if self.status == "ok":
            return "%d rows" % len(self.rows)
        if self.status == "crash":
            return "CRASH (%s)" % (self.msg or "connection lost")
        if self.status == "known":
            return "not run (known bug %s)" % self.msg
        return "ERROR %s: %s" % (self.state, self.msg)


class Conn:
    def __init__(self, conninfo, init_sql):
        self.conninfo = conninfo
        self.init_sql = init_sql
        self.conn = None
        self.connect()

    def connect(self, wait=0):
        L = libpq()
        deadline = time.time() + wait
        while True:
            c = L.PQconnectdb(self.conninfo.encode())
            if c and L.PQstatus(c) == CONNECTION_OK:
                self.conn = c
                break
            msg = L.PQerrorMessage(c).decode(errors="replace").strip() if c else "out of memory"
            if c:
                L.PQfinish(c)
            if time.time() >= deadline:
                raise ConnectionError(msg)
            time.sleep(0.5)
        for s in self.init_sql:
            o = self.run(s)
            if o.status != "ok":
                raise ConnectionError("%s: %s" % (s, o.brief()))

    def reconnect(self, wait=120):
        if self.conn:
            libpq().PQfinish(self.conn)
            self.conn = None
        self.connect(wait=wait)

    def run(self, sql, fetch=True):
        L = libpq()
        t0 = time.time()
        res = L.PQexec(self.conn, sql.encode())
        secs = time.time() - t0
        if not res or L.PQstatus(self.conn) != CONNECTION_OK:
            msg = L.PQerrorMessage(self.conn).decode(errors="replace").strip()
            if res:
                L.PQclear(res)
            if L.PQstatus(self.conn) != CONNECTION_OK:
                return Outcome("crash", msg=msg.replace("\n", " "), secs=secs)
            return Outcome("error", state="?????", msg=msg, secs=secs)
        try:
            st = L.PQresultStatus(res)
            if st == PGRES_TUPLES_OK:
                if not fetch:
                    return Outcome("ok", rows=[], types=[], secs=secs)
                nt, nf = L.PQntuples(res), L.PQnfields(res)
                types = [int(L.PQftype(res, j)) for j in range(nf)]
                gv, isn = L.PQgetvalue, L.PQgetisnull
                rows = []
                for i in range(nt):
                    rows.append(tuple(None if isn(res, i, j) else gv(res, i, j).decode("utf-8", "replace")
                                      for j in range(nf)))
                return Outcome("ok", rows=rows, types=types, secs=secs)
            if st == PGRES_COMMAND_OK:
                return Outcome("ok", rows=[], types=[], secs=secs)
            state = L.PQresultErrorField(res, PG_DIAG_SQLSTATE)
            msg = (L.PQresultErrorMessage(res) or b"").decode(errors="replace").strip()
            msg = re.sub(r"^ERROR:\s+", "", msg.split("\n")[0])
            return Outcome("error", state=state.decode() if state else "?????", msg=msg, secs=secs)
        finally:
            L.PQclear(res)

    def close(self):
        if self.conn:
            libpq().PQfinish(self.conn)
            self.conn = None


# ---------------------------------------------------------------------------
# expressions
# ---------------------------------------------------------------------------

INTS = ("int2", "int4", "int8")
FLOATS = ("float4", "float8")
DATES = ("date", "timestamp", "timestamptz")
TEXTS = ("text", "bpchar")
ALLTYPES = ("bool",) + INTS + FLOATS + ("numeric",) + DATES + TEXTS
RANK = {"int2": 0, "int4": 1, "int8": 2, "float4": 0, "float8": 1}
SQLTYPE = {"bool": "bool", "int2": "int2", "int4": "int4", "int8": "int8", "float4": "float4",
           "float8": "float8", "numeric": "numeric", "date": "date", "timestamp": "timestamp",
           "timestamptz": "timestamptz", "text": "text", "bpchar": "bpchar"}

# columns of fz_a / fz_b / fz_empty and their generator types
COLUMNS = [("id", "int4"), ("k", "int4"), ("b", "bool"), ("i2", "int2"), ("i4", "int4"),
           ("i8", "int8"), ("f4", "float4"), ("f8", "float8"), ("n", "numeric"), ("n2", "numeric"),
           ("n8", "numeric"), ("d", "date"), ("ts", "timestamp"), ("tz", "timestamptz"),
           ("t", "text"), ("vc", "text"), ("c", "bpchar"), ("lt", "text")]

LITERALS = {
    "bool": ["true", "false", "NULL::bool"],
    "int2": ["0", "1", "(-1)", "7", "2", "100", "(-1000)", "32767", "(-32768)", "999"],
    "int4": ["0", "1", "(-1)", "2", "3", "42", "100", "(-100000)", "65536", "2147483647",
             "(-2147483648)", "1000", "10"],
    "int8": ["0", "1", "(-1)", "1000000007", "9223372036854775807", "(-9223372036854775808)",
             "4294967296", "10000000000"],
    "float4": ["0", "-0", "1.5", "0.1", "0.5", "NaN", "Infinity", "-Infinity", "3.4028235e38",
               "1e-45", "7", "-55.4375", "16777217"],
    "float8": ["0", "-0", "1.5", "0.1", "NaN", "Infinity", "-Infinity", "1.7976931348623157e308",
               "5e-324", "1e300", "-14.037109375", "1000000", "9007199254740993"],
    "numeric": ["0", "1.5", "1.50", "-0.0", "NaN", "Infinity", "-Infinity", "1e40", "0.01",
                "-100.25", "99999999999999999999999999999999999999", "1e-40",
                "123456789012345678901234567890.123456789", "0.5", "42"],
    "date": ["2000-01-01", "2020-02-29", "infinity", "-infinity", "1970-01-01", "5874897-12-31",
             "4714-11-24 BC", "1999-12-31"],
    "timestamp": ["2000-01-01 00:00:00", "1991-07-25 05:29:00.000071", "infinity", "-infinity",
                  "294276-12-31 23:59:59.999999", "4714-11-24 00:00:00 BC", "2020-02-29 12:00:00"],
    "timestamptz": ["2000-01-01 00:00:00+00", "2020-03-08 10:00:00+00", "infinity", "-infinity",
                    "2000-01-01 00:00:00-08", "1990-06-15 12:34:56.789+02"],
    "text": ["", "same", "str1", "str100", "str999 ", "a%b", "a_b", "a\\b", "ñandú", "日本語テキスト",
             "straße", " ", "abc", "é", "lt5", "Ωmega", "😀 emoji"],
    "bpchar": ["", "a", "ab", "ab ", "abc", " ab", "abcdef", "é", "日本", "A"],
}
LIKE_PATTERNS = ["%", "", "s%", "str1%", "%1", "%\\%%", "%\\_%", "a_b", "a\\_b", "_", "__", "%a%",
                 "str__", "%ñ%", "%語%", "_本%", "%e", "lt_", "long%", "%é%", "same", "a%b",
                 "%%%", "_%_", "ab%", "%b%", "ab _"]


def lit_sql(t, v):
    """SQL text of a literal of generator type t."""
    if t == "bool":
        return v
    if t == "int4":
        return "(-2147483648)::int4" if v == "(-2147483648)" else v
    if t in ("int2", "int8"):
        return "%s::%s" % (v, t)
    if t == "numeric" and re.fullmatch(r"\d+\.\d+", v):
        return v
    return "'%s'::%s" % (v.replace("'", "''"), SQLTYPE[t])


class E:
    """An expression: fmt with {} holes for its kids (fmt is plain SQL for a
    leaf).  typ is the generator's type; err: this node itself can raise;
    alias: the table alias of a column; bound: aliases defined inside (a
    subquery's own tables)."""
    __slots__ = ("kind", "typ", "fmt", "kids", "alias", "bound", "err", "attrs")

    def __init__(self, kind, typ, fmt, kids=(), alias=None, bound=(), err=False, **attrs):
        self.kind = kind
        self.typ = typ
        self.fmt = fmt
        self.kids = list(kids)
        self.alias = alias
        self.bound = tuple(bound)
        self.err = err
        self.attrs = attrs

    def sql(self):
        if self.kind == "agg":
            return self._agg_sql()
        if not self.kids:
            return self.fmt
        return self.fmt.format(*[k.sql() for k in self.kids])

    def _agg_sql(self):
        a = self.attrs
        arg, filt = self.kids
        inner = "*" if arg is None else (("DISTINCT " if a.get("distinct") else "") + arg.sql())
        s = "%s(%s)" % (a["func"], inner)
        if filt is not None:
            s += " FILTER (WHERE %s)" % filt.sql()
        return s

    def walk(self):
        yield self
        for k in self.kids:
            if k is not None:
                yield from k.walk()

    def aliases(self):
        s = set()
        if self.alias:
            s.add(self.alias)
        for k in self.kids:
            if k is not None:
                s |= k.aliases()
        return s - set(self.bound)

    def can_error(self):
        return any(n.err for n in self.walk())

    def has_agg(self):
        return any(n.kind == "agg" for n in self.walk())


def col(alias, name, typ):
    return E("col", typ, "%s.%s" % (alias, name), alias=alias)


def lit(t, v):
    return E("lit", t, lit_sql(t, v))


def null(t):
    return E("lit", t, "NULL::%s" % SQLTYPE[t])


def op(typ, fmt, kids, err=False, kind="op", **attrs):
    return E(kind, typ, fmt, kids, err=err, **attrs)


INT_GUARD = {"int2": 100, "int4": 10000, "int8": 1000000000}
CAST_GUARD = {"int2": "-32000 AND 32000", "int4": "-2147483000 AND 2147483000",
              "int8": "-9200000000000000000 AND 9200000000000000000"}
INT_MIN = {"int2": "(-32768)", "int4": "(-2147483648)", "int8": "(-9223372036854775808)"}
FLOAT_GUARD = {"float4": "1e-15 AND 1e15", "float8": "1e-30 AND 1e30"}


class Gen:
    """Random expressions over the columns of some table aliases.

    In 'safe' mode (half of the queries) the operations that can raise an
    error are mostly guarded by a CASE that yields NULL where they would
    (CASE WHEN x BETWEEN -100 AND 100 AND ... THEN x * y END): fewer
    queries end in an error, so more compare rows, and the device must
    honour CASE's laziness (a guarded operand evaluated eagerly raises)."""

    safe_default = False

    def __init__(self, rng, aliases, tags, safe=None):
        self.r = rng
        self.aliases = list(aliases)     # aliases whose columns may appear
        self.tags = tags                 # Counter of features used
        self.safe = Gen.safe_default if safe is None else safe

    def guarded(self, t, cond, cond_kids, e):
        """e, or in safe mode (mostly) CASE WHEN cond THEN e END."""
        if not self.safe or self.chance(0.1):
            return e
        self.tag("guarded by CASE")
        return op(t, "(CASE WHEN %s THEN {} END)" % cond, list(cond_kids) + [e])

    def tag(self, t):
        self.tags[t] += 1

    def chance(self, p):
        return self.r.random() < p

    def pick(self, seq):
        return self.r.choice(seq)

    def column(self, t):
        cands = [(a, c) for a in self.aliases for c, ct in COLUMNS if ct == t]
        if not cands:
            return None
        a, c = self.pick(cands)
        return col(a, c, t)

    def literal(self, t):
        if self.chance(0.03):
            return null(t)
        return lit(t, self.pick(LITERALS[t]))

    def leaf(self, t):
        if self.chance(0.72):
            c = self.column(t)
            if c is not None:
                return c
        return self.literal(t)

    # -- values of a type ------------------------------------------------------

    def expr(self, t, depth):
        if depth <= 0 or self.chance(0.3):
            return self.leaf(t)
        f = getattr(self, "g_" + t, None)
        if f is None:
            return self.leaf(t)
        roll = self.r.random()
        if roll < 0.08:
            return self.g_case(t, depth)
        if roll < 0.13:
            return self.g_coalesce(t, depth)
        if roll < 0.16 and t not in ("bool",):
            self.tag("nullif")
            return op(t, "NULLIF({}, {})", [self.expr(t, depth - 1), self.leaf(t)])
        return f(depth)

    def g_case(self, t, depth):
        self.tag("case")
        n = self.r.randint(1, 2)
        kids, parts = [], []
        if self.chance(0.3):
            # simple CASE: CASE x WHEN v THEN ...
            st = self.pick(("int2", "int4", "text", "bool"))
            kids.append(self.expr(st, depth - 1))
            parts.append("CASE {}")
            for _ in range(n):
                kids += [self.literal(st), self.expr(t, depth - 1)]
                parts.append("WHEN {} THEN {}")
        else:
            parts.append("CASE")
            for _ in range(n):
                kids += [self.bool(depth - 1), self.expr(t, depth - 1)]
                parts.append("WHEN {} THEN {}")
        if self.chance(0.7):
            kids.append(self.expr(t, depth - 1))
            parts.append("ELSE {}")
        parts.append("END")
        return op(t, "(" + " ".join(parts) + ")", kids)

    def g_coalesce(self, t, depth):
        self.tag("coalesce")
        kids = [self.expr(t, depth - 1) for _ in range(self.r.randint(2, 3))]
        return op(t, "COALESCE(" + ", ".join("{}" for _ in kids) + ")", kids)

    def _int_operands(self, t, depth):
        # operand types no wider than t, one of them t
        narrower = [x for x in INTS if RANK[x] <= RANK[t]]
        a, b = t, self.pick(narrower)
        if self.chance(0.5):
            a, b = b, a
        return self.expr(a, depth - 1), self.expr(b, depth - 1)

    def g_int(self, t, depth):
        roll = self.r.random()
        if roll < 0.40:
            x, y = self._int_operands(t, depth)
            o = self.pick(("+", "-", "*", "/", "%", "+", "-"))
            self.tag("arith " + o)
            if self.chance(0.4):
                y = self.literal(self.pick([s for s in INTS if RANK[s] <= RANK[t]]))
            b = INT_GUARD[t]
            cond = "{} BETWEEN -%d AND %d AND {} BETWEEN -%d AND %d" % (b, b, b, b)
            if o in ("/", "%"):
                cond += " AND {} <> 0"
            return self.guarded(t, cond, [x, y] + ([y] if o in ("/", "%") else []),
                                op(t, "({} %s {})" % o, [x, y], err=True))
        if roll < 0.48:
            x, y = self._int_operands(t, depth)
            self.tag("mod()")
            return self.guarded(t, "{} <> 0 AND {} <> -1", [y, y], op(t, "mod({}, {})", [x, y], err=True))
        if roll < 0.58:
            self.tag("abs/neg")
            x = self.expr(t, depth - 1)
            return self.guarded(t, "{} > %s" % INT_MIN[t], [x],
                                op(t, self.pick(("abs({})", "(- {})", "(@ {})")), [x], err=True))
        if roll < 0.70:
            if self.chance(0.6) and t != "int2":
                src = self.pick([s for s in INTS if RANK[s] < RANK[t]])
            else:
                src = self.pick([s for s in INTS + FLOATS + ("numeric",) if s != t])
            self.tag("cast %s->%s" % (src, t))
            x = self.expr(src, depth - 1)
            return self.guarded(t, "{} BETWEEN %s" % CAST_GUARD[t], [x], op(t, "({})::%s" % t, [x], err=True))
        if roll < 0.76 and t == "int4":
            self.tag("date - date")
            x, y = self.expr("date", depth - 1), self.expr("date", depth - 1)
            cond = "{} BETWEEN '4714-11-24 BC'::date AND '5874897-12-31'::date AND {} BETWEEN '4714-11-24 BC'::date AND '5874897-12-31'::date"
            return self.guarded(t, cond, [x, y], op(t, "({} - {})", [x, y], err=True))
        if roll < 0.94 and t == "int4":
            self.tag("unsupported fn")
            return op(t, self.pick(("length({})", "octet_length({})", "ascii({})")), [self.expr("text", depth - 1)])
        if roll < 0.97 and t == "int4":
            self.tag("cast text->int")
            x = op("text", "substr({}, 4, 3)", [self.expr("text", depth - 1)])
            return self.guarded(t, "{} ~ '^[0-9][0-9]?[0-9]?$'", [x], op(t, "({})::int4", [x], err=True))
        return self.leaf(t)

    def g_int2(self, depth):
        return self.g_int("int2", depth)

    def g_int4(self, depth):
        return self.g_int("int4", depth)

    def g_int8(self, depth):
        return self.g_int("int8", depth)

    def g_float(self, t, depth):
        roll = self.r.random()
        if roll < 0.45:
            if t == "float4":
                a = b = "float4"
            else:
                a, b = "float8", self.pick(FLOATS)
                if self.chance(0.5):
                    a, b = b, a
            o = self.pick(("+", "-", "*", "/"))
            self.tag("float " + o)
            x, y = self.expr(a, depth - 1), self.expr(b, depth - 1)
            g = FLOAT_GUARD[t]
            return self.guarded(t, "abs({}) BETWEEN %s AND abs({}) BETWEEN %s" % (g, g), [x, y],
                                op(t, "({} %s {})" % o, [x, y], err=True))
        if roll < 0.55:
            self.tag("abs/neg")
            return op(t, self.pick(("abs({})", "(- {})")), [self.expr(t, depth - 1)])
        if roll < 0.85:
            src = self.pick([s for s in INTS + FLOATS + ("numeric",) if s != t])
            self.tag("cast %s->%s" % (src, t))
            x = self.expr(src, depth - 1)
            return self.guarded(t, "{} BETWEEN -1e30 AND 1e30", [x], op(t, "({})::%s" % t, [x], err=True))
        return self.leaf(t)

    def g_float4(self, depth):
        return self.g_float("float4", depth)

    def g_float8(self, depth):
        return self.g_float("float8", depth)

    def g_numeric(self, depth):
        roll = self.r.random()
        if roll < 0.45:
            a, b = "numeric", self.pick(("numeric", "numeric") + INTS)
            if self.chance(0.5):
                a, b = b, a
            o = self.pick(("+", "-", "*", "+", "-", "*", "/", "%"))
            self.tag("numeric " + o)
            x, y = self.expr(a, depth - 1), self.expr(b, depth - 1)
            e = op("numeric", "({} %s {})" % o, [x, y], err=True)
            if o in ("/", "%"):
                return self.guarded("numeric", "{} <> 0", [y], e)
            return e
        if roll < 0.55:
            self.tag("abs/neg")
            return op("numeric", self.pick(("abs({})", "(- {})")), [self.expr("numeric", depth - 1)])
        if roll < 0.80:
            src = self.pick(INTS + FLOATS)
            self.tag("cast %s->numeric" % src)
            return op("numeric", "({})::numeric", [self.expr(src, depth - 1)], err=True)
        if roll < 0.88:
            self.tag("unsupported fn")
            return op("numeric", "round({}, 2)", [self.expr("numeric", depth - 1)], err=True)
        if roll < 0.93:
            self.tag("typmod cast")
            x = self.expr("numeric", depth - 1)
            return self.guarded("numeric", "abs({}) < 10000000", [x], op("numeric", "({})::numeric(10,2)", [x], err=True))
        return self.leaf("numeric")

    def g_date(self, depth):
        roll = self.r.random()
        if roll < 0.55:
            o = self.pick(("+", "-"))
            self.tag("date %s int" % o)
            n = self.expr("int2", depth - 1) if self.chance(0.5) else lit("int4", self.pick(("1", "30", "(-1)", "365", "100000")))
            d = self.expr("date", depth - 1)
            return self.guarded("date", "{} BETWEEN '4000-01-01 BC'::date AND '5000000-01-01'::date AND {} BETWEEN -1000000 AND 1000000",
                                [d, n], op("date", "({} %s {})" % o, [d, n], err=True))
        if roll < 0.75:
            self.tag("cast timestamp->date")
            return op("date", "({})::date", [self.expr(self.pick(("timestamp", "timestamptz")), depth - 1)], err=True)
        return self.leaf("date")

    def g_timestamp(self, depth):
        roll = self.r.random()
        if roll < 0.45:
            self.tag("cast date->timestamp")
            x = self.expr("date", depth - 1)
            return self.guarded("timestamp", "{} < '294276-12-31'::date", [x], op("timestamp", "({})::timestamp", [x], err=True))
        if roll < 0.70:
            self.tag("timestamp + interval")
            x = self.expr("timestamp", depth - 1)
            return self.guarded("timestamp", "{} BETWEEN '4713-01-01 BC'::timestamp AND '294000-01-01'::timestamp", [x],
                                op("timestamp", "({} + interval '%s')" % self.pick(("1 day", "-1 hour", "1 month", "1 microsecond")),
                                   [x], err=True))
        if roll < 0.85:
            self.tag("unsupported fn")
            return op("timestamp", "date_trunc('day', {})", [self.expr("timestamp", depth - 1)], err=True)
        return self.leaf("timestamp")

    def g_timestamptz(self, depth):
        roll = self.r.random()
        if roll < 0.5:
            self.tag("cast ->timestamptz")
            st = self.pick(("date", "timestamp"))
            x = self.expr(st, depth - 1)
            return self.guarded("timestamptz", "{} BETWEEN '4713-01-01 BC'::%s AND '294000-01-01'::%s" % (st, st), [x],
                                op("timestamptz", "({})::timestamptz", [x], err=True))
        return self.leaf("timestamptz")

    def g_text(self, depth):
        roll = self.r.random()
        if roll < 0.40:
            self.tag("substr")
            x = self.expr("text", depth - 1)
            i = self.pick((self.literal("int4"), lit("int4", self.pick(("1", "2", "0", "(-1)", "3"))),
                           self.expr("int4", depth - 1)))
            if self.chance(0.6):
                if self.chance(0.8):
                    j = lit("int4", self.pick(("1", "2", "3", "0", "10")))
                    return op("text", self.pick(("substr({}, {}, {})", "substring({} from {} for {})")),
                              [x, i, j], err=True)
                j = self.expr("int4", depth - 1)
                return self.guarded("text", "{} >= 0", [j], op("text", "substr({}, {}, {})", [x, i, j], err=True))
            return op("text", "substr({}, {})", [x, i], err=True)
        if roll < 0.55:
            self.tag("cast char->text")
            return op("text", "({})::text", [self.expr("bpchar", depth - 1)])
        if roll < 0.75:
            self.tag("unsupported fn")
            f = self.pick(("upper({})", "lower({})", "md5({})", "({} || 'x')", "btrim({})", "({} || {})"))
            kids = [self.expr("text", depth - 1) for _ in range(f.count("{}"))]
            return op("text", f, kids)
        if roll < 0.82:
            self.tag("cast ->text")
            src = self.pick(("int4", "int8", "numeric", "date", "float8", "bool"))
            return op("text", "({})::text", [self.expr(src, depth - 1)])
        return self.leaf("text")

    def g_bpchar(self, depth):
        roll = self.r.random()
        if roll < 0.3:
            self.tag("cast text->char")
            return op("bpchar", "({})::char(%d)" % self.pick((1, 3, 6, 8)), [self.expr("text", depth - 1)])
        return self.leaf("bpchar")

    def g_bool(self, depth):
        return self.bool(depth)

    # -- conditions -------------------------------------------------------------

    def comparable(self):
        fam = self.pick(("int", "int", "int", "float", "numeric", "numeric", "date", "date", "text",
                         "text", "bpchar", "bool", "intfloat", "intnum", "mixdate", "textchar"))
        if fam == "int":
            return self.pick(INTS), self.pick(INTS)
        if fam == "float":
            return self.pick(FLOATS), self.pick(FLOATS)
        if fam == "numeric":
            return "numeric", self.pick(("numeric", "numeric", "int4", "int8", "int2"))
        if fam == "date":
            return self.pick(DATES), None
        if fam == "mixdate":
            return self.pick(DATES), self.pick(DATES)
        if fam == "text":
            return "text", "text"
        if fam == "bpchar":
            return "bpchar", "bpchar"
        if fam == "textchar":
            return "text", "bpchar"
        if fam == "bool":
            return "bool", "bool"
        if fam == "intfloat":
            return self.pick(("int2", "int4")), "float8"
        return self.pick(INTS), "numeric"

    def compare(self, depth):
        a, b = self.comparable()
        b = b or a
        if self.chance(0.5):
            a, b = b, a
        x = self.expr(a, depth - 1)
        y = self.expr(b, depth - 1) if self.chance(0.5) else self.leaf(b)
        o = self.pick(("=", "<>", "<", "<=", ">", ">=", "=", "<"))
        if a in TEXTS or b in TEXTS:
            if o in ("=", "<>"):
                self.tag("text equality")
                return op("bool", "({} %s {})" % o, [x, y])
            if self.chance(0.65):
                self.tag('text order COLLATE "C"')
                return op("bool", '({} %s {} COLLATE "C")' % o, [x, y])
            self.tag("text order default collation")
            return op("bool", "({} %s {})" % o, [x, y])
        self.tag("compare %s" % ("/".join(sorted({a, b}))))
        # (a comparison across types converts one side: mark it as one that may raise)
        return op("bool", "({} %s {})" % o, [x, y], err=a != b)

    def bool(self, depth):
        """A condition; nearly always one that reads a column (constant
        conditions fold away at planning)."""
        for _ in range(4):
            e = self._bool(depth)
            if e.aliases() or not self.aliases or self.chance(0.05):
                return e
        return e

    def _bool(self, depth):
        if depth <= 0:
            roll = self.r.random()
            if roll < 0.2:
                c = self.column("bool")
                if c is not None:
                    return c
            if roll < 0.3:
                self.tag("is null")
                return op("bool", "({} IS %sNULL)" % self.pick(("", "NOT ")), [self.leaf(self.pick(ALLTYPES))])
            return self.compare(1)
        roll = self.r.random()
        if roll < 0.22:
            return self.compare(depth)
        if roll < 0.34:
            self.tag("and")
            return op("bool", "({} AND {})", [self.bool(depth - 1), self.bool(depth - 1)], kind="and")
        if roll < 0.44:
            self.tag("or")
            return op("bool", "({} OR {})", [self.bool(depth - 1), self.bool(depth - 1)], kind="or")
        if roll < 0.48:
            self.tag("not")
            return op("bool", "(NOT {})", [self.bool(depth - 1)], kind="not")
        if roll < 0.53:
            self.tag("is null")
            return op("bool", "({} IS %sNULL)" % self.pick(("", "NOT ")), [self.expr(self.pick(ALLTYPES), depth - 1)])
        if roll < 0.58:
            self.tag("is true/false/unknown")
            return op("bool", "({} IS %s)" % self.pick(("TRUE", "NOT TRUE", "FALSE", "NOT FALSE", "UNKNOWN", "NOT UNKNOWN")),
                      [self.bool(depth - 1)])
        if roll < 0.65:
            t = self.pick(INTS + FLOATS + ("numeric", "date", "timestamp", "text"))
            self.tag("between")
            neg = self.chance(0.3)
            x, lo, hi = self.expr(t, depth - 1), self.leaf(t), self.leaf(t)
            coll = ' COLLATE "C"' if t == "text" and self.chance(0.7) else ""
            return op("bool", "({} %sBETWEEN {} AND {}%s)" % ("NOT " if neg else "", coll), [x, lo, hi],
                      kind="between", neg=neg, coll=coll)
        if roll < 0.72:
            t = self.pick(INTS + FLOATS + ("numeric", "date", "text", "bpchar", "timestamp"))
            n = self.r.randint(1, 5)
            items = [self.literal(t) if self.chance(0.8) else self.leaf(t) for _ in range(n)]
            if self.chance(0.3):
                items.append(null(t))
            neg = self.chance(0.3)
            self.tag("not in list" if neg else "in list")
            return op("bool", "({} %sIN (%s))" % ("NOT " if neg else "", ", ".join("{}" for _ in items)),
                      [self.expr(t, depth - 1)] + items)
        if roll < 0.77:
            t = self.pick(INTS + FLOATS + ("numeric", "date", "text"))
            n = self.r.randint(1, 4)
            items = [self.literal(t) for _ in range(n)]
            o = self.pick(("= ANY", "<> ALL", "< ANY", ">= ALL", "= ALL"))
            self.tag("%s(array)" % o)
            return op("bool", "({} %s (ARRAY[%s]))" % (o, ", ".join("{}" for _ in items)),
                      [self.expr(t, depth - 1)] + items)
        if roll < 0.85:
            t = self.pick(("text", "text", "bpchar"))
            pat = self.pick(LIKE_PATTERNS)
            kw = self.pick(("LIKE", "LIKE", "NOT LIKE", "ILIKE"))
            self.tag(kw)
            return op("bool", "({} %s '%s')" % (kw, pat.replace("'", "''")), [self.expr(t, depth - 1)])
        if roll < 0.89:
            return self.g_case("bool", depth)
        if roll < 0.92:
            return self.g_coalesce("bool", depth)
        c = self.column("bool")
        if c is not None:
            return c
        return self.compare(depth)


# ---------------------------------------------------------------------------
# queries
# ---------------------------------------------------------------------------

class Item:
    """A select-list entry; mode says how its column is compared."""

    def __init__(self, expr, mode="exact", key=False):
        self.expr = expr
        self.mode = mode      # exact | value | approx
        self.key = key        # a GROUP BY key (by position)


class Query:
    """SELECT [DISTINCT] items FROM from_sql WHERE where GROUP BY keys HAVING having.

    tables: alias -> table name or a nested Query (derived table); from_sql
    holds {alias} placeholders and {on} for the join condition."""

    def __init__(self, kind):
        self.kind = kind
        self.settings = []
        self.distinct = False
        self.items = []
        self.tables = {}
        self.from_sql = ""
        self.on = None
        self.where = None
        self.having = None
        self.tags = Counter()

    def from_text(self):
        parts = {}
        for a, t in self.tables.items():
            parts[a] = ("(%s) %s" % (t.sql(), a)) if isinstance(t, Query) else "%s %s" % (t, a)
        on = self.on.sql() if self.on is not None else "true"
        return self.from_sql.replace("{on}", on).format(**parts)

    def sql(self):
        cols = []
        for i, it in enumerate(self.items):
            cols.append("%s AS c%d" % (it.expr.sql(), i + 1))
        s = "SELECT %s%s FROM %s" % ("DISTINCT " if self.distinct else "", ", ".join(cols), self.from_text())
        if self.where is not None:
            s += " WHERE " + self.where.sql()
        keys = [str(i + 1) for i, it in enumerate(self.items) if it.key]
        if keys:
            s += " GROUP BY " + ", ".join(keys)
        if self.having is not None:
            s += " HAVING " + self.having.sql()
        return s

    def modes(self):
        return [it.mode for it in self.items]

    def exprs(self):
        """Every expression root, with a setter."""
        out = []
        for it in self.items:
            out.append((it.expr, lambda e, it=it: setattr(it, "expr", e)))
        if self.on is not None:
            out.append((self.on, lambda e: setattr(self, "on", e)))
        if self.where is not None:
            out.append((self.where, lambda e: setattr(self, "where", e)))
        if self.having is not None:
            out.append((self.having, lambda e: setattr(self, "having", e)))
        return out


def render_settings(settings):
    return "".join("SET %s; " % s for s in settings)


# -- leaves ----------------------------------------------------------------------

CONNECTIVES = ("and", "or", "not", "between")


def has_connective(e):
    return any(n.kind in CONNECTIVES or n.kind == "subq" for n in e.walk())


def leaves(e, in_subq=False):
    """The parts of e whose evaluation PostgreSQL does not order: e is
    split at AND/OR/NOT/BETWEEN (and at the WHERE of a subquery), wherever
    they are; what remains holds no such operator, so it is evaluated the
    same way by any correct executor.  (Splitting inside a CASE branch
    loses the branch's guard: that makes the classification lenient for an
    AND/OR under a CASE, never strict where it should not be.)"""
    if e is None:
        return []
    if e.kind == "agg":
        if in_subq:
            # an aggregate of a subquery: its argument and FILTER, per row
            return leaves(e.kids[0], True) + leaves(e.kids[1], True)
        return [e]
    if e.kind == "between":
        x, lo, hi = e.kids
        coll = e.attrs.get("coll", "")
        return (leaves(op("bool", "({} >= {}%s)" % coll, [x, lo], err=x.typ != lo.typ)) +
                leaves(op("bool", "({} <= {}%s)" % coll, [x, hi], err=x.typ != hi.typ)))
    if not has_connective(e):
        return [e]
    out = []
    for k in e.kids:
        out += leaves(k, in_subq or e.kind == "subq")
    return out


def subquery_tables(root):
    out = {}
    if root is not None:
        for n in root.walk():
            if n.kind == "subq":
                out.update(n.attrs.get("tables", {}))
    return out


def query_leaves(q):
    """(context, expression, owner query, tables) of q and of its derived
    tables: 'row' leaves are evaluated over every row of their tables,
    'group' leaves (holding aggregates) over every group of the owner."""
    out = []
    for t in q.tables.values():
        if isinstance(t, Query):
            out += query_leaves(t)
    roots = [it.expr for it in q.items] + [q.on, q.where, q.having]
    tables = dict(q.tables)
    for root in roots:
        tables.update(subquery_tables(root))
    for root in roots:
        for l in leaves(root):
            if not l.has_agg():
                out.append(("row", l, q, tables))
                continue
            out.append(("group", l, q, tables))
            for n in l.walk():
                if n.kind == "agg":
                    for k in n.kids:
                        for ll in leaves(k):
                            if not ll.has_agg():
                                out.append(("row", ll, q, tables))
    return out


def leaf_query(ctx, e, q, tables, settings):
    lq = Query("leaf")
    lq.settings = list(settings)
    lq.items = [Item(E("lit", "int8", "count(*)"))]
    if ctx == "row":
        lq.tables = {a: tables[a] for a in sorted(e.aliases()) if a in tables}
        lq.from_sql = ", ".join("{%s}" % a for a in lq.tables) or "(SELECT 1) AS one"
        lq.where = op("bool", "({} IS NULL)", [e])
    else:
        # group context: the leaf over every group of q (its WHERE included)
        inner = copy.copy(q)
        inner.settings = []
        inner.items = [Item(E("lit", "int4", "1"))] + [Item(it.expr, it.mode, True) for it in q.items if it.key]
        inner.having = op("bool", "({} IS NULL)", [e])
        inner.distinct = False
        lq.tables = {"g": inner}
        lq.from_sql = "{g}"
    return lq


def map_aggs(e, fn):
    """A copy of e with each aggregate node n replaced by fn(n) (or kept when None)."""
    for n in list(e.walk()):
        if n.kind == "agg":
            r = fn(n)
            if r is not None:
                e = replace_in(e, n, r)
    return e


def abs_sum_agg(n):
    if not n.attrs.get("floatsum") or n.kids[0] is None:
        return None
    arg, filt = n.kids
    return E("agg", "float8", "", [op("float8", "abs(({})::float8)", [arg]), filt],
             func="avg" if n.attrs["func"] == "avg" else "sum")


def abs_query(q):
    """q with every float sum/avg over |x| (their tolerance's scale)."""
    aq = copy.copy(q)
    aq.items = [Item(map_aggs(it.expr, abs_sum_agg), it.mode, it.key) for it in q.items]
    aq.tables = {a: (abs_query(t) if isinstance(t, Query) else t) for a, t in q.tables.items()}
    return aq


def float_sum_leaves(q):
    """For float sum/avg: their inputs' absolute sums and squares over all
    rows; when these overflow, whether the sum (or the sum of squares that
    avg keeps) overflows depends on the order of the rows."""
    out = []
    for qq in [q] + [t for t in q.tables.values() if isinstance(t, Query)]:
        roots = [it.expr for it in qq.items] + [qq.having]
        tables = dict(qq.tables)
        for root in roots:
            tables.update(subquery_tables(root))
        for root in roots:
            if root is None:
                continue
            for n in root.walk():
                if n.kind == "agg" and n.attrs.get("floatsum") and n.kids[0] is not None:
                    arg = n.kids[0]
                    lq = Query("leaf")
                    lq.tables = {a: tables[a] for a in sorted(arg.aliases()) if a in tables}
                    lq.from_sql = ", ".join("{%s}" % a for a in lq.tables) or "(SELECT 1) AS one"
                    lq.items = [Item(op("float8", "sum(abs(({})::float8)) + sum(({})::float8 * ({})::float8)",
                                        [arg, arg, arg]))]
                    out.append(lq)
    return out


# -- query generation ----------------------------------------------------------------

def agg_item(g, depth):
    """An aggregate call and how to compare it."""
    r = g.r
    roll = r.random()
    filt = g.bool(r.randint(0, 2)) if g.chance(0.2) else None
    if filt is not None:
        g.tag("FILTER")
    if roll < 0.18:
        g.tag("count(*)")
        return E("agg", "int8", "", [None, filt], func="count"), "exact"
    if roll < 0.30:
        t = g.pick(ALLTYPES)
        g.tag("count(x)")
        return E("agg", "int8", "", [g.expr(t, depth), filt], func="count"), "exact"
    if roll < 0.55:
        t = g.pick(INTS + ("numeric",) + FLOATS)
        f = g.pick(("sum", "avg"))
        arg = g.expr(t, depth)
        g.tag("%s(%s)" % (f, t))
        if t in FLOATS:
            rt = "float4" if (f == "sum" and t == "float4") else "float8"
            return E("agg", rt, "", [arg, filt], func=f, floatsum=True), "approx"
        rt = "numeric" if (f == "avg" or t in ("int8", "numeric")) else "int8"
        return E("agg", rt, "", [arg, filt], func=f), "exact"
    if roll < 0.62:
        t = g.pick(INTS + ("numeric",) + FLOATS)
        f = g.pick(("variance", "var_samp", "var_pop", "stddev", "stddev_samp", "stddev_pop"))
        g.tag("variance/stddev(%s)" % t)
        if t in FLOATS:
            return E("agg", "float8", "", [g.expr(t, depth), filt], func=f, floatsum=True), "approx"
        return E("agg", "numeric", "", [g.expr(t, depth), filt], func=f), "exact"
    if roll < 0.88:
        t = g.pick(INTS + FLOATS + ("numeric", "date", "timestamp", "timestamptz"))
        f = g.pick(("min", "max"))
        g.tag("%s(%s)" % (f, t))
        mode = "value" if t in FLOATS + ("numeric",) else "exact"
        return E("agg", t, "", [g.expr(t, depth), filt], func=f), mode
    # aggregates that gpuext does not run: the stock plan under a GpuScan
    roll = r.random()
    if roll < 0.3:
        g.tag("unsupported agg")
        return E("agg", "bool", "", [g.bool(depth), filt], func=g.pick(("bool_and", "bool_or"))), "exact"
    if roll < 0.6:
        t = g.pick(TEXTS)
        g.tag("min/max(text)")
        return E("agg", t, "", [g.expr(t, depth), filt], func=g.pick(("min", "max"))), "exact"
    if roll < 0.8:
        t = g.pick(("int4", "text", "date", "int2"))
        g.tag("count(DISTINCT)")
        return E("agg", "int8", "", [g.expr(t, depth), filt], func="count", distinct=True), "exact"
    g.tag("sum(float4)")
    return E("agg", "float4", "", [g.expr("float4", depth), filt], func="sum", floatsum=True), "approx"


def key_expr(g, alias):
    """A GROUP BY key: a column or a small expression."""
    r = g.r
    roll = r.random()
    if roll < 0.45:
        name, t = g.pick([c for c in COLUMNS if c[0] not in ("id", "lt")])
        return col(alias, name, t)
    if roll < 0.75:
        forms = [
            ("int4", "({} %% %d)" % r.choice((2, 3, 7, 10, 100)), ["k"], True),
            ("int4", "({} / %d)" % r.choice((10, 1000, 50000)), ["i4"], True),
            ("int2", "({} %% %d)" % r.choice((3, 5, 10)), ["i2"], True),
            ("int8", "({} %% %d)" % r.choice((3, 1000)), ["i8"], True),
            ("bool", "({} IS NULL)", ["n"], False),
            ("bool", "({} > 0)", ["f8"], False),
            ("text", "substr({}, 1, %d)" % r.choice((1, 2, 4)), ["t"], True),
            ("int4", "({} - date '2000-01-01')", ["d"], True),
            ("int8", "abs({})", ["i8"], True),
            ("float8", "({} * 2)", ["f8"], True),
            ("numeric", "({} * 2)", ["n2"], True),
            ("date", "({} + 1)", ["d"], True),
            ("int4", "COALESCE({}, -1)", ["k"], False),
            ("bpchar", "{}", ["c"], False),
        ]
        t, fmt, cols, err = r.choice(forms)
        kids = [col(alias, c, dict(COLUMNS)[c]) for c in cols]
        g.tag("expression key")
        return op(t, fmt, kids, err=err)
    t = g.pick(("int2", "int4", "bool", "text", "date", "numeric", "int8"))
    g.tag("generated key")
    return g.expr(t, 2)


def key_mode(t):
    return "value" if t in FLOATS + ("numeric",) else "exact"


def gen_where(g, depth):
    return g.bool(depth)


def pick_table(r, empty_share=0.1):
    x = r.random()
    if x < empty_share:
        return "fz_empty"
    return "fz_a" if x < 0.6 else "fz_b"


def gen_settings(r, has_gpu):
    s = []
    if r.random() < 0.15:
        s += ["parallel_setup_cost = 0", "parallel_tuple_cost = 0", "min_parallel_table_scan_size = 0",
              "max_parallel_workers_per_gather = 2"]
    if r.random() < 0.12:
        s.append("gpuext.max_batch_pages = %d" % r.choice((1, 2, 3, 8)))
    if r.random() < 0.08:
        s.append(r.choice(("enable_hashagg = off", "enable_hashjoin = off", "enable_mergejoin = off",
                           "enable_nestloop = off", "enable_sort = off")))
    if has_gpu and r.random() < 0.2:
        s.append("gpuext.device = cpu")
    return s


def gen_scan(r, tags):
    q = Query("scan")
    q.tables = {"x": pick_table(r)}
    q.from_sql = "{x}"
    g = Gen(r, ["x"], tags)
    for _ in range(r.randint(1, 5)):
        if r.random() < 0.55:
            name, t = r.choice(COLUMNS)
            q.items.append(Item(col("x", name, t)))
        else:
            t = r.choice(ALLTYPES)
            q.items.append(Item(g.expr(t, r.randint(1, 3))))
    if r.random() < 0.92:
        q.where = gen_where(g, r.randint(1, 4))
    if r.random() < 0.08:
        q.distinct = True
        tags["DISTINCT"] += 1
        for it in q.items:
            it.mode = key_mode(it.expr.typ)
    return q


def gen_agg(r, tags, alias="x", table=None):
    q = Query("agg")
    q.tables = {alias: table or pick_table(r)}
    q.from_sql = "{%s}" % alias
    g = Gen(r, [alias], tags)
    nkeys = r.choice((0, 1, 1, 1, 2, 2, 3))
    tags["group keys: %d" % nkeys] += 1
    for _ in range(nkeys):
        e = key_expr(g, alias)
        q.items.append(Item(e, key_mode(e.typ), key=True))
    for _ in range(r.randint(1, 4)):
        e, mode = agg_item(g, r.randint(0, 2))
        q.items.append(Item(e, mode))
    if r.random() < 0.1:
        # arithmetic over integer aggregates
        a = E("agg", "int8", "", [None, None], func="count")
        b = E("agg", "int8", "", [g.expr("int4", 1), None], func="sum")
        q.items.append(Item(op("int8", "({} + COALESCE({}, 0))", [a, b]), "exact"))
        tags["aggregate arithmetic"] += 1
    if r.random() < 0.8:
        q.where = gen_where(g, r.randint(1, 3))
    if r.random() < 0.25:
        tags["HAVING"] += 1
        forms = [
            lambda: op("bool", "({} > %d)" % r.choice((0, 1, 2, 5, 50)), [E("agg", "int8", "", [None, None], func="count")]),
            lambda: op("bool", "({} > 0)", [E("agg", "int8", "", [g.expr("int4", 1), None], func="sum")]),
            lambda: op("bool", "({} < date '2001-01-01')", [E("agg", "date", "", [col(alias, "d", "date"), None], func="max")]),
            lambda: op("bool", "({} IS NOT NULL)", [E("agg", "int2", "", [col(alias, "i2", "int2"), None], func="min")]),
            lambda: op("bool", "({} <> 3)", [E("agg", "int8", "", [g.expr("bool", 1), None], func="count")]),
        ]
        h = r.choice(forms)()
        if r.random() < 0.3:
            h = op("bool", "({} OR {})", [h, r.choice(forms)()], kind="or")
        q.having = h
    return q


JOINS = ["inner", "inner", "left", "left", "right", "full", "full", "cross", "semi", "anti",
         "in", "not in", "self", "derived", "scalar"]


def gen_join(r, tags):
    jt = r.choice(JOINS)
    tags["join: " + jt] += 1
    q = Query("join")
    ta, tb = pick_table(r, 0.12), pick_table(r, 0.15)
    if jt == "self":
        tb = ta
        jt = r.choice(("inner", "left", "full"))
    g = Gen(r, ["x", "y"], tags)
    gx = Gen(r, ["x"], tags)
    gy = Gen(r, ["y"], tags)
    kx, ky = col("x", "k", "int4"), col("y", "k", "int4")
    if r.random() < 0.2:
        kx, ky = col("x", "id", "int4"), col("y", "id", "int4")

    def eq():
        e = op("bool", "({} = {})", [kx, ky])
        if r.random() < 0.25:
            other = r.choice([("b", "bool"), ("c", "bpchar"), ("i2", "int2"), ("d", "date")])
            e = op("bool", "({} AND ({} = {}))", [e, col("x", *other), col("y", *other)], kind="and")
        return e

    if jt in ("semi", "anti", "in", "not in"):
        q.tables = {"x": ta}
        q.from_sql = "{x}"
        inner_pred = gy.bool(r.randint(1, 2)) if r.random() < 0.7 else None
        if jt in ("semi", "anti"):
            fmt = "(%sEXISTS (SELECT 1 FROM %s y WHERE {} = {}%s))" % (
                "NOT " if jt == "anti" else "", tb, " AND {}" if inner_pred is not None else "")
            kids = [ky, kx] + ([inner_pred] if inner_pred is not None else [])
        else:
            fmt = "({} %sIN (SELECT {} FROM %s y%s))" % (
                "NOT " if jt == "not in" else "", tb, " WHERE {}" if inner_pred is not None else "")
            kids = [kx, ky] + ([inner_pred] if inner_pred is not None else [])
        sub = E("subq", "bool", fmt, kids, bound=("y",), tables={"y": tb})
        w = sub
        if r.random() < 0.7:
            w = op("bool", "({} AND {})", [sub, gx.bool(r.randint(1, 3))], kind="and")
            if r.random() < 0.5:
                w.kids.reverse()
        q.where = w
        for _ in range(r.randint(1, 4)):
            q.items.append(Item(gx.expr(r.choice(ALLTYPES), r.randint(0, 2))))
        return q

    if jt == "derived":
        inner = gen_agg(r, tags, alias="z", table=ta)
        # group by the join key first
        inner.items.insert(0, Item(col("z", "k", "int4"), "exact", key=True))
        q.tables = {"s": inner, "y": tb}
        q.from_sql = "{s} %s JOIN {y} ON {on}" % r.choice(("", "LEFT", "RIGHT", "FULL"))
        q.on = op("bool", "({} = {})", [E("col", "int4", "s.c1", alias="s"), ky])
        for i, it in enumerate(inner.items):
            if r.random() < 0.6 or i == 0:
                q.items.append(Item(E("col", it.expr.typ, "s.c%d" % (i + 1), alias="s"), it.mode))
        for _ in range(r.randint(1, 2)):
            q.items.append(Item(gy.expr(r.choice(ALLTYPES), r.randint(0, 1))))
        if r.random() < 0.5:
            q.where = gy.bool(r.randint(1, 2))
        return q

    if jt == "scalar":
        q.tables = {"x": ta}
        q.from_sql = "{x}"
        e, mode = agg_item(gy, r.randint(0, 1))
        inner_pred = gy.bool(1) if r.random() < 0.5 else None
        fmt = "(SELECT {} FROM %s y WHERE {} = {}%s)" % (tb, " AND {}" if inner_pred is not None else "")
        kids = [e, ky, kx] + ([inner_pred] if inner_pred is not None else [])
        sub = E("subq", e.typ, fmt, kids, bound=("y",), tables={"y": tb})
        q.items.append(Item(col("x", "id", "int4")))
        q.items.append(Item(sub, mode))
        for _ in range(r.randint(0, 2)):
            q.items.append(Item(gx.expr(r.choice(ALLTYPES), 1)))
        # a rescan per outer row: keep to ~1 outer row in 20
        few = op("bool", "(({} %% 20) = %d)" % r.randint(0, 19), [col("x", "id", "int4")])
        q.where = op("bool", "({} AND {})", [few, gx.bool(r.randint(1, 3))], kind="and") if r.random() < 0.8 else few
        tags["correlated subquery"] += 1
        return q

    q.tables = {"x": ta, "y": tb}
    if jt == "cross":
        q.from_sql = "{x} CROSS JOIN {y}"
        w = eq()
    else:
        kw = {"inner": "JOIN", "left": "LEFT JOIN", "right": "RIGHT JOIN", "full": "FULL JOIN"}[jt]
        q.from_sql = "{x} %s {y} ON {on}" % kw
        on = eq()
        if jt != "full" and r.random() < 0.4:
            on = op("bool", "({} AND {})", [on, g.bool(r.randint(1, 2))], kind="and")
        q.on = on
        w = None
    if r.random() < 0.75:
        extra = r.choice((gx, gy, g)).bool(r.randint(1, 3))
        w = extra if w is None else op("bool", "({} AND {})", [w, extra], kind="and")
    q.where = w
    if r.random() < 0.25:
        # aggregation over the join (GpuScans below, no GpuAgg)
        q.kind = "join+agg"
        tags["aggregation over a join"] += 1
        for _ in range(r.randint(0, 2)):
            e = key_expr(gx, "x")
            q.items.append(Item(e, key_mode(e.typ), key=True))
        for _ in range(r.randint(1, 3)):
            e, mode = agg_item(g, r.randint(0, 1))
            q.items.append(Item(e, mode))
        return q
    for _ in range(r.randint(1, 5)):
        gg = r.choice((gx, gy, g))
        if r.random() < 0.6:
            name, t = r.choice(COLUMNS)
            q.items.append(Item(col(r.choice(("x", "y")), name, t)))
        else:
            q.items.append(Item(gg.expr(r.choice(ALLTYPES), r.randint(1, 2))))
    return q


# Known gpuext bugs that --skip-known-bugs (the 'make test' suite) keeps
# out of the verdicts; 'make fuzz' reports them like any other mismatch.
# Remove an entry once its bug is fixed.
KNOWN_BUGS = {
    # (none open)  Fixed so far: "minmax-const" (GpuAgg over planagg.c's
    # min/max InitPlans crashed: SELECT min(0) FROM fz_a) and
    # "float-overflow" (a -0.0 input hid the largest |input| of a float sum,
    # which returned -Infinity where PostgreSQL raises an overflow error).
}


def known_bug(v):
    """The KNOWN_BUGS entry that a failure verdict matches, or None."""
    return None


def known_bug_plan(plan):
    """The KNOWN_BUGS entry that a plan shows, or None."""
    return None


def generate(seed, i, has_gpu=False):
    r = random.Random("gpuext-fuzz:%s:%d" % (seed, i))
    tags = Counter()
    Gen.safe_default = r.random() < 0.5
    if Gen.safe_default:
        tags["safe mode (guards)"] += 1
    x = r.random()
    if x < 0.33:
        q = gen_scan(r, tags)
    elif x < 0.70:
        q = gen_agg(r, tags)
    else:
        q = gen_join(r, tags)
    q.settings = gen_settings(r, has_gpu)
    q.tags = tags
    return q


# ---------------------------------------------------------------------------
# comparing results
# ---------------------------------------------------------------------------

FLOAT4OID, FLOAT8OID = 700, 701
DBL_MAX = 1.7976931348623157e308


def canon_value(v):
    """A number's text as a canonical value (1.50 -> 1.5, -0 -> 0)."""
    if v is None:
        return None
    s = v.strip()
    if s in ("NaN", "Infinity", "-Infinity"):
        return s
    if re.fullmatch(r"-?\d+(\.\d*)?", s):
        if "." in s:
            s = s.rstrip("0").rstrip(".")
        if s in ("-0", ""):
            s = "0"
        return s
    try:
        f = float(s)
    except ValueError:
        return s
    if f == 0.0:
        return "0"
    return repr(f)


def to_float(v):
    if v is None:
        return None
    try:
        return float(v)
    except ValueError:
        return None


def canon_row(row, modes):
    """The row as compared exactly: 'value' columns canonical, 'approx'
    columns only NULL or not (their values are compared afterwards)."""
    out = []
    for j, v in enumerate(row):
        m = modes[j] if j < len(modes) else "exact"
        if m == "value":
            out.append(canon_value(v))
        elif m == "approx":
            out.append(None if v is None else "~")
        else:
            out.append(v)
    return tuple(out)


def float_sort_key(v):
    f = to_float(v)
    if f is None:
        return (0, 0.0)
    if math.isnan(f):
        return (1, 0.0)
    return (2, f)


def compare_rows(a, b, modes, types, bounds=None):
    """(equal, only_a, only_b): a and b as multisets of rows, compared by
    the column modes; bounds: (row key, column) -> scale of the tolerance."""
    ncols = len(a[0]) if a else (len(b[0]) if b else 0)
    if ncols != len(modes):
        modes = ["exact"] * ncols
    approx = [j for j in range(ncols) if modes[j] == "approx"]
    ra, rb = defaultdict(list), defaultdict(list)
    for row in a:
        ra[canon_row(row, modes)].append(row)
    for row in b:
        rb[canon_row(row, modes)].append(row)
    only_a, only_b = [], []
    for key in set(ra) | set(rb):
        xs, ys = ra.get(key, []), rb.get(key, [])
        if len(xs) != len(ys):
            only_a += xs
            only_b += ys
            continue
        if not approx:
            continue
        # rows with the same exact columns: pair them by their approximate values
        def fkey(row):
            return tuple(float_sort_key(row[j]) for j in approx)
        for x, y in zip(sorted(xs, key=fkey), sorted(ys, key=fkey)):
            for j in approx:
                tol = 1e-5 if (types and j < len(types) and types[j] == FLOAT4OID) else 1e-9
                bound = bounds.get((key, j), float("inf")) if bounds is not None else None
                if not floats_close(x[j], y[j], tol, bound):
                    only_a.append(x)
                    only_b.append(y)
                    break
    return (not only_a and not only_b), only_a, only_b


def floats_close(x, y, tol, bound=None):
    if x == y:
        return True
    if x is None or y is None:
        return False
    fx, fy = to_float(x), to_float(y)
    if fx is None or fy is None:
        return False
    if math.isnan(fx) or math.isnan(fy):
        return math.isnan(fx) and math.isnan(fy)
    if math.isinf(fx) or math.isinf(fy):
        # PostgreSQL raises rather than returning an infinite float sum of
        # finite values, and infinite inputs make it infinite in any order
        return fx == fy
    scale = max(abs(fx), abs(fy))
    if bound is not None:
        if math.isinf(bound) or math.isnan(bound):
            return True
        scale = max(scale, bound)
    return abs(fx - fy) <= tol * scale + 1e-300


# ---------------------------------------------------------------------------
# running and classifying
# ---------------------------------------------------------------------------

class Verdict:
    def __init__(self, cls, q, on=None, off=None, detail="", offloaded=False, plan="", repro=None):
        self.cls = cls          # same | same-error | order | rows | error | leaf | crash
        self.q = q
        self.on = on
        self.off = off
        self.detail = detail
        self.offloaded = offloaded
        self.plan = plan
        self.repro = repro      # the query that shows the failure (a leaf query for 'leaf')
        self.known = None       # the known bug that its plan shows (not run)

    @property
    def failed(self):
        return self.cls in ("rows", "error", "leaf", "crash")


class Runner:
    def __init__(self, conn, args, log):
        self.skip_known = args.skip_known_bugs
        self.conn = conn
        self.args = args
        self.log = log
        self.crashes = 0
        self.queries_run = 0

    def _exec(self, sql, fetch=True):
        o = self.conn.run(sql, fetch)
        if o.status == "crash":
            self.crashes += 1
            self.log("   (the server connection was lost: %s; reconnecting)" % (o.msg or "")[:60])
            try:
                self.conn.reconnect(wait=self.args.reconnect_wait)
            except ConnectionError as e:
                raise SystemExit("fuzz: cannot reconnect after a crash: %s" % e)
        return o

    def set(self, settings):
        if settings:
            self._exec("".join("SET %s;" % s for s in settings), fetch=False)

    def reset(self, settings):
        names = [s.split("=")[0].strip() for s in settings]
        if names:
            self._exec("".join("RESET %s;" % n for n in names), fetch=False)

    def run_pair(self, q, explain=True):
        """(gpuext outcome, stock outcome, offloaded, plan)."""
        sql = q.sql()
        self.queries_run += 1
        self.set(q.settings)
        self._exec("SET gpuext.enabled = on; SET gpuext.force_offload = on", fetch=False)
        plan = ""
        offloaded = False
        if explain or self.skip_known:
            p = self._exec("EXPLAIN (COSTS OFF) " + sql)
            if p.status == "ok":
                plan = "\n".join(r[0] for r in p.rows)
                offloaded = "GpuScan" in plan or "GpuAgg" in plan
            elif p.status == "crash":
                return p, Outcome("crash", msg="not run"), False, ""
            if self.skip_known and known_bug_plan(plan):
                self._exec("RESET gpuext.enabled; RESET gpuext.force_offload", fetch=False)
                self.reset(q.settings)
                return (Outcome("known", msg=known_bug_plan(plan)), Outcome("known", msg=known_bug_plan(plan)),
                        offloaded, plan)
        on = self._exec(sql)
        if on.status == "crash":
            return on, Outcome("crash", msg="not run"), offloaded, plan
        self._exec("SET gpuext.enabled = off", fetch=False)
        off = self._exec(sql)
        if off.status != "crash":
            self._exec("RESET gpuext.enabled; RESET gpuext.force_offload", fetch=False)
            self.reset(q.settings)
        return on, off, offloaded, plan

    def stock(self, q):
        """q run by stock PostgreSQL only."""
        self.set(q.settings)
        self._exec("SET gpuext.enabled = off", fetch=False)
        o = self._exec(q.sql())
        if o.status != "crash":
            self._exec("RESET gpuext.enabled", fetch=False)
            self.reset(q.settings)
        return o

    def bounds_for(self, q):
        """(row key, column) -> the scale of the tolerance of an approximate
        column: the same aggregate over |x| (stock), as the error of a
        float sum in any order is below n * epsilon * sum(|x|)."""
        modes = q.modes()
        approx = [j for j, m in enumerate(modes) if m == "approx"]
        o = self.stock(abs_query(q))
        bounds = {}
        if o.status != "ok":
            return bounds       # |x| overflows: any finite difference
        for row in o.rows:
            key = canon_row(row, modes)
            for j in approx:
                f = to_float(row[j])
                f = float("inf") if f is None or math.isnan(f) else abs(f)
                bounds[(key, j)] = max(bounds.get((key, j), 0.0), f)
        return bounds

    def float_group_check(self, q, on):
        """Stock raised 'value out of range: overflow', gpuext returned rows.
        Is gpuext's answer one that PostgreSQL could give in some order of
        the rows?  Not, for a group of finite values, when it is infinite or
        NaN (PostgreSQL raises instead of returning an infinite sum of
        finite values), when the values all have one sign and their sum is
        beyond the float range (every order overflows), nor, for avg, when
        their sum of squared deviations is (avg keeps it, Youngs-Cramer, and
        it only grows).  Returns what is wrong, or None."""
        idx = [j for j, it in enumerate(q.items)
               if it.mode == "approx" and it.expr.kind == "agg" and it.expr.kids[0] is not None]
        if not idx or q.distinct:
            return None
        sq = copy.copy(q)
        sq.settings = list(q.settings)
        sq.having = None
        sq.items = [Item(it.expr, it.mode, True) for it in q.items if it.key]
        nstats = 5
        for j in idx:
            arg, filt = q.items[j].expr.kids
            x = op("float8", "({})::float8", [arg])
            xn = op("numeric", "({})::float8::numeric", [arg])
            fk = [filt] if filt is not None else []
            sq.items.append(Item(E("agg", "int8", "", [x, op("bool", "(NOT (abs({}) < 'Infinity'::float8)%s)" % (
                " AND {}" if filt is not None else ""), [x] + fk)], func="count")))
            sq.items.append(Item(E("agg", "int8", "", [x, filt], func="count")))
            sq.items.append(Item(E("agg", "numeric", "", [xn, filt], func="sum")))
            sq.items.append(Item(E("agg", "numeric", "", [op("numeric", "({} * {})", [xn, xn]), filt], func="sum")))
            sq.items.append(Item(E("agg", "int8", "", [x, op("bool", "({} < 0%s)" % (
                " AND {}" if filt is not None else ""), [x] + fk)], func="count")))
        o = self.stock(sq)
        if o.status != "ok":
            return None
        nk = sum(1 for it in q.items if it.key)
        keymodes = [it.mode for it in q.items if it.key]
        stats = {}
        for row in o.rows:
            stats[canon_row(row[:nk], keymodes)] = row[nk:]
        dmax = Fraction(DBL_MAX) * Fraction(10001, 10000)
        for row in on.rows:
            key = canon_row(tuple(v for j, v in enumerate(row) if q.items[j].key), keymodes)
            st = stats.get(key)
            if st is None:
                continue
            for m, j in enumerate(idx):
                nonfinite, n, s, ss, neg = st[nstats * m:nstats * (m + 1)]
                if nonfinite != "0" or n in (None, "0") or s is None or ss is None:
                    continue
                n, s, ss, neg = int(n), Fraction(s), Fraction(ss), int(neg)
                f = to_float(row[j])
                func = q.items[j].expr.attrs["func"]
                what = "gpuext's %s (column c%d) is %s for %d finite values" % (func, j + 1, row[j], n)
                if f is not None and (math.isinf(f) or math.isnan(f)):
                    return what + ": PostgreSQL raises instead of returning that, in every order of the rows"
                if (neg == 0 or neg == n) and abs(s) > dmax:
                    return what + " of one sign whose sum is beyond the float range: PostgreSQL raises in every order"
                if func == "avg" and ss - s * s / n > dmax:
                    return (what + " whose sum of squared deviations, which avg keeps, is beyond the float range: "
                            "PostgreSQL raises in every order")
        return None

    def classify(self, q, explain=True):
        on, off, offloaded, plan = self.run_pair(q, explain)
        v = Verdict("same", q, on, off, offloaded=offloaded, plan=plan)
        if on.status == "known":
            v.cls = "known"
            v.known = on.msg
            v.detail = "not run: its plan shows this known bug"
            return v
        if on.status == "crash" or off.status == "crash":
            v.cls = "crash"
            v.detail = "the server crashed (%s)" % (on.msg if on.status == "crash" else off.msg)
            return v
        if on.status == "ok" and off.status == "ok":
            modes = q.modes()
            eq, oa, ob = compare_rows(on.rows, off.rows, modes, on.types)
            if not eq and "approx" in modes:
                eq, oa, ob = compare_rows(on.rows, off.rows, modes, on.types, self.bounds_for(q))
            if not eq:
                v.cls = "rows"
                v.detail = "gpuext %d rows, stock %d rows\n  only gpuext (%d): %s\n  only stock (%d): %s" % (
                    len(on.rows), len(off.rows), len(oa), fmt_rows(oa), len(ob), fmt_rows(ob))
            return v
        if on.status == "error" and off.status == "error" and on.state == off.state:
            v.cls = "same-error"
            return v
        if q.kind == "leaf":
            # one part of a query, free of AND/OR: its evaluation is defined
            if on.status == "error" and off.status == "error":
                v.cls = "order"
                v.detail = "gpuext %s; stock %s; different rows raise different errors" % (
                    on.brief(), off.brief())
            else:
                v.cls = "error"
                v.detail = "gpuext %s; stock %s" % (on.brief(), off.brief())
            return v
        # One side raised, or they raised different errors: is that explained
        # by an evaluation order that PostgreSQL leaves open?
        explained = set()
        for ctx, e, owner, tables in query_leaves(q):
            if not e.can_error():
                continue
            lq = leaf_query(ctx, e, owner, tables, q.settings)
            lon, loff, _, _ = self.run_pair(lq, explain=False)
            if lon.status == "crash" or loff.status == "crash":
                v.cls = "crash"
                v.repro = lq
                v.detail = "the server crashed running a part of the query alone"
                return v
            for o in (lon, loff):
                if o.status == "error":
                    explained.add(o.state)
            if ctx != "row":
                continue        # a HAVING over groups: its WHERE is part of it
            one_sided = (lon.status == "error") != (loff.status == "error")
            if one_sided or (lon.status == "ok" and loff.status == "ok" and lon.rows != loff.rows):
                v.cls = "leaf"
                v.repro = lq
                v.detail = ("gpuext %s; stock %s; but this part of the query, alone over all rows of its "
                            "tables, gives gpuext %s, stock %s" % (
                                on.brief(), off.brief(),
                                lon.brief() if lon.status != "ok" else lon.rows,
                                loff.brief() if loff.status != "ok" else loff.rows))
                return v
        if "22003" not in explained and "22003" in (on.state, off.state):
            for lq in float_sum_leaves(q):
                lq.settings = q.settings
                o = self.stock(lq)
                if (o.status == "error" and o.state == "22003") or (
                        o.status == "ok" and o.rows and o.rows[0][0] in ("Infinity", "NaN")):
                    # the sum (or avg's sum of squares) may overflow in some
                    # orders of the rows only; but not what gpuext returned
                    # when it could come from no order
                    bad = self.float_group_check(q, on) if on.status == "ok" else None
                    if bad:
                        v.cls = "error"
                        v.detail = "gpuext %s; stock %s; %s" % (on.brief(), off.brief(), bad)
                        return v
                    explained.add("22003")
                    break
        states = {o.state for o in (on, off) if o.status == "error"}
        if states <= explained:
            v.cls = "order"
            v.detail = ("gpuext %s; stock %s; raised by parts of the query whose evaluation order is not "
                        "defined (%s)" % (on.brief(), off.brief(), ", ".join(sorted(explained))))
        else:
            v.cls = "error"
            v.detail = "gpuext %s; stock %s; no part of the query alone raises %s" % (
                on.brief(), off.brief(), ", ".join(sorted(states - explained)))
        return v


def fmt_rows(rows, limit=5, width=300):
    out = []
    for r in rows[:limit]:
        s = "(" + ", ".join("NULL" if v is None else (v if len(v) < 60 else v[:57] + "...") for v in r) + ")"
        out.append(s[:width])
    more = "" if len(rows) <= limit else " ... (%d more)" % (len(rows) - limit)
    return " ".join(out) + more


# ---------------------------------------------------------------------------
# minimizing
# ---------------------------------------------------------------------------

def replace_in(root, target, repl):
    """A copy of the tree root with the node target replaced by repl."""
    if root is target:
        return repl
    if root is None:
        return None
    kids = [replace_in(k, target, repl) for k in root.kids]
    if all(a is b for a, b in zip(kids, root.kids)):
        return root
    n = copy.copy(root)
    n.kids = kids
    n.attrs = dict(root.attrs)
    return n


def simpler_literal(t):
    return lit(t, {"bool": "true", "int2": "1", "int4": "1", "int8": "1", "float4": "1.5",
                   "float8": "1.5", "numeric": "1.5", "date": "2000-01-01",
                   "timestamp": "2000-01-01 00:00:00", "timestamptz": "2000-01-01 00:00:00+00",
                   "text": "abc", "bpchar": "ab"}[t])


def candidates(q):
    """Smaller variants of q, most promising first."""
    for i in range(len(q.settings)):
        c = copy.copy(q)
        c.settings = q.settings[:i] + q.settings[i + 1:]
        yield c
    if q.having is not None:
        c = copy.copy(q)
        c.having = None
        yield c
    if q.distinct:
        c = copy.copy(q)
        c.distinct = False
        c.items = [Item(it.expr, "exact" if it.mode == "value" else it.mode, it.key) for it in q.items]
        yield c
    if q.where is not None:
        c = copy.copy(q)
        c.where = None
        yield c
    if len(q.items) > 1:
        for i in range(len(q.items)):
            c = copy.copy(q)
            c.items = q.items[:i] + q.items[i + 1:]
            yield c
    for i, t in q.tables.items():
        if isinstance(t, Query):
            for sub in candidates(t):
                c = copy.copy(q)
                c.tables = dict(q.tables)
                c.tables[i] = sub
                yield c
    # expressions: a node by one of its kids of the same type, by a literal
    for root, setter in q.exprs():
        for node in list(root.walk()):
            repls = []
            if node.kind == "agg":
                arg, filt = node.kids
                if filt is not None:
                    n2 = copy.copy(node)
                    n2.kids = [arg, None]
                    repls.append(n2)
            for k in node.kids:
                if k is not None and k.typ == node.typ and node.kind != "agg":
                    repls.append(k)
            if node.kind in ("op", "and", "or", "not", "between", "col") and node.typ in SQLTYPE:
                if node.kind != "lit":
                    repls.append(simpler_literal(node.typ))
            for rnode in repls:
                c = copy.copy(q)
                c.items = [Item(it.expr, it.mode, it.key) for it in q.items]
                c.tables = dict(q.tables)
                new_root = replace_in(root, node, rnode)
                # point the setter at the copy
                for croot, csetter in c.exprs():
                    if croot is root:
                        csetter(new_root)
                        break
                yield c


def minimize(runner, v, budget_s, log):
    """Shrink the failing query while it fails the same way."""
    q = v.repro if v.repro is not None else v.q
    best = v if v.repro is None else None
    if best is None:
        best = runner.classify(q, explain=False)
        if not best.failed:
            return v, 0
    deadline = time.time() + budget_s
    steps = 0
    improved = True
    while improved and time.time() < deadline:
        improved = False
        for c in candidates(best.q):
            if time.time() >= deadline:
                break
            try:
                sql = c.sql()
            except (KeyError, IndexError, ValueError):
                continue
            if len(sql) >= len(best.q.sql()) and c.settings == best.q.settings:
                continue
            steps += 1
            cv = runner.classify(c, explain=False)
            if cv.failed and cv.cls == best.cls:
                if cv.repro is not None:
                    # a failing leaf of the candidate: continue from the leaf
                    lv = runner.classify(cv.repro, explain=False)
                    if lv.failed:
                        cv = lv
                best = cv
                improved = True
                break
    return best, steps


# ---------------------------------------------------------------------------
# main
# ---------------------------------------------------------------------------

def selftest():
    """Checks of the comparison and of the leaf splitting (no database)."""
    ok = compare_rows([("1", "a"), ("1", "a"), ("2", None)], [("2", None), ("1", "a"), ("1", "a")],
                      ["exact", "exact"], None)[0]
    assert ok
    assert not compare_rows([("1",), ("1",)], [("1",)], ["exact"], None)[0]
    assert not compare_rows([("1.5",)], [("1.50",)], ["exact"], None)[0]
    assert compare_rows([("1.5",), ("-0",)], [("1.50",), ("0",)], ["value"], None)[0]
    assert not compare_rows([("1.5",)], [("1.51",)], ["value"], None)[0]
    assert compare_rows([("k", "1"), ("k", "1e-300")], [("k", "1.0000000000001"), ("k", "1e-300")],
                        ["exact", "approx"], [25, 701])[0]
    assert not compare_rows([("k", "1")], [("k", "1.001")], ["exact", "approx"], [25, 701])[0]
    assert not compare_rows([("k", "Infinity")], [("k", "1")], ["exact", "approx"], [25, 701])[0]
    assert compare_rows([("k", "NaN")], [("k", "NaN")], ["exact", "approx"], [25, 701])[0]
    # cancellation: within 1e-9 of sum(|x|) = 1e10
    assert compare_rows([("k", "0")], [("k", "1")], ["exact", "approx"], [25, 701],
                        {(("k", "~"), 1): 1e10})[0]
    a, b = col("x", "i4", "int4"), col("x", "i2", "int2")
    div = op("int4", "({} / {})", [a, b], err=True)
    cmp = op("bool", "({} > 1)", [div])
    case = op("bool", "(CASE WHEN {} THEN {} END)", [op("bool", "({} <> 0)", [b]), cmp])
    conj = op("bool", "({} AND {})", [case, op("bool", "({} BETWEEN {} AND {})", [a, b, div], kind="between")],
              kind="and")
    ls = leaves(conj)
    assert ls[0] is case and len(ls) == 3 and ls[2].kids[1] is div, [l.sql() for l in ls]
    assert canon_value("-0.000") == "0" and canon_value("1.50") == "1.5" and canon_value("-0") == "0"
    assert split_sql("SELECT 1;\n-- c\nCREATE FUNCTION f() RETURNS int LANGUAGE sql AS $fn$\nSELECT 1;\n$fn$;\n") == \
        ["SELECT 1;", "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS $fn$\nSELECT 1;\n$fn$;"]
    for i in range(50):
        generate("selftest", i).sql()


def split_sql(text):
    """Statements of a file: split at ; outside dollar quotes and comments."""
    stmts, cur, dollar = [], [], None
    for line in text.splitlines():
        s = line.strip()
        if dollar is None and (s.startswith("--") or not s):
            continue
        cur.append(line)
        for m in re.finditer(r"\$[A-Za-z_]*\$", line):
            tag = m.group(0)
            if dollar is None:
                dollar = tag
            elif dollar == tag:
                dollar = None
        if dollar is None and s.endswith(";"):
            stmts.append("\n".join(cur))
            cur = []
    if cur and "".join(cur).strip():
        stmts.append("\n".join(cur))
    return stmts


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", default="1", help="seed of the queries (default 1)")
    ap.add_argument("--queries", type=int, default=200, help="how many queries (default 200)")
    ap.add_argument("--start", type=int, default=0, help="number of the first query (default 0)")
    ap.add_argument("--only", type=int, action="append", help="run only query I (repeatable)")
    ap.add_argument("--host", default=os.environ.get("PGHOST", ""))
    ap.add_argument("--port", default=os.environ.get("PGPORT", ""))
    ap.add_argument("--user", default=os.environ.get("PGUSER", ""))
    ap.add_argument("--dbname", default=os.environ.get("PGDATABASE", "postgres"))
    ap.add_argument("--setup", action="store_true", help="create and fill the tables first (test/fuzz/setup.sql)")
    ap.add_argument("--out", help="write the report to this file too")
    ap.add_argument("--print", dest="print_only", action="store_true", help="print the queries, run nothing")
    ap.add_argument("--verbose", "-v", action="store_true", help="print every query and its verdict")
    ap.add_argument("--minimize-time", type=float, default=90, help="seconds to minimize each failure (default 90)")
    ap.add_argument("--max-minimize", type=int, default=5, help="failures to minimize (default 5)")
    ap.add_argument("--max-failures", type=int, default=50, help="stop after this many failures (default 50)")
    ap.add_argument("--skip-known-bugs", action="store_true",
                    help="do not count the bugs of KNOWN_BUGS as failures (print them as known)")
    ap.add_argument("--statement-timeout", default="60s")
    ap.add_argument("--reconnect-wait", type=float, default=120)
    args = ap.parse_args()

    selftest()
    ids = args.only if args.only else list(range(args.start, args.start + args.queries))
    if args.print_only:
        for i in ids:
            q = generate(args.seed, i)
            print("-- query %d (%s)\n%s%s;" % (i, q.kind, render_settings(q.settings), q.sql()))
        return 0

    if args.only:
        args.verbose = True
    outf = open(args.out, "w", encoding="utf-8") if args.out else None

    def log(s=""):
        print(s, flush=True)
        if outf:
            outf.write(s + "\n")
            outf.flush()

    conninfo = " ".join("%s='%s'" % (k, v.replace("'", "\\'")) for k, v in
                        (("host", args.host), ("port", str(args.port)), ("user", args.user),
                         ("dbname", args.dbname), ("application_name", "gpuext-fuzz")) if v)
    init = ["SET client_min_messages = warning", "SET statement_timeout = '%s'" % args.statement_timeout,
            "SET TimeZone = 'UTC'", "SET DateStyle = 'ISO, YMD'", "SET extra_float_digits = 1"]
    try:
        conn = Conn(conninfo, init)
    except ConnectionError as e:
        print("fuzz: cannot connect (%s): %s" % (conninfo, e), file=sys.stderr)
        return 2
    t_start = time.time()
    if args.setup:
        conn.run("CREATE EXTENSION IF NOT EXISTS gpuext")
        with open(os.path.join(HERE, "setup.sql"), encoding="utf-8") as f:
            for st in split_sql(f.read()):
                o = conn.run(st, fetch=False)
                if o.status != "ok":
                    print("fuzz: setup failed: %s\n%s" % (o.brief(), st[:300]), file=sys.stderr)
                    return 2
    o = conn.run("SELECT service_state FROM gpuext_status()")
    service = o.rows[0][0] if o.status == "ok" and o.rows else "unknown (%s)" % o.brief()
    has_gpu = service == "ready"
    t_setup = time.time() - t_start
    log("fuzz: seed %s, %d queries, gpuext service: %s" % (args.seed, len(ids), service))

    runner = Runner(conn, args, log)
    counts = Counter()
    kinds = Counter()
    kinds_off = Counter()
    nodes = Counter()
    tags = Counter()
    states = Counter()
    failures = []
    warnings = []
    slow = []
    known = Counter()
    t0 = time.time()
    for n, i in enumerate(ids):
        q = generate(args.seed, i, has_gpu)
        tags.update(q.tags)
        try:
            v = runner.classify(q)
        except SystemExit:
            raise
        kb = v.known or (known_bug(v) if v.failed and args.skip_known_bugs else None)
        if kb:
            v.cls = "known"
            known[kb] += 1
            log("KNOWN BUG %s in query %d: %s" % (kb, i, v.detail))
            log("   %s%s;" % (render_settings(q.settings), q.sql()))
        counts[v.cls] += 1
        kinds[q.kind] += 1
        if v.on is not None and v.off is not None:
            slow.append((v.on.secs, v.off.secs, i))
        if v.offloaded:
            kinds_off[q.kind] += 1
            for nd in ("GpuScan", "GpuAgg"):
                if nd in v.plan:
                    nodes[nd] += 1
        for o in (v.on, v.off):
            if o is not None and o.status == "error":
                states[o.state] += 1
        if args.verbose:
            log("-- query %d [%s%s] %s | gpuext %s | stock %s\n%s%s;" % (
                i, v.cls, ", offloaded" if v.offloaded else "", q.kind, v.on.brief(), v.off.brief(),
                render_settings(q.settings), q.sql()))
        if v.cls == "order":
            warnings.append((i, v))
            log("WARNING query %d: order-dependent error: %s" % (i, v.detail))
            log("   %s%s;" % (render_settings(q.settings), q.sql()))
        if v.failed:
            failures.append((i, v))
            log("")
            log("MISMATCH query %d (%s, %s; again: fuzz.py --seed %s --only %d): %s" % (
                i, v.cls, "offloaded" if v.offloaded else "not offloaded", args.seed, i, v.detail))
            log("   %s%s;" % (render_settings(q.settings), q.sql()))
            if len(failures) <= args.max_minimize:
                mv, steps = minimize(runner, v, args.minimize_time, log)
                mq = mv.q
                log("-- minimal reproducer (%d steps; tables: test/fuzz/setup.sql; query %d of seed %s):" % (
                    steps, i, args.seed))
                log("SET gpuext.force_offload = on;")
                for s in mq.settings:
                    log("SET %s;" % s)
                log("%s;" % mq.sql())
                log("SET gpuext.enabled = off;")
                log("%s;" % mq.sql())
                log("-- gpuext: %s" % (mv.on.brief() if mv.on else "?"))
                log("-- stock:  %s" % ("not run" if mv.off and mv.off.msg == "not run" else
                                       (mv.off.brief() if mv.off else "?")))
                for line in mv.detail.split("\n"):
                    log("-- " + line.strip())
                log("")
            if len(failures) >= args.max_failures:
                log("fuzz: stopping after %d failures" % len(failures))
                break
        if not args.verbose and (n + 1) % 100 == 0:
            print("   %d queries, %.1f s" % (n + 1, time.time() - t0), flush=True)
    elapsed = time.time() - t0
    nq = sum(counts.values())

    log("")
    log("fuzz summary: seed %s, %d queries in %.1f s (%.2f s/query; setup %.1f s); %d query pairs run "
        "(with the checks of parts of queries and the minimizing)"
        % (args.seed, nq, elapsed, elapsed / max(nq, 1), t_setup, runner.queries_run))
    log("  outcomes: %d same rows, %d same error, %d order-dependent errors (warnings), "
        "%d row mismatches, %d error mismatches, %d part-of-query mismatches, %d crashes"
        % (counts["same"], counts["same-error"], counts["order"], counts["rows"], counts["error"],
           counts["leaf"], counts["crash"]))
    if args.skip_known_bugs:
        log("  known bugs (not counted as failures): %s" % (
            ", ".join("%s %d" % (k, known[k]) for k in KNOWN_BUGS) or "none open"))
        for name, text in KNOWN_BUGS.items():
            log("    %s: %s" % (name, text))
    off = sum(kinds_off.values())
    log("  offloaded (EXPLAIN shows GpuScan or GpuAgg): %d of %d (%.0f%%); GpuScan in %d, GpuAgg in %d"
        % (off, nq, 100.0 * off / max(nq, 1), nodes["GpuScan"], nodes["GpuAgg"]))
    log("  by kind: " + ", ".join("%s %d/%d" % (k, kinds_off[k], kinds[k]) for k in sorted(kinds)))
    slow.sort(reverse=True)
    log("  time in queries: gpuext %.1f s, stock %.1f s; slowest with gpuext: %s" % (
        sum(s[0] for s in slow), sum(s[1] for s in slow),
        ", ".join("query %d %.2f s (stock %.2f s)" % (i, a, b) for a, b, i in slow[:3])))
    if states:
        log("  SQLSTATEs raised (either side): " + ", ".join("%s %d" % kv for kv in states.most_common()))
    log("  features: " + ", ".join("%s %d" % kv for kv in sorted(tags.items())))
    if failures:
        log("  FAILED queries: " + ", ".join("%d (%s)" % (i, v.cls) for i, v in failures))
    if outf:
        outf.close()
    conn.close()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
