package proxy

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"time"

	"github.com/rosetta-gateway/rosetta/cluster/ratelimit"
	"github.com/rosetta-gateway/rosetta/store"
)

// storeLookupTimeout bounds a key lookup in the store; a request whose key
// is not cached waits at most this long before it gets a 500.
const storeLookupTimeout = 2 * time.Second

// storeKeys finds the keys made in the console. The keyring asks it only
// for a hash it has not cached.
type storeKeys struct{ st store.Store }

// KeyByHash returns the store's key with the hash, or nil when there is
// none, it was revoked or its owner is disabled. An expired key is
// returned: its expiry is checked on every use.
func (s storeKeys) KeyByHash(h [sha256.Size]byte) (*Key, error) {
	ctx, cancel := context.WithTimeout(context.Background(), storeLookupTimeout)
	defer cancel()
	k, err := s.st.KeyByHash(ctx, h)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, nil
	case err != nil:
		return nil, err
	case !k.Enabled || k.OwnerDisabled:
		return nil, nil
	}
	return keyFromStore(k), nil
}

// keyFromStore is a store key as the request path sees it. An empty
// allow-list allows nothing (the console never saves one).
func keyFromStore(k *store.Key) *Key {
	key := &Key{ID: k.ID, Name: k.Name, escaped: escapeName(k.Name), Hash: k.Hash, Models: k.Models, Expires: k.Expires,
		Limits:   ratelimit.Limits{RPM: k.RPM, TPM: k.TPM},
		limitKey: "key#" + hex.EncodeToString(k.Hash[:8])}
	for model, lim := range k.ModelLimits {
		key.limitOnModel(model, ratelimit.Limits(lim))
	}
	return key
}
