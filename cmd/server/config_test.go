package main

import (
	"testing"

	"backpressure/internal/store/pgstore"
)

func TestDatabaseSettings(t *testing.T) {
	const pooled = "postgres://app@pgbouncer:6432/bp"
	const direct = "postgres://app@db:5432/bp"
	tests := []struct {
		name       string
		env        map[string]string
		wantDirect string
		wantOpts   pgstore.Options
	}{
		{"defaults: the direct URL is the URL", map[string]string{"DATABASE_URL": pooled},
			pooled, pgstore.Options{QueryMode: pgstore.QueryModeCacheStatement}},
		{"behind PgBouncer", map[string]string{"DATABASE_URL": pooled, "DATABASE_DIRECT_URL": direct,
			"DATABASE_QUERY_MODE": "cache_describe", "DATABASE_MAX_CONNS": "8"},
			direct, pgstore.Options{MaxConns: 8, QueryMode: pgstore.QueryModeCacheDescribe}},
		{"no database", map[string]string{}, "", pgstore.Options{QueryMode: pgstore.QueryModeCacheStatement}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := loadConfig(func(k string) string { return tt.env[k] })
			if err != nil {
				t.Fatal(err)
			}
			if c.DatabaseDirectURL != tt.wantDirect {
				t.Errorf("DatabaseDirectURL = %q, want %q", c.DatabaseDirectURL, tt.wantDirect)
			}
			if c.Database != tt.wantOpts {
				t.Errorf("Database = %+v, want %+v", c.Database, tt.wantOpts)
			}
		})
	}
}
