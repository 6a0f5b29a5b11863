// Package strictjson decodes request bodies so that a body means one thing
// to every reader: exactly one JSON value, no unknown field, no key twice in
// one object and no field name in another case (encoding/json alone takes
// the last duplicate and matches names in any case), then one validator that
// names fields by their JSON names. Every refusal is a *game.Error naming the
// field (EMALFORMED for a body that is not the JSON asked for, EINVALID for
// values the validator refuses). It reads bytes, never a request: the
// transport (internal/api) reads the body within its limits first.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/go-playground/validator/v10"

	"backpressure/internal/game"
)

// EMALFORMED is the code of a body that is not the JSON asked for (syntax, an
// unknown or repeated field, a wrong type); the transport answers it with 400.
const EMALFORMED = "bad_request"

// malformed reports malformed input with the fields concerned.
func malformed(message string, fields ...game.FieldError) error {
	return &game.Error{Code: EMALFORMED, Message: message, Fields: fields}
}

// InvalidUTF8At returns the offset of the first invalid UTF-8 sequence.
func InvalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return len(b)
}

// Unmarshal decodes exactly one JSON value with no unknown fields, no
// duplicate keys and no field names in the wrong case.
func Unmarshal(body []byte, v any) error {
	if err := CheckKeys(body, reflect.TypeOf(v)); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return decodeError(body, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return malformed("the body must be a single JSON value",
			game.FieldError{Field: "", Reason: fmt.Sprintf("unexpected data after the JSON value at byte %d", dec.InputOffset())})
	}
	return nil
}

// decodeError turns encoding/json's errors into a 400 naming the field.
func decodeError(body []byte, err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return malformed("the body is not valid JSON",
			game.FieldError{Field: pathAt(body), Reason: "the JSON ends too early"})
	case errors.As(err, &syntax):
		return malformed("the body is not valid JSON", game.FieldError{
			Field:  pathAt(body),
			Reason: fmt.Sprintf("%s (at byte %d; NaN, Infinity and comments are not JSON)", strings.TrimPrefix(syntax.Error(), "json: "), syntax.Offset),
		})
	case errors.As(err, &typ):
		return malformed("a field has the wrong type", game.FieldError{
			Field:  typ.Field,
			Reason: fmt.Sprintf("must be %s, not %s", jsonType(typ.Type), typ.Value),
		})
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name, _ := strconv.Unquote(strings.TrimPrefix(err.Error(), "json: unknown field "))
		return malformed("the body has an unknown field", game.FieldError{
			Field:  name,
			Reason: "is not a field of this request (the server computes scores, ranks and ids itself)",
		})
	}
	return malformed("the body is not valid JSON", game.FieldError{Field: "", Reason: strings.TrimPrefix(err.Error(), "json: ")})
}

// pathAt returns the JSON path (a.b[2].c) of the value at which body stops
// being valid JSON, "" if it breaks at the top.
func pathAt(body []byte) string {
	type frame struct {
		array bool
		key   string
		index int
		// wantKey: inside an object, the next string token is a key.
		wantKey bool
	}
	var stack []frame
	dec := json.NewDecoder(bytes.NewReader(body))
	path := func() string {
		var b strings.Builder
		for _, f := range stack {
			if f.array {
				fmt.Fprintf(&b, "[%d]", f.index)
				continue
			}
			if f.key == "" {
				continue
			}
			if b.Len() > 0 {
				b.WriteByte('.')
			}
			b.WriteString(f.key)
		}
		return b.String()
	}
	// afterValue moves the enclosing container past one complete value.
	afterValue := func() {
		if n := len(stack); n > 0 {
			if stack[n-1].array {
				stack[n-1].index++
			} else {
				stack[n-1].wantKey = true
			}
		}
	}
	for {
		tok, err := dec.Token()
		if err != nil {
			return path()
		}
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				stack = append(stack, frame{wantKey: true})
			case '[':
				stack = append(stack, frame{array: true})
			default:
				stack = stack[:len(stack)-1]
				afterValue()
			}
		case string:
			if n := len(stack); n > 0 && !stack[n-1].array && stack[n-1].wantKey {
				stack[n-1].key, stack[n-1].wantKey = t, false
				continue
			}
			afterValue()
		default:
			afterValue()
		}
	}
}

// jsonType names the JSON type that decodes into t.
func jsonType(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Pointer:
		return jsonType(t.Elem())
	}
	return "a JSON value"
}

// validatorInstance is the one validator, reporting fields by JSON name.
var validatorInstance = sync.OnceValue(func() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			return ""
		}
		return name
	})
	return v
})

// Validate checks a decoded request struct with the one validator and lists
// every invalid field by its JSON name (EINVALID).
func Validate(v any) error {
	err := validatorInstance().Struct(v)
	if err == nil {
		return nil
	}
	var verrs validator.ValidationErrors
	if !errors.As(err, &verrs) {
		return fmt.Errorf("validate: %w", err)
	}
	fields := make([]game.FieldError, 0, len(verrs))
	for _, fe := range verrs {
		// Namespace is Struct.field.sub; drop the struct's Go name.
		_, field, _ := strings.Cut(fe.Namespace(), ".")
		fields = append(fields, game.FieldError{Field: field, Reason: reasonFor(fe)})
	}
	return game.Invalid("the request is invalid", fields)
}

func reasonFor(fe validator.FieldError) string {
	switch fe.Tag() {
	case "required":
		return "is required"
	case "min", "gte":
		if fe.Kind() == reflect.String {
			return "must be at least " + fe.Param() + " characters"
		}
		return "must be at least " + fe.Param()
	case "max", "lte":
		if fe.Kind() == reflect.String {
			return "must be at most " + fe.Param() + " characters"
		}
		return "must be at most " + fe.Param()
	case "oneof":
		return "must be one of: " + strings.ReplaceAll(fe.Param(), " ", ", ")
	}
	return "is invalid (" + fe.Tag() + ")"
}
