package pgstore

import (
	"errors"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5/pgtype"
)

// uuidCodec is pgx's uuid codec taught google/uuid's type, so that a uuid.UUID goes to
// and from PostgreSQL as the 16 bytes it is. Without it pgx reaches uuid.UUID through its
// database/sql interfaces: every argument is formatted as text by Value and parsed back,
// and every scanned one is formatted as text and parsed by Scan (a board page has two per
// entry). Anything else it leaves to pgx's own codec.
type uuidCodec struct{ pgtype.UUIDCodec }

// registerUUID makes m use uuidCodec for PostgreSQL's uuid type.
func registerUUID(m *pgtype.Map) {
	m.RegisterType(&pgtype.Type{Name: "uuid", OID: pgtype.UUIDOID, Codec: uuidCodec{}})
}

func (c uuidCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	switch value.(type) {
	case uuid.UUID:
		if format == pgtype.BinaryFormatCode {
			return encodeUUIDBinary{}
		}
		return encodeUUIDText{}
	}
	return c.UUIDCodec.PlanEncode(m, oid, format, value)
}

type encodeUUIDBinary struct{}

func (encodeUUIDBinary) Encode(value any, buf []byte) ([]byte, error) {
	id := value.(uuid.UUID)
	return append(buf, id[:]...), nil
}

type encodeUUIDText struct{}

func (encodeUUIDText) Encode(value any, buf []byte) ([]byte, error) {
	return append(buf, value.(uuid.UUID).String()...), nil
}

func (c uuidCodec) PlanScan(m *pgtype.Map, oid uint32, format int16, target any) pgtype.ScanPlan {
	switch target.(type) {
	case *uuid.UUID:
		if format == pgtype.BinaryFormatCode {
			return scanUUIDBinary{}
		}
		return scanUUIDText{}
	}
	return c.UUIDCodec.PlanScan(m, oid, format, target)
}

type scanUUIDBinary struct{}

// NULL scans as uuid.Nil, as uuid.UUID's own Scan has it.
func (scanUUIDBinary) Scan(src []byte, dst any) error {
	if src == nil {
		*dst.(*uuid.UUID) = uuid.Nil
		return nil
	}
	if len(src) != len(uuid.UUID{}) {
		return errors.New("invalid length for a uuid")
	}
	copy(dst.(*uuid.UUID)[:], src)
	return nil
}

type scanUUIDText struct{}

func (scanUUIDText) Scan(src []byte, dst any) error {
	if src == nil {
		*dst.(*uuid.UUID) = uuid.Nil
		return nil
	}
	id, err := uuid.ParseBytes(src)
	if err != nil {
		return err
	}
	*dst.(*uuid.UUID) = id
	return nil
}
