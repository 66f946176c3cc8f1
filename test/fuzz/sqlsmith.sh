#!/bin/bash
# make fuzz-sqlsmith: SQLsmith (https://github.com/anse1/sqlsmith, Debian
# package sqlsmith) sends random statements built from the catalog (every
# type, operator, function and aggregate it finds) to a database with gpuext,
# the tables of test/fuzz/setup.sql (every type gpuext supports) and
# gpuext.force_offload = on.  Ordinary SQL errors are expected and only
# counted (SQLsmith 1.4 misreads PostgreSQL 14's polymorphic multirange types:
# about 60% of its statements fail in parse analysis).  A server crash is a
# failure, and so is a suspicious error (SQLSTATE class XX or 58, or a
# message about the GPU or gpuext) that the same statement raises again with
# gpuext on but not with gpuext.enabled = off.
#
#   make fuzz-sqlsmith [N=1000] [SEED=1]
#   bash test/fuzz/sqlsmith.sh
#
# Two passes, N statements each, both with seed SEED:
#   user      --exclude-catalog: the fz_* tables (and gpuext's two views)
#             only, so every table scanned is one gpuext can offload
#   catalog   the system catalogs and information_schema too: more types
#             and shapes around the fz_* tables
# SQLsmith runs as the unprivileged role 'sqlsmith' (it calls any function it
# finds; its README asks for such a role) with SELECT, INSERT, UPDATE and
# DELETE on the fz_* tables; it rolls back every statement and sets
# statement_timeout = 1s in its session (the database's 5s bounds the reruns).
#
# Report, per pass: statements run and time; gpuext's batch and fallback
# counters (gpuext_status()), to show that gpuext ran; errors by SQLSTATE
# (from SQLsmith's --log-to database); broken connections; crashes: server
# restarts in the server log ("terminated by signal", "all server processes
# terminated") or a new postmaster.  For each crash: the statement (the log's
# "Failed process was running:", complete with track_activity_query_size =
# 64kB), its rerun with gpuext on and off, and a backtrace of the core file
# (gdb).  Exit status: 0 clean, 1 a crash, a gpuext-only suspicious error or
# SQLsmith failing, 2 setup failure.  Files in $WORK/sqlsmith/: PASS.log
# (SQLsmith's output), PASS-errors.txt, PASS-crash-K.sql, PASS-error-K.sql;
# the cluster folder (data with core files, server.log) is kept when the run
# fails or SQLSMITH_KEEP=1.
#
# Environment:
#   SQLSMITH_N, SQLSMITH_SEED  queries per pass and seed (make's N and SEED;
#                         default 1000, 1)
#   SQLSMITH_PASSES       passes to run (default "user catalog")
#   SQLSMITH              the sqlsmith binary (default: on PATH)
#   SQLSMITH_CLUSTER=DIR, SQLSMITH_PORT=PORT
#                         use this running cluster (socket in DIR, DIR/data,
#                         DIR/server.log: test/run-tests.sh's) instead of
#                         building and starting one; the install lock is then
#                         the caller's business
#   FUZZ_BUILD=0          use the installed gpuext as it is (no build/install)
#   PG_CONFIG, GPUEXT_TEST_ENGINE, GPUEXT_TEST_PORT: as for make fuzz
#                         (test/cluster.sh)
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
. test/cluster.sh

N=${SQLSMITH_N:-}
SEED=${SQLSMITH_SEED:-}
[ -n "$N" ] || N=1000
[ -n "$SEED" ] || SEED=1
PASSES=${SQLSMITH_PASSES:-user catalog}
SQLSMITH=${SQLSMITH:-sqlsmith}
DB=gpuext_sqlsmith
LOGDB=gpuext_sqlsmith_log
ROLE=sqlsmith

if ! command -v "$SQLSMITH" >/dev/null 2>&1; then
  echo "sqlsmith not installed (apt-get install sqlsmith)"
  exit 2
fi

if [ -n "${SQLSMITH_CLUSTER:-}" ]; then
  WORK=$SQLSMITH_CLUSTER
  PORT=${SQLSMITH_PORT:?SQLSMITH_PORT}
  PGDATA=$WORK/data
  OWN_CLUSTER=0
else
  install_lock
  if [ "${FUZZ_BUILD:-1}" != 0 ]; then
    build_install /tmp/gpuext-sqlsmith-build.log || exit 2
  fi
  # core files (pg_ctl -c) for backtraces; the whole query of a crashed backend
  cluster_start gpuext-sqlsmith "track_activity_query_size = '64kB'" || exit 2
  OWN_CLUSTER=1
fi
OUT=$WORK/sqlsmith
mkdir -p "$OUT"
SERVER_LOG=$WORK/server.log

# psql as the superuser $RUNAS (-v ON_ERROR_STOP) and as the role
sql() { "$BINDIR/psql" -X -q -t -A -h "$WORK" -p "$PORT" -U "$RUNAS" -v ON_ERROR_STOP=1 "$@" 9>&-; }
sql_role() { "$BINDIR/psql" -X -q -t -A -h "$WORK" -p "$PORT" -U "$ROLE" -d "$DB" "$@" 9>&-; }
postmaster_pid() { head -n 1 "$PGDATA/postmaster.pid" 2>/dev/null; }
wait_ready() {
  for _ in $(seq 1 120); do
    "$BINDIR/pg_isready" -q -h "$WORK" -p "$PORT" && sql -d postgres -c "SELECT 1" >/dev/null 2>&1 && return 0
    sleep 0.5
  done
  return 1
}

echo "== setting up $DB: gpuext, test/fuzz/setup.sql, role $ROLE, gpuext.force_offload = on"
if ! sql -d postgres >"$OUT/setup.log" 2>&1 <<EOS ||
DROP DATABASE IF EXISTS $DB;
DROP DATABASE IF EXISTS $LOGDB;
DROP ROLE IF EXISTS $ROLE;
CREATE ROLE $ROLE LOGIN;
CREATE DATABASE $DB;
CREATE DATABASE $LOGDB;
ALTER DATABASE $DB SET gpuext.force_offload = on;
ALTER DATABASE $DB SET gpuext.device = '$ENGINE';
ALTER DATABASE $DB SET statement_timeout = '5s';
EOS
   ! sql -d "$DB" -c "CREATE EXTENSION IF NOT EXISTS gpuext" -f test/fuzz/setup.sql \
       -c "GRANT SELECT, INSERT, UPDATE, DELETE ON fz_a, fz_b, fz_empty TO $ROLE" >>"$OUT/setup.log" 2>&1 ||
   ! sql -d "$LOGDB" >>"$OUT/setup.log" 2>&1 <<EOS
-- what sqlsmith --log-to writes (its log.sql, trimmed)
CREATE TABLE instance (id bigserial PRIMARY KEY, rev text, target text, hostname text,
                       version text, seed text, t timestamptz DEFAULT now());
CREATE TABLE error (id bigint, msg text, query text, sqlstate text, t timestamptz DEFAULT now());
CREATE TABLE stat (id bigint, generated bigint, level float8, nodes float8, retries float8,
                   impedance text, updated timestamptz);
EOS
then
  cat "$OUT/setup.log"
  exit 2
fi

# SQLSTATE classes (PostgreSQL's errcodes.txt), for the report
CLASSES="('00','successful completion'),('01','warning'),('02','no data'),
('03','statement not yet complete'),('08','connection exception'),('09','triggered action'),
('0A','feature not supported'),('0B','invalid transaction initiation'),('0F','locator'),
('0L','invalid grantor'),('0P','invalid role'),('0Z','diagnostics'),('20','case not found'),
('21','cardinality violation'),('22','data exception'),('23','integrity constraint'),
('24','invalid cursor state'),('25','invalid transaction state'),('26','invalid statement name'),
('27','triggered data change'),('28','invalid authorization'),('2B','dependent privilege'),
('2D','invalid transaction termination'),('2F','SQL routine'),('34','invalid cursor name'),
('38','external routine'),('39','external routine invocation'),('3B','savepoint'),
('3D','invalid catalog name'),('3F','invalid schema name'),('40','transaction rollback'),
('42','syntax error or access rule'),('44','WITH CHECK OPTION'),('53','insufficient resources'),
('54','program limit exceeded'),('55','object not in prerequisite state'),
('57','operator intervention'),('58','system error'),('72','snapshot failure'),
('F0','configuration file'),('HV','foreign data wrapper'),('P0','PL/pgSQL'),('XX','internal error')"

# rerun FILE ENABLED: the first error line ("ERROR:  SQLSTATE: message") of
# the query in FILE with gpuext.enabled = ENABLED, "ok", or "connection lost"
rerun() {
  local out
  out=$({ echo "\\set VERBOSITY verbose"; echo "SET gpuext.enabled = $2;"; echo "BEGIN;"
          cat "$1"; echo ";"; echo "ROLLBACK;"; } | sql_role -v ON_ERROR_STOP=1 -o /dev/null 2>&1)
  if grep -q "ERROR:" <<<"$out"; then
    grep -m 1 "ERROR:" <<<"$out" | sed 's/^psql:[^ ]* //' | cut -c1-200
  elif grep -qiE "connection|terminated" <<<"$out"; then
    echo "connection lost (crash)"
  else
    echo "ok"
  fi
}

# an error that may be gpuext's: SQLSTATE class XX (internal) or 58 (system:
# gpuext's device errors), or a message about the GPU or gpuext (but not a
# permission error on one of its objects)
suspicious() {
  [[ "$1" =~ ^ERROR:\ \ (XX|58) ]] || { [[ "${1,,}" == *gpu* ]] && [[ "$1" != *" 42501: "* ]]; }
}
# an error line with its numbers blanked (sizes, values)
norm() { sed -E 's/[0-9]+/N/g' <<<"$1"; }
gpuext_counters() {
  sql -d "$DB" -F ' ' -c "SELECT requests_served, cpu_batches + gpu_batches, fallbacks FROM gpuext_status()"
}

failed=0
total_queries=0
total_crashes=0
core_marker=$OUT/.start
touch "$core_marker"
for pass in $PASSES; do
  case $pass in
    user) excl=(--exclude-catalog) ;;
    catalog) excl=() ;;
    *) echo "unknown pass '$pass' (user, catalog)"; exit 2 ;;
  esac
  log_at=$(stat -c %s "$SERVER_LOG")
  pid_before=$(postmaster_pid)
  read -r req0 bat0 fb0 < <(gpuext_counters)
  echo "== pass $pass: sqlsmith ${excl[*]} --seed=$SEED --max-queries=$N"
  t0=$(date +%s)
  timeout $((300 + 2 * N)) "$SQLSMITH" --verbose "${excl[@]}" --seed="$SEED" --max-queries="$N" \
    --target="host=$WORK port=$PORT dbname=$DB user=$ROLE" \
    --log-to="host=$WORK port=$PORT dbname=$LOGDB user=$RUNAS" >"$OUT/$pass.log" 2>&1 9>&-
  rc=$?
  secs=$(( $(date +%s) - t0 ))
  queries=$(grep -E "^queries: [0-9]+" "$OUT/$pass.log" | tail -n 1 | cut -d' ' -f2)
  broken=$(grep -E '^[.etsc]+$' "$OUT/$pass.log" | tr -cd c | wc -c)
  echo "   ${queries:-?} queries in ${secs}s (sqlsmith exit status $rc), $broken broken connections"
  total_queries=$((total_queries + ${queries:-0}))
  if [ $rc != 0 ]; then
    failed=1
    [ $rc = 124 ] && echo "   FAILED: sqlsmith did not finish in $((300 + 2 * N))s (a hang?)"
    [ $rc != 124 ] && { echo "   FAILED: sqlsmith failed:"; tail -n 20 "$OUT/$pass.log" | sed 's/^/     /'; }
  fi

  # crashes: the server log since this pass began, and the postmaster's pid
  wait_ready
  crashes=$(crash_lines "$SERVER_LOG" "$log_at")
  ncrash=$(grep -c "terminated by signal\|was terminated by exception" <<<"$crashes")
  [ "$(postmaster_pid)" != "$pid_before" ] && { ncrash=$((ncrash + 1)); crashes+=$'\n'"postmaster restarted: pid $pid_before -> $(postmaster_pid)"; }
  total_crashes=$((total_crashes + ncrash))
  echo "   crashes: $ncrash"
  read -r req1 bat1 fb1 < <(gpuext_counters)
  if [ "$ncrash" = 0 ]; then
    echo "   gpuext: $((req1 - req0)) service requests, $((bat1 - bat0)) batches, $((fb1 - fb0)) fallbacks"
  else
    echo "   gpuext: counters reset by the crash"
  fi

  # errors by SQLSTATE
  id=$(sql -d "$LOGDB" -c "SELECT max(id) FROM instance")
  sql -d "$LOGDB" -c "
    WITH e AS (SELECT sqlstate, split_part(msg, E'\n', 1) AS m FROM error WHERE id = $id),
         c(cls, name) AS (VALUES $CLASSES)
    SELECT format('   %6s  %s %-28s %s%s', count(*), e.sqlstate, coalesce(c.name, '?'),
                  left(mode() WITHIN GROUP (ORDER BY m), 100),
                  CASE WHEN count(DISTINCT m) > 1 THEN format(' (+%s more)', count(DISTINCT m) - 1) END)
    FROM e LEFT JOIN c ON c.cls = left(e.sqlstate, 2)
    GROUP BY e.sqlstate, c.name ORDER BY count(*) DESC, e.sqlstate" >"$OUT/$pass-errors.txt"
  nerr=$(sql -d "$LOGDB" -c "SELECT count(*) FROM error WHERE id = $id")
  echo "   errors: $nerr of ${queries:-?} (by SQLSTATE, with the most frequent message):"
  cat "$OUT/$pass-errors.txt"
  [ "$ncrash" != 0 ] && echo "   (SQLsmith's connection to its error log dies in a crash: the counts may be partial)"

  # suspicious errors: again with gpuext on, and with gpuext.enabled = off
  k=0
  while IFS= read -r -d '' q; do
    k=$((k + 1))
    f=$OUT/$pass-error-$k.sql
    printf '%s\n' "$q" >"$f"
    on=$(rerun "$f" on)
    off=$(rerun "$f" off)
    echo "   suspicious error $k ($f):"
    echo "     gpuext on:  $on"
    echo "     gpuext off: $off"
    if [[ "$on$off" == *"connection lost"* ]]; then
      echo "     FAILED: the rerun crashed the server"
      failed=1
      wait_ready
    elif suspicious "$on" && [ "$(norm "$on")" != "$(norm "$off")" ]; then
      # once more each (TABLESAMPLE and random() make some statements vary)
      on2=$(rerun "$f" on)
      off2=$(rerun "$f" off)
      if [ "$(norm "$on2")" = "$(norm "$on")" ] && [ "$(norm "$off2")" != "$(norm "$on")" ]; then
        echo "     FAILED: with gpuext only (again: on $on2; off $off2)"
        failed=1
      else
        echo "     not reproduced (again: on $on2; off $off2)"
      fi
    fi
  done < <(sql -d "$LOGDB" -0 -c "
    SELECT DISTINCT ON (sqlstate, split_part(msg, E'\n', 1)) query
    FROM error WHERE id = $id
      AND (sqlstate ~ '^(XX|58)' OR (split_part(msg, E'\n', 1) ~* 'gpu' AND sqlstate <> '42501'))
    ORDER BY sqlstate, split_part(msg, E'\n', 1), length(query)")

  if [ "$ncrash" != 0 ]; then
    failed=1
    echo "   FAILED: server crashes; server log:"
    echo "$crashes" | head -n 20 | sed 's/^/     /'
    # the queries, from "Failed process was running:" and its continuation lines (tab)
    tail -c +"$((log_at + 1))" "$SERVER_LOG" | awk -v out="$OUT/$pass-crash-" '
      q && /^\t/ { sub(/^\t/, ""); print >> f; next }
      q { close(f); q = 0 }
      /Failed process was running: / { n++; f = out n ".sql"; sub(/.*Failed process was running: /, "");
                                      print > f; q = 1 }'
    for f in "$OUT/$pass"-crash-*.sql; do
      [ -f "$f" ] || continue
      echo "   crash query ($f):"
      sed 's/^/     | /' "$f" | head -n 300
      echo "     rerun, gpuext on:  $(rerun "$f" on)"; wait_ready
      echo "     rerun, gpuext off: $(rerun "$f" off)"; wait_ready
    done
  fi
done

# backtraces of the core files the crashes left (pg_ctl -c, core_pattern 'core')
if [ "$total_crashes" != 0 ] && command -v gdb >/dev/null 2>&1; then
  for core in $(find "$PGDATA" -maxdepth 1 -name 'core*' -newer "$core_marker" 2>/dev/null | head -n 3); do
    echo "== backtrace: $core"
    gdb -batch -q -ex bt "$BINDIR/postgres" "$core" 2>/dev/null | grep -E "^#" | awk '!seen[$0]++' | head -n 40 | tee "$core.bt"
  done
fi

echo "== sqlsmith: $total_queries queries, $total_crashes crashes ($OUT)"
if [ $OWN_CLUSTER = 1 ]; then
  cluster_stop
  trap - EXIT
  if [ $failed = 0 ] && [ "${SQLSMITH_KEEP:-0}" != 1 ]; then
    rm -rf "$WORK"
  else
    echo "== cluster folder (data, server.log, sqlsmith/) kept: $WORK"
  fi
fi
exit $failed
