// Package goldentest is what the codec's golden-file tests share: the
// -update flag, comparing a result with its golden file (or rewriting it),
// and the readable dumps the goldens are stored as. Only tests import it.
package goldentest

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
)

var update = flag.Bool("update", false, "rewrite the golden files")

// Updating reports whether the test runs with -update.
func Updating() bool { return *update }

// Read returns the contents of the file at path.
func Read(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Check compares got with the golden file at path, or rewrites the file
// with -update.
func Check(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file:\n%s", path, DiffLines(want, got))
	}
}

// CheckOptional is Check for a golden file that exists only when got is
// not empty.
func CheckOptional(t testing.TB, path string, got []byte) {
	t.Helper()
	if len(got) > 0 {
		Check(t, path, got)
		return
	}
	CheckAbsent(t, path)
}

// CheckAbsent checks that no golden file exists at path, or removes it with
// -update.
func CheckAbsent(t testing.TB, path string) {
	t.Helper()
	if *update {
		os.Remove(path)
		return
	}
	if _, err := os.Stat(path); err == nil {
		t.Errorf("%s exists, but nothing was produced for it", path)
	}
}

// DiffLines shows the lines of got that differ from want, by position.
func DiffLines(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var wl, gl string
		if i < len(w) {
			wl = w[i]
		}
		if i < len(g) {
			gl = g[i]
		}
		if wl != gl {
			b.WriteString("line " + strconv.Itoa(i+1) + ":\n  want " + wl + "\n  got  " + gl + "\n")
		}
	}
	return b.String()
}

// Dump is the indented encoding/json form of v, with a final newline.
func Dump(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	return append(b, '\n')
}

// IndentJSON checks that b is one valid JSON value and indents it, keeping
// its key order and string escapes, with a final newline.
func IndentJSON(t testing.TB, b []byte) []byte {
	t.Helper()
	if !json.Valid(b) {
		t.Fatalf("invalid JSON output: %s", b)
	}
	var out bytes.Buffer
	if err := json.Indent(&out, b, "", "  "); err != nil {
		t.Fatal(err)
	}
	out.WriteByte('\n')
	return out.Bytes()
}

// DumpEvents writes one JSON object per event and line.
func DumpEvents(t testing.TB, events []codec.Event) []byte {
	t.Helper()
	var b []byte
	for i := range events {
		line, err := json.Marshal(&events[i])
		if err != nil {
			t.Fatal(err)
		}
		b = append(append(b, line...), '\n')
	}
	return b
}

// CloneEvents copies the strings of events: a decoder's events may point
// into its buffers, valid only until its next call.
func CloneEvents(events []codec.Event) {
	for i := range events {
		e := &events[i]
		for _, s := range []*string{&e.ID, &e.Model, &e.Name, &e.Text, &e.Arguments, &e.Signature, &e.Data, &e.StopSequence} {
			*s = strings.Clone(*s)
		}
	}
}

// Dropped is what a request's translation dropped: when the client's
// request was decoded, and when the upstream's was encoded.
type Dropped struct {
	Decode []string `json:"decode,omitempty"`
	Encode []string `json:"encode,omitempty"`
}

// DumpDropped is the golden form of d, nil when nothing was dropped.
func DumpDropped(t testing.TB, d Dropped) []byte {
	t.Helper()
	if len(d.Decode) == 0 && len(d.Encode) == 0 {
		return nil
	}
	return Dump(t, d)
}
