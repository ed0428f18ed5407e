package proxy

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"regexp"
	"strings"
	"testing"
)

// requestID keeps a client's id when it is a sane token that fits, and
// otherwise makes one: "req_" and 24 hex digits, each new.
func TestRequestID(t *testing.T) {
	made := regexp.MustCompile(`^req_[0-9a-f]{24}$`)
	seen := map[string]bool{}
	digits := map[byte]bool{}
	for range 1000 {
		id := string(requestID(make([]byte, 0, 40), nil))
		if !made.MatchString(id) || seen[id] {
			t.Fatalf("made %q (made before: %v)", id, seen[id])
		}
		seen[id] = true
		for i := 4; i < len(id); i++ {
			digits[id[i]] = true
		}
	}
	if len(digits) != 16 {
		t.Errorf("the ids made use %d hex digits, want all 16", len(digits))
	}
	for given, kept := range map[string]bool{
		"abc-123_X.y:z": true, strings.Repeat("a", 40): true,
		strings.Repeat("a", 41): false, "has space": false, "é": false, "a\r\nb": false,
	} {
		id := string(requestID(make([]byte, 0, 40), []byte(given)))
		if (id == given) != kept || !kept && !made.MatchString(id) {
			t.Errorf("given %q: id %q, want it kept: %v", given, id, kept)
		}
	}
}

// hex8 writes the digits strconv does, padded to eight.
func TestHex8(t *testing.T) {
	check := func(v uint32) {
		var got [8]byte
		binary.BigEndian.PutUint64(got[:], hex8(v))
		if want := fmt.Sprintf("%08x", v); string(got[:]) != want {
			t.Fatalf("hex8(%#x) = %q, want %q", v, got, want)
		}
	}
	for _, v := range []uint32{0, 1, 9, 10, 15, 16, 0x9a, 0xa9, 0x0f0f0f0f, 0xf0f0f0f0, 0x12345678, 0x89abcdef, 0x99999999, 0xaaaaaaaa, 1<<32 - 1} {
		check(v)
	}
	for range 100000 {
		check(rand.Uint32())
	}
}

// BenchmarkRequestID is the id of a request that came without one.
func BenchmarkRequestID(b *testing.B) {
	var buf [40]byte
	b.ReportAllocs()
	for b.Loop() {
		requestID(buf[:0], nil)
	}
}
