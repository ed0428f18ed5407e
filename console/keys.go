package console

import (
	"crypto/sha256"
	"errors"
	"time"

	"github.com/rosetta-gateway/rosetta/store"
)

const (
	// keyPrefix starts every console key, so a leaked one is easy to spot
	// (and to scan for in code).
	keyPrefix = "sk-rst-"
	// keyRandom is the number of random base62 characters after the
	// prefix: about 238 bits.
	keyRandom = 40
	// shownPrefix is how much of a secret the console keeps for display:
	// the prefix and four random characters.
	shownPrefix = len(keyPrefix) + 4
)

// newSecret makes a key's secret.
func newSecret() string { return keyPrefix + randomBase62(keyRandom) }

type spendView struct {
	Requests int64 `json:"requests"`
	Input    int64 `json:"input_tokens"`
	Output   int64 `json:"output_tokens"`
}

type keyView struct {
	ID      int64    `json:"id"`
	Name    string   `json:"name"`
	OwnerID int64    `json:"owner_id"`
	Owner   string   `json:"owner,omitempty"`
	Prefix  string   `json:"prefix"`
	Models  []string `json:"models"`
	RPM     int64    `json:"rpm"`
	TPM     int64    `json:"tpm"`
	// ModelLimits are the key's limits on one model, by its public name;
	// {} for none.
	ModelLimits map[string]store.Limits `json:"model_limits"`
	Expires     *time.Time              `json:"expires"`
	Enabled     bool                    `json:"enabled"`
	Usable      bool                    `json:"usable"` // enabled and not expired
	Created     time.Time               `json:"created"`
	LastUsed    *time.Time              `json:"last_used"`
	Spend       spendView               `json:"spend"`
	// Secret is set in the reply to a create only: the one time it is
	// shown.
	Secret string `json:"secret,omitempty"`
}

// timeOrNil turns the store's "zero means never" into JSON null.
func timeOrNil(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

func viewKey(k *store.Key, owner string, s store.Spend, now time.Time) keyView {
	modelLimits := k.ModelLimits
	if modelLimits == nil {
		modelLimits = map[string]store.Limits{} // {}, not null, for the page
	}
	return keyView{
		ID: k.ID, Name: k.Name, OwnerID: k.OwnerID, Owner: owner, Prefix: k.Prefix,
		Models: k.Models, RPM: k.RPM, TPM: k.TPM, ModelLimits: modelLimits, Expires: timeOrNil(k.Expires),
		Enabled: k.Enabled, Usable: k.Usable(now), Created: k.Created, LastUsed: timeOrNil(k.LastUsed),
		Spend: spendView{Requests: s.Requests, Input: s.Input, Output: s.Output},
	}
}

// keyInput is the keys form; on edit, absent fields stay as they are.
type keyInput struct {
	Name   *string   `json:"name"`
	Models *[]string `json:"models"`
	RPM    *int64    `json:"rpm"`
	TPM    *int64    `json:"tpm"`
	// ModelLimits replace the key's limits on one model, all of them: {}
	// removes them.
	ModelLimits *map[string]store.Limits `json:"model_limits"`
	Expires     *string                  `json:"expires"`  // RFC 3339; "" for never
	OwnerID     *int64                   `json:"owner_id"` // on create, admins only; default: the caller
}

func (in *keyInput) apply(k *store.Key, now time.Time) error {
	if in.Name != nil {
		if err := checkLabel("name", *in.Name); err != nil {
			return err
		}
		k.Name = *in.Name
	}
	if in.Models != nil {
		if err := checkModels("models", *in.Models); err != nil {
			return err
		}
		k.Models = *in.Models
	}
	if err := setLimits(in.RPM, in.TPM, &k.RPM, &k.TPM); err != nil {
		return err
	}
	if in.ModelLimits != nil {
		if err := checkModelLimits("model_limits", *in.ModelLimits); err != nil {
			return err
		}
		k.ModelLimits = *in.ModelLimits
		if len(k.ModelLimits) == 0 {
			k.ModelLimits = nil
		}
	}
	if in.Expires != nil {
		t, err := parseFuture("expires", *in.Expires, now)
		if err != nil {
			return err
		}
		k.Expires = t
	}
	return nil
}

// ownKey loads a key the caller may manage: their own, or any for an
// admin. Someone else's key is "not found", like a missing one.
func (c *Console) ownKey(cl *call) (*store.Key, error) {
	id, err := pathID(cl.rc, "id")
	if err != nil {
		return nil, err
	}
	k, err := c.st.Key(cl.ctx, id)
	if err != nil {
		return nil, err
	}
	if k.OwnerID != cl.user.ID && !cl.admin() {
		return nil, errNotFound
	}
	return k, nil
}

// visibleKeys is the caller's keys, or every key for an admin.
func (c *Console) visibleKeys(cl *call) ([]store.Key, error) {
	owner := cl.user.ID
	if cl.admin() {
		owner = 0
	}
	return c.st.Keys(cl.ctx, owner)
}

func (c *Console) listKeys(cl *call) error {
	keys, err := c.visibleKeys(cl)
	if err != nil {
		return err
	}
	ids := make([]int64, len(keys))
	for i := range keys {
		ids[i] = keys[i].ID
	}
	var spend map[int64]store.Spend
	if len(ids) > 0 { // an empty list would sum every key's usage
		if spend, err = c.st.Spend(cl.ctx, ids); err != nil {
			return err
		}
	}
	owners, err := c.ownerNames(cl)
	if err != nil {
		return err
	}
	now := c.now()
	views := make([]keyView, len(keys))
	for i := range keys {
		k := &keys[i]
		views[i] = viewKey(k, owners[k.OwnerID], spend[k.ID], now)
	}
	return cl.reply(map[string]any{"keys": views})
}

// ownerNames maps user ids to names, for an admin's view of every key.
func (c *Console) ownerNames(cl *call) (map[int64]string, error) {
	if !cl.admin() {
		return map[int64]string{cl.user.ID: cl.user.Name}, nil
	}
	users, err := c.st.Users(cl.ctx)
	names := make(map[int64]string, len(users))
	for _, u := range users {
		names[u.ID] = u.Name
	}
	return names, err
}

// replyKey sends one key with its spend.
func (c *Console) replyKey(cl *call, k *store.Key, secret string) error {
	spend, err := c.st.Spend(cl.ctx, []int64{k.ID})
	if err != nil {
		return err
	}
	owners, err := c.ownerNames(cl)
	if err != nil {
		return err
	}
	v := viewKey(k, owners[k.OwnerID], spend[k.ID], c.now())
	v.Secret = secret
	return cl.reply(v)
}

func (c *Console) getKey(cl *call) error {
	k, err := c.ownKey(cl)
	if err != nil {
		return err
	}
	return c.replyKey(cl, k, "")
}

func (c *Console) createKey(cl *call) error {
	var in keyInput
	if err := decode(cl.rc, &in); err != nil {
		return err
	}
	if in.Name == nil {
		return badField("name", "name is required")
	}
	k := &store.Key{OwnerID: cl.user.ID, Models: []string{"*"}, Enabled: true}
	if err := in.apply(k, c.now()); err != nil {
		return err
	}
	if err := c.setOwner(cl, k, in.OwnerID); err != nil {
		return err
	}
	secret := newSecret()
	k.Hash = sha256.Sum256([]byte(secret))
	k.Prefix = secret[:shownPrefix]
	if err := c.st.CreateKey(cl.ctx, k); err != nil {
		return err
	}
	return c.replyKey(cl, k, secret)
}

// setOwner lets an admin issue a key to another user.
func (c *Console) setOwner(cl *call, k *store.Key, owner *int64) error {
	if owner == nil || *owner == cl.user.ID {
		return nil
	}
	if !cl.admin() {
		return errAdminOnly
	}
	if _, err := c.st.User(cl.ctx, *owner); errors.Is(err, store.ErrNotFound) {
		return badField("owner_id", "there is no user with id %d", *owner)
	} else if err != nil {
		return err
	}
	k.OwnerID = *owner
	return nil
}

func (c *Console) updateKey(cl *call) error {
	k, err := c.ownKey(cl)
	if err != nil {
		return err
	}
	var in keyInput
	if err := decode(cl.rc, &in); err != nil {
		return err
	}
	if in.OwnerID != nil && *in.OwnerID != k.OwnerID {
		return badField("owner_id", "a key's owner cannot change; issue a new key instead")
	}
	if err := in.apply(k, c.now()); err != nil {
		return err
	}
	return c.saveKey(cl, k)
}

// saveKey stores an edited key and drops it from the gateway's caches so
// the change holds from the next request on.
func (c *Console) saveKey(cl *call, k *store.Key) error {
	if err := c.st.UpdateKey(cl.ctx, k); err != nil {
		return err
	}
	c.gw.KeyChanged(k.Hash)
	return c.replyKey(cl, k, "")
}

// revokeKey disables a key for good: the console offers no way back, since
// a key is revoked because it leaked.
func (c *Console) revokeKey(cl *call) error {
	k, err := c.ownKey(cl)
	if err != nil {
		return err
	}
	k.Enabled = false
	return c.saveKey(cl, k)
}

func (c *Console) deleteKey(cl *call) error {
	k, err := c.ownKey(cl)
	if err != nil {
		return err
	}
	if err := c.st.DeleteKey(cl.ctx, k.ID); err != nil {
		return err
	}
	c.gw.KeyChanged(k.Hash)
	return cl.reply(struct{}{})
}

// keyModels lists the models a key may use, with the channels behind each.
func (c *Console) keyModels(cl *call) error {
	k, err := c.ownKey(cl)
	if err != nil {
		return err
	}
	return c.replyModels(cl, k.Models)
}

// allModels lists every model the gateway serves: what a new key may be
// allowed, and what the home page's snippets may name before the caller
// has a key.
func (c *Console) allModels(cl *call) error { return c.replyModels(cl, []string{"*"}) }

func (c *Console) replyModels(cl *call, allow []string) error {
	models := c.gw.Models(allow)
	if models == nil {
		models = []Model{}
	}
	return cl.reply(map[string]any{"models": models})
}
