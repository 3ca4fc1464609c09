#!/bin/sh
# Run once by the postgres image when its data directory is first made
# (/docker-entrypoint-initdb.d, deploy/compose.yaml): the service's own role
# (STT_DB_USER, default stt), not a superuser, owning the one database it uses
# (STT_DB_NAME, default stt). As its owner it may create the tables, triggers
# and functions its migrations make, and no more. Also run by
# test/http/deploy.test.ts against a temporary PostgreSQL.
set -eu
: "${STT_DB_PASSWORD:?set STT_DB_PASSWORD}"
psql -v ON_ERROR_STOP=1 -v role="${STT_DB_USER:-stt}" -v db="${STT_DB_NAME:-stt}" -v password="$STT_DB_PASSWORD" \
  --username "${POSTGRES_USER:-postgres}" --dbname "${POSTGRES_DB:-postgres}" <<'SQL'
CREATE ROLE :"role" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD :'password';
CREATE DATABASE :"db" OWNER :"role";
REVOKE ALL ON DATABASE :"db" FROM PUBLIC;
SQL
