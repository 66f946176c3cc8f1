#!/bin/bash
# Make a private, relocated copy of the PostgreSQL 15 installation, so that
# several checkouts can build, install and test at the same time without
# replacing each other's gpuext.so (PostgreSQL finds its share, lib and include
# folders relative to its binaries).  Prints the copy's pg_config; use it as
#   PG_CONFIG=$(bash test/private-pg.sh /opt/pg-mine) make test
#
#   usage: private-pg.sh DIR     (DIR is created; an existing copy is reused)
set -euo pipefail
DIR=${1:?usage: private-pg.sh DIR}
SRC_CONFIG=${PG_CONFIG:-pg_config}
BIN=$("$SRC_CONFIG" --bindir)              # /usr/lib/postgresql/15/bin
VER=$(basename "$(dirname "$BIN")")        # 15
if [ ! -x "$DIR/lib/postgresql/$VER/bin/pg_config" ]; then
  mkdir -p "$DIR/lib/postgresql" "$DIR/share/postgresql" "$DIR/include"
  cp -a "$(dirname "$BIN")" "$DIR/lib/postgresql/"
  cp -a "$("$SRC_CONFIG" --sharedir)" "$DIR/share/postgresql/"
  cp -a "$(dirname "$("$SRC_CONFIG" --includedir)")/postgresql" "$DIR/include/" 2>/dev/null ||
    cp -a "$("$SRC_CONFIG" --includedir)" "$DIR/include/postgresql"
  chmod -R a+rX "$DIR"
fi
"$DIR/lib/postgresql/$VER/bin/pg_config" --bindir >/dev/null
echo "$DIR/lib/postgresql/$VER/bin/pg_config"
