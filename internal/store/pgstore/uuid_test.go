package pgstore_test

import (
	"testing"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"backpressure/internal/store/pgstore"
)

// uuid.UUID goes to and from PostgreSQL unchanged in both query modes, in binary and in
// text, NULL scanning as uuid.Nil (as uuid.UUID's own Scan has it) and a nil *uuid.UUID
// going as NULL.
func TestUUIDCodec(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{pgstore.QueryModeCacheStatement, pgstore.QueryModeCacheDescribe} {
		t.Run(mode, func(t *testing.T) {
			s := openWith(t, 0, pgstore.Options{QueryMode: mode})
			ctx := t.Context()
			id := uuid.MustParse("01936b2e-7c4a-7d3e-8f00-1234567890ab")
			var bin, text, null uuid.UUID
			var ptr *uuid.UUID
			var asText string
			err := pgstore.Pool(s).QueryRow(ctx, `SELECT $1::uuid, $1::uuid::text::uuid, NULL::uuid, $2::uuid, $1::uuid::text`,
				id, (*uuid.UUID)(nil)).Scan(&bin, &text, &null, &ptr, &asText)
			if err != nil {
				t.Fatal(err)
			}
			if bin != id || text != id || null != uuid.Nil || ptr != nil || asText != id.String() {
				t.Errorf("got %v, %v, %v, %v, %q; want %v twice, the nil uuid, nil and %q", bin, text, null, ptr, asText, id, id.String())
			}
			var fromText uuid.UUID
			if err := pgstore.Pool(s).QueryRow(ctx, `SELECT $1::text::uuid`, id.String()).Scan(&fromText); err != nil || fromText != id {
				t.Errorf("text argument: got %v, %v; want %v", fromText, err, id)
			}
			var textResult uuid.UUID
			if err := pgstore.Pool(s).QueryRow(ctx, `SELECT $1::uuid`, pgx.QueryResultFormats{pgx.TextFormatCode}, id).Scan(&textResult); err != nil || textResult != id {
				t.Errorf("text result: got %v, %v; want %v", textResult, err, id)
			}
		})
	}
}
