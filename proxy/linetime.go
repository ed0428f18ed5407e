package proxy

import (
	"sync/atomic"
	"time"
)

// lineSecond is what an access line shares with every other line of the
// same second: its text up to the request id but for the fraction of the
// time. The date and time to the second and the zone are formatted once a
// second, as time.Time.AppendFormat writes them, rather than once a line.
type lineSecond struct {
	unix int64
	loc  *time.Location
	// An access line's text around the fraction, in each shape: before
	// it, and after it up to the request id at each level (lineEdges).
	heads [2][]byte
	tails [2][2][]byte
}

// lineSeconds holds the latest second formatted; lines of any gateway of
// the process share it (a change of second replaces it whole).
var lineSeconds atomic.Pointer[lineSecond]

// second returns now's lineSecond, formatting it when the one held is of
// another second or zone.
func second(now time.Time) *lineSecond {
	s := lineSeconds.Load()
	if s != nil && s.unix == now.Unix() && s.loc == now.Location() {
		return s
	}
	date := now.AppendFormat(nil, "2006-01-02T15:04:05")
	zone := now.AppendFormat(nil, "Z07:00")
	s = &lineSecond{unix: now.Unix(), loc: now.Location()}
	s.heads, s.tails = lineEdges(date, zone)
	lineSeconds.Store(s)
	return s
}

// appendFraction appends the fraction of a second ns as
// time.Time.AppendFormat does: digits 9, its trailing zeros left out (as
// time.RFC3339Nano), or 3 (as "2006-01-02T15:04:05.000Z07:00"). The
// point and zeros come from a template, ns's digits are written over its
// end in place (putDecimal), with no buffer of their own.
func appendFraction(b []byte, ns, digits int) []byte {
	u := uint64(ns)
	if digits == 3 {
		u /= 1e6
	} else {
		if u == 0 {
			return b // no fraction at all
		}
		for u%10 == 0 { // trailing zeros left out
			u /= 10
			digits--
		}
	}
	n := len(b)
	b = append(b, ".000000000"[:digits+1]...)
	putDecimal(b[n+1:], u)
	return b
}
