package game

import (
	"errors"
	"fmt"
)

// Error codes. They name what went wrong from the caller's point of view, not
// where; the HTTP layer maps each to exactly one status in one table.
const (
	ENOTFOUND     = "not_found"
	ECONFLICT     = "conflict"
	EINVALID      = "invalid"
	EUNAUTHORIZED = "unauthorized"
	EFORBIDDEN    = "forbidden"
	ERATELIMIT    = "rate_limited"
	EUNAVAILABLE  = "unavailable"
	EINTERNAL     = "internal"
)

// Error is the application's error. Its Message is safe to show to a client;
// anything else (driver errors, panics, bugs) is not an *Error and is reported
// to clients as EINTERNAL while the original is logged whole.
type Error struct {
	Code    string
	Message string
	// Fields lists every invalid input field when Code is EINVALID.
	Fields []FieldError
}

// FieldError names one invalid input field by its JSON path, for example
// "components[2].params.replicas", and says what is wrong with it.
type FieldError struct {
	Field  string `json:"field"`
	Reason string `json:"reason"`
}

func (e *Error) Error() string {
	if len(e.Fields) == 0 {
		return fmt.Sprintf("%s: %s", e.Code, e.Message)
	}
	return fmt.Sprintf("%s: %s (%d invalid fields, first %s: %s)",
		e.Code, e.Message, len(e.Fields), e.Fields[0].Field, e.Fields[0].Reason)
}

// Errorf returns an *Error with the given code and a formatted message.
func Errorf(code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// Invalid returns an EINVALID error listing the given field errors. It returns
// nil when fields is empty so validators can `return Invalid(msg, errs)`.
func Invalid(message string, fields []FieldError) error {
	if len(fields) == 0 {
		return nil
	}
	return &Error{Code: EINVALID, Message: message, Fields: fields}
}

// ErrorCode returns the code of the first *Error in err's chain, "" for a nil
// error and EINTERNAL for any other error.
func ErrorCode(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Code
	}
	return EINTERNAL
}

// ErrorMessage returns the client-safe message of the first *Error in err's
// chain, "" for a nil error and a generic text for any other error.
func ErrorMessage(err error) string {
	if err == nil {
		return ""
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Message
	}
	return "internal error"
}

// ErrorFields returns the field errors of the first *Error in err's chain.
func ErrorFields(err error) []FieldError {
	var e *Error
	if errors.As(err, &e) {
		return e.Fields
	}
	return nil
}
