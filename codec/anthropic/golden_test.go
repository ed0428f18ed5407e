package anthropic_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/internal/goldentest"
	"github.com/rosetta-gateway/rosetta/codec/sse"
)

// Golden files. Under testdata/<surface>/:
//
//	<name>.in.json / <name>.sse   Anthropic wire input (request, response, stream)
//	<name>.canonical.json         the decoded canonical value (encoding/json, indented)
//	<name>.events.json            the decoded canonical stream events, one per line
//	<name>.out.json / .out.sse    the canonical value encoded again as Anthropic wire
//	<name>.dropped.json           what AppendRequest reported dropped, when anything
//	<name>.error.json             the error a rejected input gets
//
// A canonical file without a wire input is a hand-written canonical value
// (what another dialect's decoder produces), encoded only. Inputs named
// v2026_* are decoded and encoded with API version 2026-10-21. The provider
// wire fixtures of codec/testdata/wire/anthropic are inputs too, under the
// names wire_*.
//
// go test ./codec/anthropic -run Golden -update rewrites the goldens; read
// every one you rewrite against the provider's docs before committing it.

// The helpers shared with the other codec goldens.
var (
	golden       = goldentest.Check
	goldenAbsent = goldentest.CheckAbsent
	readFile     = goldentest.Read
	dumpJSON     = goldentest.Dump
	dumpEvents   = goldentest.DumpEvents
)

const wireDir = "../testdata/wire/anthropic"

// goldenInfo is the StreamInfo of every golden encoding.
var goldenInfo = codec.StreamInfo{ID: "msg_gateway_0001", Model: "claude-public", Created: 1763800000, InputTokens: 42}

// goldenCase is one golden input: a name and the input file, if any.
type goldenCase struct {
	name string
	in   string // "" for a canonical-only case
}

// goldenCases lists the cases of a surface directory: every input with the
// given suffix, the wire fixtures matching wirePattern, and canonical files
// (with canonSuffix) that have no input.
func goldenCases(t *testing.T, dir, inSuffix, canonSuffix string, wire ...string) []goldenCase {
	t.Helper()
	var cases []goldenCase
	seen := map[string]bool{}
	ins, _ := filepath.Glob(filepath.Join(dir, "*"+inSuffix))
	for _, in := range ins {
		name := strings.TrimSuffix(filepath.Base(in), inSuffix)
		if strings.HasSuffix(name, ".out") {
			continue
		}
		cases = append(cases, goldenCase{name: name, in: in})
		seen[name] = true
	}
	for _, w := range wire {
		in := filepath.Join(wireDir, w)
		name := "wire_" + strings.TrimSuffix(strings.TrimSuffix(w, ".json"), ".sse")
		cases = append(cases, goldenCase{name: name, in: in})
		seen[name] = true
	}
	canons, _ := filepath.Glob(filepath.Join(dir, "*"+canonSuffix))
	for _, c := range canons {
		name := strings.TrimSuffix(filepath.Base(c), canonSuffix)
		if !seen[name] {
			cases = append(cases, goldenCase{name: name})
		}
	}
	sort.Slice(cases, func(i, j int) bool { return cases[i].name < cases[j].name })
	if len(cases) == 0 {
		t.Fatalf("no golden cases in %s", dir)
	}
	return cases
}

// loadCanonical reads a canonical JSON file into v.
func loadCanonical(t *testing.T, path string, v any) {
	t.Helper()
	dec := json.NewDecoder(bytes.NewReader(readFile(t, path)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// loadEvents reads a file written by dumpEvents.
func loadEvents(t *testing.T, path string) []codec.Event {
	t.Helper()
	var events []codec.Event
	dec := json.NewDecoder(bytes.NewReader(readFile(t, path)))
	dec.DisallowUnknownFields()
	for {
		var e codec.Event
		err := dec.Decode(&e)
		if errors.Is(err, io.EOF) {
			return events
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		events = append(events, e)
	}
}

// sseEvent is one framed SSE event: its name and data.
type sseEvent struct {
	name, data []byte
}

// frameSSE splits a transcript into events with codec/sse, as the proxy's
// reader does.
func frameSSE(t testing.TB, b []byte) []sseEvent {
	t.Helper()
	var events []sseEvent
	for len(b) > 0 {
		n := sse.Next(b)
		if n == 0 {
			n = len(b) // an unterminated last event still counts
		}
		ev := b[:n]
		b = b[n:]
		data := sse.AppendData(nil, ev)
		if _, _, ok := sse.Data(ev); !ok {
			continue // a comment or a blank line
		}
		name, _ := sse.Field(ev, "event")
		events = append(events, sseEvent{name: name, data: data})
	}
	return events
}

// sameShape dumps v with empty arrays as null: a reused canonical value
// keeps the capacity of its slices, so it has [] where a fresh one has nil.
func sameShape(t *testing.T, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var x any
	if err := json.Unmarshal(b, &x); err != nil {
		t.Fatal(err)
	}
	return dumpJSON(t, nilEmpty(x))
}

func nilEmpty(x any) any {
	switch x := x.(type) {
	case []any:
		if len(x) == 0 {
			return nil
		}
		for i := range x {
			x[i] = nilEmpty(x[i])
		}
	case map[string]any:
		for k, v := range x {
			x[k] = nilEmpty(v)
		}
	}
	return x
}
