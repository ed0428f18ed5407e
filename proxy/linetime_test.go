package proxy

import (
	"bytes"
	"testing"
	"time"
)

// TestLineTime holds the time access lines write to
// time.Time.AppendFormat's, cut out of the lines: across seconds (a
// change of second or zone makes the line's edges anew), zones and
// fractions of every length, at both levels.
func TestLineTime(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("zero", 0), time.FixedZone("east", 5*3600+30*60),
		time.FixedZone("west", -7*3600), time.FixedZone("odd", 30), time.Local}
	base := time.Date(2026, 11, 26, 23, 59, 58, 0, time.UTC)
	fractions := []int{0, 1, 10, 500, 7_000, 1_000_000, 100_000_000, 120_000_000, 123_000_000, 123_456_789, 999_999_999}
	xs := []*exchange{{id: []byte("r1"), status: 200}, {id: []byte("r2"), status: 502}}
	for _, loc := range zones {
		for _, ns := range fractions {
			for sec := range 3 { // the last crosses midnight, in UTC
				now := base.Add(time.Duration(sec)*time.Second + time.Duration(ns)).In(loc)
				for _, x := range xs {
					json := appendJSONLine(nil, x, now)
					lineTimeIs(t, json, `{"time":"`, `"`, now.AppendFormat(nil, time.RFC3339Nano))
					text := appendTextLine(nil, x, now)
					lineTimeIs(t, text, "time=", " ", now.AppendFormat(nil, "2006-01-02T15:04:05.000Z07:00"))
				}
			}
		}
	}
}

// lineTimeIs checks that line starts with before, then want, then after.
func lineTimeIs(t *testing.T, line []byte, before, after string, want []byte) {
	t.Helper()
	rest, ok := bytes.CutPrefix(line, []byte(before))
	got, _, found := bytes.Cut(rest, []byte(after))
	if !ok || !found || !bytes.Equal(got, want) {
		t.Errorf("line %q: time %q, want %q", line, got, want)
	}
}
