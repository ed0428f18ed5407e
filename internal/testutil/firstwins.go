package testutil

import (
	"bytes"
	"encoding/json"
)

// FirstWins decodes the JSON value b as a parser that takes the first of
// a repeated key reads it (the Go SDKs of OpenAI and Anthropic), in the
// types encoding/json decodes into an any, but for a number past
// float64's range (1e700: valid JSON), kept as a json.Number; nil when b
// is not JSON.
func FirstWins(b []byte) any {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var read func() any
	read = func() any {
		tok, err := d.Token()
		if err != nil {
			return nil
		}
		switch tok := tok.(type) {
		case json.Delim:
			if tok == '{' {
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
			}
			a := []any{}
			for d.More() {
				a = append(a, read())
			}
			d.Token() //nolint:errcheck // the closing bracket
			return a
		case json.Number:
			return number(tok)
		}
		return tok
	}
	return read()
}

// LastWins decodes the JSON value b as encoding/json does (the last of a
// repeated key), in FirstWins's types; nil when b is not JSON.
func LastWins(b []byte) any {
	if !json.Valid(b) {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var v any
	if d.Decode(&v) != nil {
		return nil
	}
	return floats(v)
}

// floats turns the json.Numbers in v that fit a float64 into float64s.
func floats(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			v[k] = floats(e)
		}
	case []any:
		for i, e := range v {
			v[i] = floats(e)
		}
	case json.Number:
		return number(v)
	}
	return v
}

// number is n as a float64, or n itself when it does not fit one.
func number(n json.Number) any {
	if f, err := n.Float64(); err == nil {
		return f
	}
	return n
}

func has(m map[string]any, k string) bool { _, ok := m[k]; return ok }

// ThroughObjects is v, a value FirstWins or LastWins read, with every
// array in it replaced by a mark (no JSON value): what rawjson.AppendLast
// reduces, objects and the objects nested in them through objects, so
// that two readers' values compare equal when they differ only in an
// object inside an array, whose repeated keys the relays leave as they
// are.
func ThroughObjects(v any) any {
	switch v := v.(type) {
	case map[string]any:
		m := make(map[string]any, len(v))
		for k, e := range v {
			m[k] = ThroughObjects(e)
		}
		return m
	case []any:
		return anArray{}
	}
	return v
}

// anArray stands for an array in what ThroughObjects returns.
type anArray struct{}
