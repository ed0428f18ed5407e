package testutil

import (
	"bytes"
	"encoding/json"
)

// FirstWins decodes the JSON value b as a parser that takes the first of
// a repeated key reads it (the Go SDKs of OpenAI and Anthropic), in the
// types encoding/json decodes into an any; nil when b is not JSON.
func FirstWins(b []byte) any {
	d := json.NewDecoder(bytes.NewReader(b))
	var read func() any
	read = func() any {
		tok, err := d.Token()
		if err != nil {
			return nil
		}
		switch tok {
		case json.Delim('{'):
			m := map[string]any{}
			for d.More() {
				k, _ := d.Token()
				key, _ := k.(string)
				if v := read(); !has(m, key) {
					m[key] = v
				}
			}
			d.Token() //nolint:errcheck // the closing brace
			return m
		case json.Delim('['):
			a := []any{}
			for d.More() {
				a = append(a, read())
			}
			d.Token() //nolint:errcheck // the closing bracket
			return a
		}
		return tok
	}
	return read()
}

func has(m map[string]any, k string) bool { _, ok := m[k]; return ok }
