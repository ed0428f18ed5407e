package proxy

import (
	"testing"
	"time"
)

// appendLineTime is an access line's time as its pieces make it: the
// second's date and zone around the fraction.
func appendLineTime(b []byte, now time.Time, digits int) []byte {
	s := second(now)
	b = append(b, s.date...)
	b = appendFraction(b, now.Nanosecond(), digits)
	return append(b, s.zone...)
}

// TestLineTime holds an access line's time to time.Time.AppendFormat
// across seconds, zones and fractions of every length.
func TestLineTime(t *testing.T) {
	zones := []*time.Location{time.UTC, time.FixedZone("east", 5*3600+30*60), time.FixedZone("west", -7*3600), time.Local}
	base := time.Date(2026, 11, 26, 23, 59, 58, 0, time.UTC)
	for _, loc := range zones {
		for _, ns := range []int{0, 1, 10, 100_000_000, 120_000_000, 123_000_000, 123_456_789, 999_999_999, 500, 7_000} {
			for sec := range 3 {
				now := base.Add(time.Duration(sec)*time.Second + time.Duration(ns)).In(loc)
				for digits, layout := range map[int]string{9: time.RFC3339Nano, 3: "2006-01-02T15:04:05.000Z07:00"} {
					if got, want := string(appendLineTime(nil, now, digits)), now.Format(layout); got != want {
						t.Errorf("appendLineTime(%v, %d) = %s, want %s", now, digits, got, want)
					}
				}
			}
		}
	}
}

// BenchmarkLineTime is an access line's time, as appendLineTime writes it
// against time.Time.AppendFormat, which it replaces.
func BenchmarkLineTime(b *testing.B) {
	buf := make([]byte, 0, 64)
	now := time.Now()
	b.Run("appendLineTime", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf = appendLineTime(buf[:0], now, 9)
		}
	})
	b.Run("AppendFormat", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf = now.AppendFormat(buf[:0], time.RFC3339Nano)
		}
	})
}
