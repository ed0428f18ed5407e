package proxy

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"time"
)

// fakeKeys is a key source that counts lookups; a lookup can be held to
// race it against an invalidation.
type fakeKeys struct {
	keys    map[[sha256.Size]byte]*Key
	lookups atomic.Int64
	err     error
	// entered, when set, receives a gate of each lookup's own, which it
	// waits on after reading the key: a test releases the lookups it holds
	// in the order it means (with one gate shared, a send could go to
	// whichever lookup waited first, not the one the test meant).
	entered chan chan struct{}
}

func (f *fakeKeys) KeyByHash(h [sha256.Size]byte) (*Key, error) {
	f.lookups.Add(1)
	k := f.keys[h]
	if f.entered != nil {
		gate := make(chan struct{})
		f.entered <- gate
		<-gate
	}
	return k, f.err
}

func newFakeKeyring(t *testing.T, secrets ...string) (*keyring, *fakeKeys) {
	t.Helper()
	f := &fakeKeys{keys: map[[sha256.Size]byte]*Key{}}
	for _, s := range secrets {
		h := HashKey([]byte(s))
		f.keys[h] = &Key{Name: s, Hash: h}
	}
	kr, err := newKeyring(f)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(kr.cache.Close)
	return kr, f
}

func TestUnknownKeyIsCachedNegatively(t *testing.T) {
	kr, f := newFakeKeyring(t)
	for range 5 {
		if k, err := kr.find([]byte("sk-garbage-0123456789"), time.Now()); k != nil || err != nil {
			t.Fatalf("garbage key: %v, %v", k, err)
		}
		kr.cache.Wait()
	}
	if n := f.lookups.Load(); n != 1 {
		t.Fatalf("%d source lookups for one unknown key, want 1", n)
	}
	// A key created for that hash later is found once the console says so.
	h := HashKey([]byte("sk-garbage-0123456789"))
	f.keys[h] = &Key{Name: "late", Hash: h}
	kr.invalidate(h)
	if k, _ := kr.find([]byte("sk-garbage-0123456789"), time.Now()); k == nil || k.Name != "late" {
		t.Fatalf("after invalidate: %v", k)
	}
}

func TestKeySourceErrorIsNotCached(t *testing.T) {
	kr, f := newFakeKeyring(t, "sk-known-0123456789")
	f.err = errors.New("database is down")
	if k, err := kr.find([]byte("sk-known-0123456789"), time.Now()); k != nil || err == nil {
		t.Fatalf("with the source failing: %v, %v", k, err)
	}
	kr.cache.Wait()
	f.err = nil
	if k, err := kr.find([]byte("sk-known-0123456789"), time.Now()); k == nil || err != nil {
		t.Fatalf("after the source recovered: %v, %v", k, err)
	}
}

// TestInvalidateDuringLookup: a lookup that read the key before it was
// revoked must not cache it after the revocation dropped it.
func TestInvalidateDuringLookup(t *testing.T) {
	kr, f := newFakeKeyring(t, "sk-revoked-0123456789")
	f.entered = make(chan chan struct{})
	done := make(chan *Key)
	go func() {
		k, _ := kr.find([]byte("sk-revoked-0123456789"), time.Now())
		done <- k
	}()
	gate := <-f.entered // the lookup has read the key
	h := HashKey([]byte("sk-revoked-0123456789"))
	delete(f.keys, h)
	kr.invalidate(h)
	close(gate)
	if k := <-done; k == nil {
		t.Fatal("the racing lookup itself still sees the key it read")
	}
	kr.cache.Wait()
	f.entered = nil
	if k, _ := kr.find([]byte("sk-revoked-0123456789"), time.Now()); k != nil {
		t.Fatal("revoked key came back from the cache")
	}
}

func TestCachedKeyExpires(t *testing.T) {
	kr, f := newFakeKeyring(t, "sk-expiring-0123456789")
	k := f.keys[HashKey([]byte("sk-expiring-0123456789"))]
	k.Expires = time.Now().Add(time.Hour)
	got, _ := kr.find([]byte("sk-expiring-0123456789"), time.Now())
	if got == nil || got.expired() {
		t.Fatalf("fresh key: %v", got)
	}
	kr.cache.Wait()
	k.Expires = time.Now().Add(-time.Second) // the cached pointer: as if time passed
	if got, _ := kr.find([]byte("sk-expiring-0123456789"), time.Now()); got == nil || !got.expired() {
		t.Fatalf("expired key must be reported expired, got %v", got)
	}
	if n := f.lookups.Load(); n != 1 {
		t.Fatalf("%d lookups: the second should come from the cache", n)
	}
}

// When the source fails, a key that worked keeps working; once the source
// answers again, its answer holds.
func TestKnownKeyServesWhileTheSourceFails(t *testing.T) {
	const secret = "sk-known-0123456789"
	kr, f := newFakeKeyring(t, secret)
	if k, err := kr.find([]byte(secret), time.Now()); k == nil || err != nil {
		t.Fatalf("first use: %v, %v", k, err)
	}
	kr.cache.Wait()
	h := HashKey([]byte(secret))
	kr.cache.Del(binary.LittleEndian.Uint64(h[:8])) // as if keyTTL passed
	later := time.Now().Add(keyTTL + time.Second)   // for the front too
	f.err = errors.New("database is down")
	if k, err := kr.find([]byte(secret), later); k == nil || err != nil {
		t.Fatalf("known key with the source down: %v, %v", k, err)
	}
	if n := f.lookups.Load(); n != 2 {
		t.Fatalf("%d lookups, want 2: the source is asked first", n)
	}
	f.err = nil
	delete(f.keys, h) // revoked meanwhile
	kr.cache.Wait()
	if k, err := kr.find([]byte(secret), later); k != nil || err != nil {
		t.Fatalf("a key the source no longer has: %v, %v", k, err)
	}
	f.err = errors.New("database is down again")
	kr.invalidate(h)
	if k, err := kr.find([]byte(secret), time.Now()); k != nil || err == nil {
		t.Fatalf("a key found gone is not served from memory: %v, %v", k, err)
	}
}

// TestKeyFront: a key the source found is served from the front, without
// the cache, until the cache's entry for it would expire (keyTTL), and
// never after its invalidation; a hash found nowhere stays out of it, and
// another key's invalidation leaves it.
func TestKeyFront(t *testing.T) {
	const secret, garbage = "sk-front-0123456789", "sk-garbage-0123456789"
	kr, f := newFakeKeyring(t, secret)
	if frontSlotOf(secret) == frontSlotOf(garbage) {
		t.Fatal("the two hashes share a slot: pick another garbage key")
	}
	now := time.Now()
	lookups := func(want int64) {
		t.Helper()
		if n := f.lookups.Load(); n != want {
			t.Fatalf("%d source lookups, want %d", n, want)
		}
	}
	find := func(s string, at time.Time, found bool) {
		t.Helper()
		kr.cache.Wait()
		h := HashKey([]byte(s))
		kr.cache.Del(binary.LittleEndian.Uint64(h[:8])) // only the front can answer without the source
		if k, err := kr.find([]byte(s), at); err != nil || (k != nil) != found {
			t.Fatalf("find(%q) at %v = %v, %v; want found %v", s, at.Sub(now), k, err, found)
		}
	}
	find(secret, now, true)
	find(secret, now.Add(keyTTL-time.Second), true)
	lookups(1)
	find(secret, now.Add(keyTTL+time.Second), true) // expired: asked again
	lookups(2)
	find(garbage, now, false)
	find(garbage, now, false) // not in the front: asked again
	lookups(4)
	find(secret, now, true)
	lookups(4)
	kr.invalidate(HashKey([]byte(garbage))) // another slot's: the front keeps the key
	find(secret, now, true)
	lookups(4)
	kr.invalidate(HashKey([]byte(secret)))
	find(secret, now, true)
	lookups(5)
}

// frontSlotOf is the front's slot of a secret's hash.
func frontSlotOf(secret string) uint64 {
	h := HashKey([]byte(secret))
	return binary.LittleEndian.Uint64(h[:8]) % frontSlots
}

// TestKeyFrontGarbageSpray: wrong keys, however many, do not push a key in
// use out of the front.
func TestKeyFrontGarbageSpray(t *testing.T) {
	const secret = "sk-hot-0123456789"
	kr, f := newFakeKeyring(t, secret)
	now := time.Now()
	if k, _ := kr.find([]byte(secret), now); k == nil {
		t.Fatal("key not found")
	}
	for i := range 4 * frontSlots {
		if k, _ := kr.find(fmt.Appendf(nil, "sk-garbage-%d", i), now); k != nil {
			t.Fatalf("garbage key %d found", i)
		}
	}
	kr.cache.Wait()
	h := HashKey([]byte(secret))
	kr.cache.Del(binary.LittleEndian.Uint64(h[:8])) // only the front can answer without the source
	before := f.lookups.Load()
	if k, _ := kr.find([]byte(secret), now); k == nil || f.lookups.Load() != before {
		t.Fatalf("hot key after the spray: %v, %d source lookups, want none", k, f.lookups.Load()-before)
	}
}

// TestLookupKeepsEntryWhenAnotherKeyIsInvalidated: an invalidation of a
// key in another slot does not make a racing lookup drop its cache entry.
func TestLookupKeepsEntryWhenAnotherKeyIsInvalidated(t *testing.T) {
	const secret, other = "sk-kept-0123456789", "sk-other-0123456789"
	if frontSlotOf(secret) == frontSlotOf(other) {
		t.Fatal("the two hashes share a slot: pick another key")
	}
	kr, f := newFakeKeyring(t, secret)
	f.entered = make(chan chan struct{})
	done := make(chan *Key)
	go func() {
		k, _ := kr.find([]byte(secret), time.Now())
		done <- k
	}()
	gate := <-f.entered
	kr.invalidate(HashKey([]byte(other)))
	close(gate)
	if k := <-done; k == nil {
		t.Fatal("key not found")
	}
	kr.cache.Wait()
	h := HashKey([]byte(secret))
	if _, ok := kr.cache.Get(binary.LittleEndian.Uint64(h[:8])); !ok {
		t.Fatal("another key's invalidation dropped this key's cache entry")
	}
}

// TestGoneAnswerClearsFront: a lookup that finds the key gone clears the
// front entry a racing earlier lookup stored for it.
func TestGoneAnswerClearsFront(t *testing.T) {
	const secret = "sk-gone-0123456789"
	kr, f := newFakeKeyring(t, secret)
	f.entered = make(chan chan struct{})
	first, second := make(chan *Key), make(chan *Key)
	find := func(into chan *Key) { k, _ := kr.find([]byte(secret), time.Now()); into <- k }
	go find(first)
	firstGate := <-f.entered // the first lookup has read the key
	delete(f.keys, HashKey([]byte(secret)))
	go find(second)
	secondGate := <-f.entered // the second has read nothing
	close(firstGate)
	if k := <-first; k == nil {
		t.Fatal("the first lookup read the key before it went")
	}
	close(secondGate)
	if k := <-second; k != nil {
		t.Fatal("the second lookup read the key after it went")
	}
	kr.cache.Wait()
	f.entered = nil
	if k, _ := kr.find([]byte(secret), time.Now()); k != nil {
		t.Fatal("a key found gone is still served from the front")
	}
}

// TestSameHash: sameHash tells hashes apart as subtle.ConstantTimeCompare
// does, for a difference of one bit at every place.
func TestSameHash(t *testing.T) {
	a := HashKey([]byte("sk-one"))
	if b := a; !sameHash(&a, &b) {
		t.Fatal("a hash differs from itself")
	}
	for i := range len(a) * 8 {
		b := a
		b[i/8] ^= 1 << (i % 8)
		want := subtle.ConstantTimeCompare(a[:], b[:]) == 1
		if got := sameHash(&a, &b); got != want {
			t.Fatalf("hashes differing in bit %d: sameHash %t, want %t", i, got, want)
		}
	}
}
