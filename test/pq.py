"""A minimal libpq client through ctypes (Python standard library only),
shared by the benchmark (test/bench), the differential fuzzer (test/fuzz)
and the load and fault tests (test/load).

The benchmark times queries as a client sees them: PQexec of the query
until its whole result sits in the client's memory.  Going through libpq
directly avoids a psql process per query and psql's formatting of large
results, which would otherwise cost more wall time than the queries.
ctypes releases the GIL during foreign calls, so threads can load data
over several connections at once.
"""
import ctypes
import ctypes.util
import os
import subprocess
import time

_lib = None

PGRES_COMMAND_OK = 1
PGRES_TUPLES_OK = 2
CONNECTION_OK = 0
PG_DIAG_SQLSTATE = ord("C")


class PGError(Exception):
    """An error reported by the server or by libpq.  sqlstate: the server's
    SQLSTATE, None when libpq raised it (a lost connection, for one)."""

    def __init__(self, msg, sqlstate=None):
        super().__init__(msg)
        self.sqlstate = sqlstate


def _which(prog):
    for d in os.environ.get("PATH", "").split(os.pathsep):
        p = os.path.join(d, prog)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def _find_libpq():
    """libpq: as named by BENCH_LIBPQ or FUZZ_LIBPQ, else the one psql uses."""
    cands = [os.environ[v] for v in ("BENCH_LIBPQ", "FUZZ_LIBPQ") if os.environ.get(v)]
    name = ctypes.util.find_library("pq")
    if name:
        cands.append(name)
    for bindir in (os.environ.get("BINDIR"), os.path.dirname(_which("psql") or "")):
        if not bindir:
            continue
        try:
            out = subprocess.run(["ldd", os.path.join(bindir, "psql")], capture_output=True,
                                 text=True, timeout=20).stdout
            for line in out.splitlines():
                if "libpq" in line and "=>" in line:
                    cands.append(line.split("=>")[1].split()[0])
        except (OSError, subprocess.SubprocessError):
            pass
    cands += ["libpq.so.5", "libpq.so"]
    last = None
    for c in cands:
        try:
            return ctypes.CDLL(c)
        except OSError as e:
            last = e
    raise PGError("cannot load libpq (set BENCH_LIBPQ or FUZZ_LIBPQ): %s" % last)


def keep_freed_memory():
    """Have this process's C library keep the memory it frees (glibc's
    mallopt: no trimming of the heap's top, no mmap for blocks under 32 MB)
    so that a large result's libpq blocks are reused by the next result
    instead of returned to the kernel and faulted in again.  For the
    benchmark's client: a query sending 600 000 rows (cm_rows_virg) took
    11 745 page faults in the client each run, 174 ms (167-252) against
    138 ms (136-141) without them on the 2-core machine, the same for every
    plan of the query: noise in the plans' comparison, larger on a virtual
    machine.  Returns whether the C library took the settings."""
    try:
        libc = ctypes.CDLL(None)
        m_trim_threshold, m_top_pad, m_mmap_threshold = -1, -2, -3
        return bool(libc.mallopt(m_mmap_threshold, 32 << 20) and
                    libc.mallopt(m_trim_threshold, 1 << 30) and
                    libc.mallopt(m_top_pad, 64 << 20))
    except (OSError, AttributeError):
        return False


def lib():
    global _lib
    if _lib is None:
        L = _find_libpq()
        vp, cp, ci = ctypes.c_void_p, ctypes.c_char_p, ctypes.c_int
        for fn, res, args in [
            ("PQconnectdb", vp, [cp]),
            ("PQstatus", ci, [vp]),
            ("PQerrorMessage", cp, [vp]),
            ("PQfinish", None, [vp]),
            ("PQexec", vp, [vp, cp]),
            ("PQresultStatus", ci, [vp]),
            ("PQresultErrorMessage", cp, [vp]),
            ("PQresultErrorField", cp, [vp, ci]),
            ("PQntuples", ci, [vp]),
            ("PQnfields", ci, [vp]),
            ("PQfname", cp, [vp, ci]),
            ("PQftype", ctypes.c_uint, [vp, ci]),
            ("PQgetvalue", cp, [vp, ci, ci]),
            ("PQgetisnull", ci, [vp, ci, ci]),
            ("PQclear", None, [vp]),
            ("PQbackendPID", ci, [vp]),
        ]:
            f = getattr(L, fn)
            f.restype = res
            f.argtypes = args
        _lib = L
    return _lib


class Result:
    """Rows of a finished query (values as str or None), with column types."""

    def __init__(self, res):
        L = lib()
        self.ntuples = L.PQntuples(res)
        self.nfields = L.PQnfields(res)
        self.names = [L.PQfname(res, j).decode() for j in range(self.nfields)]
        self.types = [int(L.PQftype(res, j)) for j in range(self.nfields)]
        self._res = res

    def rows(self, limit=None):
        L = lib()
        n = self.ntuples if limit is None else min(limit, self.ntuples)
        out = []
        for i in range(n):
            row = []
            for j in range(self.nfields):
                if L.PQgetisnull(self._res, i, j):
                    row.append(None)
                else:
                    row.append(L.PQgetvalue(self._res, i, j).decode())
            out.append(tuple(row))
        return out


class Conn:
    def __init__(self, conninfo):
        L = lib()
        self.conn = L.PQconnectdb(conninfo.encode())
        if not self.conn or L.PQstatus(self.conn) != CONNECTION_OK:
            msg = L.PQerrorMessage(self.conn).decode(errors="replace") if self.conn else "out of memory"
            if self.conn:
                L.PQfinish(self.conn)
            self.conn = None
            raise PGError("connection failed: " + msg.strip())

    def _exec(self, sql):
        L = lib()
        if self.conn is None:
            raise PGError("connection is closed")
        res = L.PQexec(self.conn, sql.encode())
        if not res:
            raise PGError(L.PQerrorMessage(self.conn).decode(errors="replace").strip())
        st = L.PQresultStatus(res)
        if st not in (PGRES_COMMAND_OK, PGRES_TUPLES_OK):
            msg = L.PQresultErrorMessage(res).decode(errors="replace").strip()
            state = L.PQresultErrorField(res, PG_DIAG_SQLSTATE)
            L.PQclear(res)
            raise PGError(msg or "query failed (status %d)" % st,
                          state.decode() if state else None)
        return res

    def execute(self, sql):
        """Run statements; discard any result."""
        lib().PQclear(self._exec(sql))

    def query(self, sql, limit=None):
        """(Result metadata, rows) of the last statement of sql."""
        L = lib()
        res = self._exec(sql)
        try:
            r = Result(res)
            rows = r.rows(limit)
            r._res = None
            return r, rows
        finally:
            L.PQclear(res)

    def rows(self, sql):
        return self.query(sql)[1]

    def one(self, sql):
        rows = self.rows(sql)
        return rows[0][0] if rows and rows[0] else None

    def timed(self, sql):
        """Wall seconds until the whole result is in the client, and its row count."""
        L = lib()
        t0 = time.perf_counter()
        res = self._exec(sql)
        t1 = time.perf_counter()
        n = L.PQntuples(res)
        L.PQclear(res)
        return t1 - t0, n

    def backend_pid(self):
        return lib().PQbackendPID(self.conn)

    def alive(self):
        """Whether the connection is still usable (libpq's status is OK)."""
        return self.conn is not None and lib().PQstatus(self.conn) == CONNECTION_OK

    def close(self):
        if self.conn:
            lib().PQfinish(self.conn)
            self.conn = None

    def __enter__(self):
        return self

    def __exit__(self, *a):
        self.close()
