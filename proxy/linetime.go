package proxy

import (
	"sync/atomic"
	"time"
)

// lineSecond is what an access line's time shares with every other line
// of the same second: the date and time to the second, and the zone, as
// time.Time.AppendFormat writes them. Formatting them once a second
// rather than once a line leaves the fraction to write per line.
type lineSecond struct {
	unix int64
	loc  *time.Location
	date []byte // 2006-01-02T15:04:05
	zone []byte // Z07:00
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
	s = &lineSecond{unix: now.Unix(), loc: now.Location(),
		date: now.AppendFormat(nil, "2006-01-02T15:04:05"), zone: now.AppendFormat(nil, "Z07:00")}
	lineSeconds.Store(s)
	return s
}

// appendLineTime appends now as now.AppendFormat(b, time.RFC3339Nano)
// does (digits bytes of fraction: 9, its trailing zeros left out, or 3 as
// "2006-01-02T15:04:05.000Z07:00" has them).
func appendLineTime(b []byte, now time.Time, digits int) []byte {
	s := second(now)
	b = append(b, s.date...)
	ns := now.Nanosecond()
	if digits == 3 {
		ns /= 1e6
	}
	var frac [10]byte
	frac[0] = '.'
	i := digits
	for ; i >= 2; i -= 2 { // two digits at a time, from the last
		d := ns % 100 * 2
		ns /= 100
		frac[i-1], frac[i] = digitPairs[d], digitPairs[d+1]
	}
	if i == 1 {
		frac[1] = byte('0' + ns)
	}
	n := digits + 1
	if digits == 9 {
		for n > 1 && frac[n-1] == '0' {
			n--
		}
		if n == 1 {
			n = 0 // no fraction at all
		}
	}
	b = append(b, frac[:n]...)
	return append(b, s.zone...)
}
