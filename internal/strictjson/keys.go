package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"

	"backpressure/internal/game"
)

// encoding/json matches object keys to struct fields case-insensitively and
// keeps the last of duplicate keys, so {"version": 1, "VERSION": 2} decodes
// as version 2 while a proxy, a log or a signature check may have read 1.
// CheckKeys is the pre-pass that makes the body mean one thing to every
// reader: it walks the token stream beside the target type and refuses a
// key that appears twice in one object (anywhere in the document) and a key
// that names a field of the target struct in another case.

// maxKeyDepth bounds the walk's nesting; deeper bodies are refused here
// rather than by the decoder's own (much larger) limit.
const maxKeyDepth = 64

var errKeysTooDeep = errors.New("nests too deep")

// CheckKeys returns an EMALFORMED error naming the first duplicate or mis-cased key of
// body, which is decoded into a value of type t. Syntax errors are left to
// the decoder, which reports them with their position.
func CheckKeys(body []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	field, reason, err := walkKeys(dec, t, "", 0)
	switch {
	case errors.Is(err, errKeysTooDeep):
		return malformed("the body nests too deep", game.FieldError{Field: field, Reason: fmt.Sprintf("nests deeper than %d levels", maxKeyDepth)})
	case err != nil:
		return nil // malformed: the decoder says where
	case reason != "":
		return malformed("the body has an ambiguous field", game.FieldError{Field: field, Reason: reason})
	}
	return nil
}

// walkKeys consumes one value. It returns the path and reason of the first
// problem, or a non-nil err for malformed JSON.
func walkKeys(dec *json.Decoder, t reflect.Type, path string, depth int) (string, string, error) {
	if depth > maxKeyDepth {
		return path, "", errKeysTooDeep
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return path, "", err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return "", "", nil
	}
	switch delim {
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) && t != rawMessageType {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if f, r, err := walkKeys(dec, elem, fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil || r != "" {
				return f, r, err
			}
		}
		_, err := dec.Token()
		return "", "", err
	case '{':
		fields := structFields(t)
		seen := map[string]bool{}
		for dec.More() {
			tok, err := dec.Token()
			if err != nil {
				return path, "", err
			}
			key, _ := tok.(string)
			at := key
			if path != "" {
				at = path + "." + key
			}
			if seen[key] {
				return at, "appears more than once in the same object", nil
			}
			seen[key] = true
			var child reflect.Type
			switch {
			case fields != nil:
				ft, exact := fields[key]
				if !exact {
					for name := range fields {
						if strings.EqualFold(name, key) {
							return at, fmt.Sprintf("field names are case-sensitive: write %q", name), nil
						}
					}
				}
				child = ft
			case t != nil && t.Kind() == reflect.Map:
				child = t.Elem()
			}
			if f, r, err := walkKeys(dec, child, at, depth+1); err != nil || r != "" {
				return f, r, err
			}
		}
		_, err := dec.Token()
		return "", "", err
	}
	return path, "", fmt.Errorf("unexpected %v", delim)
}

var rawMessageType = reflect.TypeFor[json.RawMessage]()

// structFields maps a struct's JSON names (as encoding/json sees them,
// embedded structs flattened) to their types; nil if t is not a struct.
func structFields(t reflect.Type) map[string]reflect.Type {
	if t == nil || t.Kind() != reflect.Struct {
		return nil
	}
	out := map[string]reflect.Type{}
	var add func(t reflect.Type)
	add = func(t reflect.Type) {
		for i := range t.NumField() {
			f := t.Field(i)
			name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
			if name == "-" || (!f.IsExported() && !f.Anonymous) {
				continue
			}
			if f.Anonymous && name == "" {
				ft := f.Type
				if ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if ft.Kind() == reflect.Struct {
					add(ft)
					continue
				}
			}
			if name == "" {
				name = f.Name
			}
			out[name] = f.Type
		}
	}
	add(t)
	return out
}
