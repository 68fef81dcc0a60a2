// Package strictjson decodes the JSON that people write by hand
// (configuration and policy files): an unknown field is an error, and every
// error says where it is, by line and column or by the field's path, in
// words rather than Go's type names.
package strictjson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"reflect"
	"slices"
	"strings"

	"deidcorpus/internal/nearmiss"
)

// Decode decodes data, one JSON value, into v (a pointer).
func Decode(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		end := dec.InputOffset()
		if _, err := dec.Token(); err != io.EOF {
			line, col := position(data, end+int64(len(data[end:])-len(bytes.TrimLeft(data[end:], " \t\r\n"))))
			return fmt.Errorf("line %d, column %d: text after the end of the JSON value", line, col)
		}
		return nil
	}
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syn):
		line, col := position(data, syn.Offset-1) // Offset is just past the byte in error
		return fmt.Errorf("line %d, column %d: %s", line, col, strings.TrimPrefix(syn.Error(), "json: "))
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "the file"
		}
		return fmt.Errorf("%s: want %s, not %s", field, describe(typ.Type), article(typ.Value))
	case strings.HasPrefix(err.Error(), "json: unknown field"):
		var raw any
		if json.Unmarshal(data, &raw) == nil {
			if uerr := unknownField(raw, reflect.TypeOf(v), ""); uerr != nil {
				return uerr
			}
		}
	case len(bytes.TrimSpace(data)) == 0:
		return errors.New("empty: want a JSON object")
	}
	return errors.New(strings.TrimPrefix(err.Error(), "json: "))
}

// position is the 1-based line and column (in bytes) of offset off.
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

// unknownField finds the first field of raw that type t has no place for,
// depth first in key order, and names it by its path with the fields its
// object may hold.
func unknownField(raw any, t reflect.Type, path string) error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := raw.(map[string]any)
		if !ok {
			return nil
		}
		fields := jsonFields(t)
		names := slices.Sorted(maps.Keys(fields))
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			f, ok := fields[k]
			if !ok {
				msg := fmt.Sprintf("%s: unknown field", join(path, k))
				if meant := nearmiss.Among(k, names, strings.ToLower); len(meant) > 0 {
					msg += "; did you mean " + strings.Join(meant, " or ") + "?"
				}
				return fmt.Errorf("%s (known here: %s)", msg, strings.Join(names, ", "))
			}
			if err := unknownField(obj[k], f, join(path, k)); err != nil {
				return err
			}
		}
	case reflect.Map:
		if obj, ok := raw.(map[string]any); ok {
			for _, k := range slices.Sorted(maps.Keys(obj)) {
				if err := unknownField(obj[k], t.Elem(), join(path, k)); err != nil {
					return err
				}
			}
		}
	case reflect.Slice, reflect.Array:
		if list, ok := raw.([]any); ok {
			for i, x := range list {
				if err := unknownField(x, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// jsonFields maps the JSON names of t's fields to their types, as
// encoding/json names them (its tag, else the field's name).
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			continue
		case "":
			name = f.Name
		}
		out[name] = f.Type
	}
	return out
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// describe names what a Go type takes in JSON.
func describe(t reflect.Type) string {
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Map, reflect.Struct:
		return "an object"
	case reflect.Slice, reflect.Array:
		return "a list"
	}
	return t.String()
}

// article puts "a" or "an" before encoding/json's name of a JSON value
// ("string", "number 1.5", "object").
func article(v string) string {
	if v != "" && strings.ContainsRune("aeiou", rune(v[0])) {
		return "an " + v
	}
	return "a " + v
}
