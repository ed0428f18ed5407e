package proxy

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/dgraph-io/ristretto/v2"

	"github.com/rosetta-gateway/rosetta/cluster/ratelimit"
	"github.com/rosetta-gateway/rosetta/config"
)

// Key is a gateway key as the request path sees it. The secret itself is
// never kept: only its SHA-256 hash.
type Key struct {
	ID      int64 // the store's key id, for usage rows; 0 for a key of the configuration file
	Name    string
	Hash    [sha256.Size]byte
	Models  []string // allow-list: exact names, "*", or a prefix ending in "*"
	Limits  ratelimit.Limits
	Expires time.Time // zero: never

	// limitKey names the key's rate-limit counters, the same on every
	// node: "key:<name>" for a key of the configuration file,
	// "key#<hash prefix>" for a store key, whose name need not be unique
	// and whose id differs between the SQLite files of a fleet.
	limitKey string
	// modelLimits are the key's limits on one public model, by name.
	modelLimits map[string]modelLimit
	// unknown marks a cached negative answer: no key has this hash.
	unknown bool
	// escaped is Name as the access line writes it (escapeName); "" for
	// a key made elsewhere (a KeySource's), whose name is escaped there.
	escaped string
}

// expired reports whether the key's expiry has passed. A cached key is
// checked on every use: the cache may hold it beyond its expiry.
func (k *Key) expired() bool {
	return !k.Expires.IsZero() && !time.Now().Before(k.Expires)
}

// Allows reports whether the key may use the public model name.
func (k *Key) Allows(model []byte) bool {
	for _, m := range k.Models {
		if p, ok := strings.CutSuffix(m, "*"); ok {
			if bytes.HasPrefix(model, []byte(p)) {
				return true
			}
		} else if string(model) == m {
			return true
		}
	}
	return false
}

// HashKey returns the SHA-256 hash under which a key secret is stored.
func HashKey(secret []byte) [sha256.Size]byte { return sha256.Sum256(secret) }

// KeySource finds keys by hash: the configuration's static keys, or a store.
type KeySource interface {
	// KeyByHash returns the key with the hash, or nil. It must be safe for
	// concurrent use.
	KeyByHash(hash [sha256.Size]byte) (*Key, error)
}

// staticKeys are the keys of the configuration file.
type staticKeys map[[sha256.Size]byte]*Key

// modelLimit is a key's limits on one model, and the name of their
// counters.
type modelLimit struct {
	limits   ratelimit.Limits
	limitKey string
}

// limitOnModel sets the key's limits on one model, whose counters are
// named after the key's own. The key's limitKey must be set.
func (k *Key) limitOnModel(model string, lim ratelimit.Limits) {
	if k.modelLimits == nil {
		k.modelLimits = map[string]modelLimit{}
	}
	k.modelLimits[model] = modelLimit{lim, k.limitKey + "\x00" + model}
}

func newStaticKeys(keys []config.Key) staticKeys {
	s := make(staticKeys, len(keys))
	for _, k := range keys {
		h := HashKey([]byte(k.Key))
		key := &Key{Name: k.Name, escaped: escapeName(k.Name), Hash: h, Models: k.Models, limitKey: "key:" + k.Name,
			Limits: ratelimit.Limits{RPM: int64(k.RPM), TPM: int64(k.TPM)}}
		for model, lim := range k.ModelLimits {
			key.limitOnModel(model, ratelimit.Limits{RPM: int64(lim.RPM), TPM: int64(lim.TPM)})
		}
		s[h] = key
	}
	return s
}

func (s staticKeys) KeyByHash(h [sha256.Size]byte) (*Key, error) { return s[h], nil }

// Cache lifetimes. A key found stays cached for keyTTL; a change on this
// node drops the entry at once, one on another node at the next poll of
// the store's key changes (watchStore), and keyTTL bounds it when polling
// is off or failing. A hash found nowhere is remembered for unknownTTL, so
// that a client retrying a wrong key does not cost a store query per
// request.
const (
	keyTTL     = 30 * time.Second
	unknownTTL = 5 * time.Second
)

// keyring authenticates secrets: hash, then the ristretto cache, then the
// source. The cache is keyed by the hash's first 8 bytes; the full hash is
// compared in constant time before a cached entry is trusted.
type keyring struct {
	cache *ristretto.Cache[uint64, *Key]
	src   KeySource
	// known holds, by hash, every key the source has returned and not
	// since dropped: the answer when the source fails (the store is down),
	// so a key that worked keeps working instead of getting a 500. It
	// holds only real keys, each until it is invalidated or found gone.
	known sync.Map // [sha256.Size]byte → *Key
	// front holds the keys the source found last, each in the slot of its
	// hash's first bits until its entry in cache expires: a hit costs two
	// loads and the hash's comparison, where cache.Get takes a lock, a pool
	// round trip, its access counters and a clock reading. Hashes found
	// nowhere stay out, so that a spray of wrong keys cannot push the keys
	// in use out of it.
	front [frontSlots]frontSlot
}

// frontSlot is one of the front's slots. An entry serves only while the
// slot's gen is what it was before the source was asked: invalidate bumps
// it for its key's slot alone, and so also turns away the entry of a
// lookup that read the source before the change and stores after it. The
// same gen tells such a lookup to drop what it put in cache and known, so
// a revoked key cannot come back for keyTTL, while invalidations of keys
// in other slots leave lookups alone.
type frontSlot struct {
	entry atomic.Pointer[frontEntry]
	gen   atomic.Uint64
}

// frontSlots is the front's size: keys in use at once on a node, with room.
const frontSlots = 256

// frontEntry is a key the source found, kept until until.
type frontEntry struct {
	hash  [sha256.Size]byte
	key   *Key
	until time.Time
	gen   uint64
}

func newKeyring(src KeySource) (*keyring, error) {
	c, err := ristretto.NewCache(&ristretto.Config[uint64, *Key]{
		NumCounters:        1 << 17, // ten times the keys we expect to hold
		MaxCost:            1 << 14, // keys, each of cost 1
		BufferItems:        64,
		IgnoreInternalCost: true,
	})
	if err != nil {
		return nil, err
	}
	return &keyring{cache: c, src: src}, nil
}

// find returns the key whose secret this is, or nil, as of now (the
// request's start). The key may have expired: the caller checks, to say so.
func (kr *keyring) find(secret []byte, now time.Time) (*Key, error) {
	if len(secret) == 0 {
		return nil, nil
	}
	h := HashKey(secret)
	id := binary.LittleEndian.Uint64(h[:8])
	slot := &kr.front[id%frontSlots]
	if e := slot.entry.Load(); e != nil && e.gen == slot.gen.Load() && now.Before(e.until) &&
		sameHash(&e.hash, &h) {
		return e.key, nil
	}
	if k, ok := kr.cache.Get(id); ok && sameHash(&k.Hash, &h) {
		if k.unknown {
			return nil, nil
		}
		return k, nil
	}
	return kr.lookup(h, id)
}

// sameHash reports whether a and b are the same hash, in constant time as
// subtle.ConstantTimeCompare is (every word read, no branch on their
// bytes), a word at a time where that goes byte by byte: 200 instructions
// less a request (BenchmarkKeyLookup).
func sameHash(a, b *[sha256.Size]byte) bool {
	var diff uint64
	for i := 0; i < sha256.Size; i += 8 {
		diff |= binary.LittleEndian.Uint64(a[i:]) ^ binary.LittleEndian.Uint64(b[i:])
	}
	return diff == 0
}

// lookup asks the source for a hash that is not cached, and caches the answer.
func (kr *keyring) lookup(h [sha256.Size]byte, id uint64) (*Key, error) {
	slot := &kr.front[id%frontSlots]
	gen := slot.gen.Load()
	k, err := kr.src.KeyByHash(h)
	if err != nil { // not cached: the next request asks again
		if last, ok := kr.known.Load(h); ok {
			return last.(*Key), nil
		}
		return nil, err
	}
	entry, ttl := k, keyTTL
	if k == nil || !sameHash(&k.Hash, &h) {
		k, entry, ttl = nil, &Key{Hash: h, unknown: true}, unknownTTL
		kr.known.Delete(h)
		// The key is gone: a racing earlier lookup may have put it in
		// front, and its Set may still be in ristretto's buffer, where it
		// would win over this one's (a second Set of a key not yet in is
		// refused); either would serve the key until keyTTL.
		if e := slot.entry.Load(); e != nil && sameHash(&e.hash, &h) {
			slot.entry.CompareAndSwap(e, nil)
		}
		kr.cache.Del(id)
	} else {
		kr.known.Store(h, k)
		slot.entry.Store(&frontEntry{hash: h, key: k, until: time.Now().Add(ttl), gen: gen})
	}
	kr.cache.SetWithTTL(id, entry, 1, ttl)
	if slot.gen.Load() != gen {
		kr.cache.Del(id)
		kr.known.Delete(h)
	}
	return k, nil
}

// invalidate drops a key from the cache, so that a revoked key fails at once.
// ristretto applies a Set later, from a buffer: a Set still buffered when
// Del runs would show its entry until the buffered delete follows it, so
// invalidate waits for the buffer (changes are rare; requests never wait).
func (kr *keyring) invalidate(h [sha256.Size]byte) {
	id := binary.LittleEndian.Uint64(h[:8])
	kr.front[id%frontSlots].gen.Add(1) // before the drop: a racing lookup's entry carries the old one
	kr.cache.Del(id)
	kr.cache.Wait()
	kr.known.Delete(h)
}

var strBearer = []byte("bearer ")

// bearer returns the token of an "Authorization: Bearer <token>" value.
// The scheme as nearly every client spells it is compared as one word:
// bytes.EqualFold walks it byte by byte, ~100 instructions a request.
func bearer(v []byte) []byte {
	if len(v) <= len(strBearer) {
		return nil
	}
	if string(v[:len(strBearer)]) != "Bearer " && !bytes.EqualFold(v[:len(strBearer)], strBearer) {
		return nil
	}
	return bytes.TrimSpace(v[len(strBearer):])
}
