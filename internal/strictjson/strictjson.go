// Package strictjson decodes the JSON that people write by hand
// (configuration and policy files): an unknown field is an error, and every
// error says where it is, by the field's path or by line and column, in
// words rather than Go's type names.
package strictjson

import (
	"bytes"
	"encoding"
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

// Error is a problem found in a document: at a field's Path (dotted, with
// map keys and [list indexes]), or at a Line and Column (1-based, in
// bytes), or both.
type Error struct {
	Path         string
	Line, Column int
	Msg          string
}

func (e *Error) Error() string {
	var b strings.Builder
	if e.Line > 0 {
		fmt.Fprintf(&b, "line %d, column %d: ", e.Line, e.Column)
	}
	if e.Path != "" {
		b.WriteString(e.Path + ": ")
	}
	b.WriteString(e.Msg)
	return b.String()
}

// Decode decodes data, one JSON value, into v (a pointer). A UTF-8
// byte-order mark before it is allowed.
func Decode(data []byte, v any) error {
	data = bytes.TrimPrefix(data, []byte("\ufeff"))
	if len(bytes.TrimSpace(data)) == 0 {
		return &Error{Msg: "empty: want a JSON object"}
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	if err == nil {
		end := dec.InputOffset()
		if _, err := dec.Token(); err != io.EOF {
			e := at(data, end+int64(len(data[end:])-len(bytes.TrimLeft(data[end:], " \t\r\n"))))
			e.Msg = "text after the end of the JSON value"
			return e
		}
		return nil
	}
	var (
		syn *json.SyntaxError
		typ *json.UnmarshalTypeError
	)
	switch {
	case errors.As(err, &syn):
		e := at(data, syn.Offset-1) // Offset is just past the byte in error
		e.Msg = strings.TrimPrefix(syn.Error(), "json: ")
		return e
	case errors.Is(err, io.ErrUnexpectedEOF):
		e := at(data, int64(len(data)))
		e.Msg = "the text ends inside a value (a closing } or ] or \" missing?)"
		return e
	}
	// A wrong type or an unknown field: encoding/json leaves map keys and
	// list indexes out of its path, so the value is walked to find it.
	var raw any
	rd := json.NewDecoder(bytes.NewReader(data))
	rd.UseNumber()
	if rd.Decode(&raw) == nil {
		if e := check(raw, reflect.TypeOf(v), ""); e != nil {
			off := int64(-1)
			if errors.As(err, &typ) {
				off = typ.Offset
			} else {
				off = locate(data, e.Path) // an unknown field: encoding/json gives no offset
			}
			if off >= 0 {
				e.Line, e.Column = position(data, off)
			}
			return e
		}
	}
	if errors.As(err, &typ) {
		e := at(data, typ.Offset)
		e.Path, e.Msg = typ.Field, fmt.Sprintf("want %s, not %s", describe(typ.Type), article(typ.Value))
		return e
	}
	return &Error{Msg: strings.TrimPrefix(err.Error(), "json: ")}
}

// locate returns the byte offset of the key or list element at path (as
// check writes paths), walking data's tokens; -1 when there is none.
func locate(data []byte, path string) int64 {
	type frame struct {
		path    string
		object  bool
		key     string // an object's member whose value comes next
		haveKey bool
		index   int // an array's next element
	}
	var stack []*frame
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		from := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return -1
		}
		// start is where the token itself begins, past separators.
		start := from + int64(len(data[from:])-len(bytes.TrimLeft(data[from:], " \t\r\n,:")))
		if d, ok := tok.(json.Delim); ok && (d == '}' || d == ']') {
			stack = stack[:len(stack)-1]
			continue
		}
		here := ""
		if n := len(stack); n > 0 {
			top := stack[n-1]
			switch {
			case top.object && !top.haveKey:
				top.key, top.haveKey = join(top.path, tok.(string)), true
				if top.key == path {
					return start
				}
				continue
			case top.object:
				here, top.haveKey = top.key, false
			default:
				here = fmt.Sprintf("%s[%d]", top.path, top.index)
				top.index++
				if here == path {
					return start
				}
			}
		}
		if d, ok := tok.(json.Delim); ok {
			stack = append(stack, &frame{path: here, object: d == '{'})
		}
	}
}

// at is an Error at byte offset off of data.
func at(data []byte, off int64) *Error {
	line, col := position(data, off)
	return &Error{Line: line, Column: col}
}

// position is the 1-based line and column (in bytes) of offset off.
func position(data []byte, off int64) (line, col int) {
	off = min(max(off, 0), int64(len(data)))
	before := data[:off]
	line = bytes.Count(before, []byte("\n")) + 1
	col = int(off) - (bytes.LastIndexByte(before, '\n') + 1) + 1
	return line, col
}

var unmarshalerTypes = []reflect.Type{
	reflect.TypeFor[json.Unmarshaler](), reflect.TypeFor[encoding.TextUnmarshaler](),
}

// check finds the first field of raw, depth first in key order, that type t
// has no place for, or whose value t cannot take.
func check(raw any, t reflect.Type, path string) *Error {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if raw == nil || t.Kind() == reflect.Interface {
		return nil
	}
	for _, u := range unmarshalerTypes {
		if reflect.PointerTo(t).Implements(u) {
			return nil // it reads its own form
		}
	}
	mismatch := func() *Error {
		return &Error{Path: path, Msg: fmt.Sprintf("want %s, not %s", describe(t), describeValue(raw))}
	}
	switch t.Kind() {
	case reflect.Struct:
		obj, ok := raw.(map[string]any)
		if !ok {
			return mismatch()
		}
		fields := jsonFields(t)
		names := slices.Sorted(maps.Keys(fields))
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			f, ok := lookup(fields, k)
			if !ok {
				msg := "unknown field"
				if meant := nearmiss.Among(k, names); len(meant) > 0 {
					msg += "; did you mean " + strings.Join(meant, " or ") + "?"
				}
				return &Error{Path: join(path, k), Msg: fmt.Sprintf("%s (known here: %s)", msg, strings.Join(names, ", "))}
			}
			if e := check(obj[k], f, join(path, k)); e != nil {
				return e
			}
		}
	case reflect.Map:
		obj, ok := raw.(map[string]any)
		if !ok {
			return mismatch()
		}
		for _, k := range slices.Sorted(maps.Keys(obj)) {
			if e := check(obj[k], t.Elem(), join(path, k)); e != nil {
				return e
			}
		}
	case reflect.Slice, reflect.Array:
		list, ok := raw.([]any)
		if !ok {
			return mismatch()
		}
		for i, x := range list {
			if e := check(x, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); e != nil {
				return e
			}
		}
	case reflect.String:
		if _, ok := raw.(string); !ok {
			return mismatch()
		}
	case reflect.Bool:
		if _, ok := raw.(bool); !ok {
			return mismatch()
		}
	case reflect.Float32, reflect.Float64:
		if _, ok := raw.(json.Number); !ok {
			return mismatch()
		}
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		if i, ok := wholeNumber(raw); !ok || reflect.Zero(t).OverflowInt(i) {
			return mismatch()
		}
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if i, ok := wholeNumber(raw); !ok || i < 0 || reflect.Zero(t).OverflowUint(uint64(i)) {
			return mismatch()
		}
	}
	return nil
}

// wholeNumber is raw as an int64, if it is a whole number that fits one.
func wholeNumber(raw any) (int64, bool) {
	n, ok := raw.(json.Number)
	if !ok {
		return 0, false
	}
	i, err := n.Int64()
	return i, err == nil
}

// lookup finds a key's field as encoding/json does: its exact name, else
// one equal to it without regard to case.
func lookup(fields map[string]reflect.Type, key string) (reflect.Type, bool) {
	if f, ok := fields[key]; ok {
		return f, true
	}
	for name, f := range fields {
		if strings.EqualFold(name, key) {
			return f, true
		}
	}
	return nil, false
}

// jsonFields maps the JSON names of t's fields to their types, as
// encoding/json names them (its tag, else the field's name), with the
// fields of untagged embedded structs as t's own.
func jsonFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				maps.Copy(out, jsonFields(ft))
				continue
			}
		}
		if !f.IsExported() || name == "-" {
			continue
		}
		if name == "" {
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
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number, 0 or more"
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

// describeValue names a decoded JSON value.
func describeValue(v any) string {
	switch v := v.(type) {
	case string:
		return "a string"
	case json.Number:
		return "the number " + v.String()
	case bool:
		return fmt.Sprintf("%v", v)
	case map[string]any:
		return "an object"
	case []any:
		return "a list"
	}
	return fmt.Sprintf("%T", v)
}

// article puts "a" or "an" before encoding/json's name of a JSON value
// ("string", "number 1.5", "object").
func article(v string) string {
	if v != "" && strings.ContainsRune("aeiou", rune(v[0])) {
		return "an " + v
	}
	return "a " + v
}
