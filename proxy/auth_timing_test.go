package proxy

import (
	"testing"
	"time"

	"github.com/rosetta-gateway/rosetta/config"
)

func newTestKeyring(tb testing.TB) (*keyring, []byte) {
	tb.Helper()
	secret := "sk-rosetta-bench-0123456789abcdefghij"
	kr, err := newKeyring(newStaticKeys([]config.Key{{Name: "k", Key: secret, Models: []string{"*"}}}))
	if err != nil {
		tb.Fatal(err)
	}
	k, _ := kr.find([]byte(secret), time.Now()) // fills the cache
	if k == nil {
		tb.Fatal("key not found")
	}
	kr.cache.Wait()
	return kr, []byte(secret)
}

func TestKeyring(t *testing.T) {
	kr, secret := newTestKeyring(t)
	f := func(s string, want bool) {
		t.Helper()
		k, err := kr.find([]byte(s), time.Now())
		if err != nil || (k != nil) != want {
			t.Fatalf("authenticate(%q) = %v, %v; want found=%v", s, k, err, want)
		}
	}
	f(string(secret), true)
	f(string(secret), true) // from the cache
	f(string(secret[:len(secret)-1]), false)
	f("", false)
	f(string(secret)+"x", false)
	kr.invalidate(HashKey(secret))
	f(string(secret), true) // a dropped cache entry is looked up again
}

func TestBearer(t *testing.T) {
	f := func(header, want string) {
		t.Helper()
		if got := string(bearer([]byte(header))); got != want {
			t.Fatalf("bearer(%q) = %q, want %q", header, got, want)
		}
	}
	f("Bearer sk-1", "sk-1")
	f("bearer  sk-1 ", "sk-1")
	f("BEARER sk-1", "sk-1")
	f("Basic sk-1", "")
	f("Bearer\tsk-1", "")
	f("Bearer ", "")
	f("Bearer", "")
	f("", "")
}

// BenchmarkKeyLookup is the per-request authentication: SHA-256 of the
// secret, cache hit, constant-time compare.
func BenchmarkKeyLookup(b *testing.B) {
	kr, secret := newTestKeyring(b)
	b.ReportAllocs()
	for b.Loop() {
		if k, _ := kr.find(secret, time.Now()); k == nil {
			b.Fatal("miss")
		}
	}
}
