// Package jsonmap turns values into the JSON objects (map[string]any) that
// job parameters and results, provenance records and GraphQL Map fields hold.
package jsonmap

import (
	"encoding/json"
	"errors"
)

// Of encodes v (a struct or map) as a JSON object; nil gives an empty object.
func Of(v any) (map[string]any, error) {
	if v == nil {
		return map[string]any{}, nil
	}
	data, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Decode(data)
}

// Decode reads a JSON object.
func Decode(data []byte) (map[string]any, error) {
	var m map[string]any
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, errors.New("not a JSON object")
	}
	return m, nil
}
