package ratelimit

import "testing"

func BenchmarkAdmit(b *testing.B) {
	l := New(nil, 0)
	s := l.State("key")
	lim := Limits{RPM: 1 << 40, TPM: 1 << 50}
	b.ReportAllocs()
	for b.Loop() {
		if d := l.Admit(s, lim, 100); d.Allowed {
			l.Settle(s, 100, 90)
		}
	}
}

func BenchmarkAdmitParallel(b *testing.B) {
	l := New(nil, 0)
	lim := Limits{RPM: 1 << 40, TPM: 1 << 50}
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		s := l.State("key")
		for pb.Next() {
			l.Admit(s, lim, 0)
		}
	})
}
