# PgBouncer from Debian's package, the same one scripts/cluster.sh runs.
FROM debian:12-slim
RUN apt-get update && apt-get install -y --no-install-recommends pgbouncer && rm -rf /var/lib/apt/lists/* \
    && (id postgres >/dev/null 2>&1 || useradd --system --no-create-home postgres)
USER postgres
EXPOSE 6432
ENTRYPOINT ["/usr/sbin/pgbouncer", "/etc/pgbouncer/pgbouncer.ini"]
