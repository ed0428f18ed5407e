package testutil_test

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// TestValidJSON: ValidJSON agrees with json.Valid on documents within
// encoding/json's nesting limit, and takes the ones past it that are JSON
// but for their depth.
func TestValidJSON(t *testing.T) {
	for _, s := range []string{
		`{}`, ` [1, "a", null, true, {"b": -0.5e3}] `, `{"a":1e700}`, "\"\xff\"", `"\ud800"`, `0`,
		``, ` `, `[1 2]`, `{"a" 1}`, `{"a":1,}`, `[1,]`, `{1:2}`, `[1}`, `{"a":1]`, "\"\x01\"", `"\q"`,
		`1 2`, `[] x`, `01`, `[`, `[1,,2]`, `{,}`, `[:]`, `nul`, `-`,
	} {
		if got, want := testutil.ValidJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("ValidJSON(%q) = %v, json.Valid %v", s, got, want)
		}
	}
	deep := strings.Repeat("[", 10001) + strings.Repeat("]", 10001)
	for _, s := range []string{deep, `{"a":` + deep + `}`, `[` + deep + `,{"b":1e700}]`} {
		if json.Valid([]byte(s)) || !testutil.ValidJSON([]byte(s)) {
			t.Errorf("ValidJSON(%.20q… %d bytes) = false (json.Valid %v)", s, len(s), json.Valid([]byte(s)))
		}
	}
	for _, s := range []string{deep + `]`, `{"a":` + deep, `[` + deep + `,]`, deep + ` x`} {
		if testutil.ValidJSON([]byte(s)) {
			t.Errorf("ValidJSON(%.20q… %d bytes) = true", s, len(s))
		}
	}
}

// TestJSONArray: the elements of an array stream, one nested to
// encoding/json's limit among them, and a failure for what is no array.
func TestJSONArray(t *testing.T) {
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	elems := testutil.JSONArray(t, []byte("[{\"a\":1}\n,"+deep+"\n,{\"b\":1e700}]\n"))
	if len(elems) != 3 || string(elems[0]) != `{"a":1}` || string(elems[1]) != deep || string(elems[2]) != `{"b":1e700}` {
		t.Errorf("JSONArray = %d elements: %.40q", len(elems), elems)
	}
	for _, s := range []string{``, `{}`, `[1 2]`, `[1,]`, `[1`, `[1]]`, `[1] [2]`} {
		if !fails(t, func(tb testing.TB) { testutil.JSONArray(tb, []byte(s)) }) {
			t.Errorf("JSONArray(%.20q) did not fail", s)
		}
	}
}

// fails reports whether f calls Fatalf on the testing.TB it is given.
func fails(t *testing.T, f func(testing.TB)) bool {
	r := &recorder{TB: t}
	done := make(chan struct{})
	go func() {
		defer close(done)
		f(r)
	}()
	<-done
	return r.failed
}

// recorder is a testing.TB whose Fatalf records the failure and ends the
// goroutine, as testing's does, without failing the test.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Helper() {}

func (r *recorder) Fatalf(string, ...any) {
	r.failed = true
	runtime.Goexit()
}
