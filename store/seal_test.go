package store

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

func TestSealer(t *testing.T) {
	s, err := NewSealer(randomKey(t))
	must(t, err)
	plain := []byte(`["sk-1","sk-2"]`)
	a, b := s.Seal(plain), s.Seal(plain)
	if bytes.Equal(a, b) {
		t.Fatal("two seals of one value are equal: the nonce is reused")
	}
	got, err := s.Open(a)
	must(t, err)
	wantEqual(t, "opened", got, plain)

	other, err := NewSealer(randomKey(t))
	must(t, err)
	_, err = other.Open(a)
	wantErr(t, "Open with another key", err, ErrSecretKey)
	if !strings.Contains(err.Error(), "another "+SecretKeyEnv) {
		t.Fatalf("the error does not say the key differs: %v", err)
	}
	for i := range a { // every byte is authenticated, header included
		c := bytes.Clone(a)
		c[i] ^= 0x80
		if got, err := s.Open(c); !errors.Is(err, ErrSecretKey) {
			t.Fatalf("flipping byte %d: got %q, %v", i, got, err)
		}
	}
	for _, short := range [][]byte{nil, {sealVersion}, a[:20]} {
		if _, err := s.Open(short); !errors.Is(err, ErrSecretKey) {
			t.Fatalf("Open(%x): %v", short, err)
		}
	}
	if _, err := NewSealer(make([]byte, 16)); !errors.Is(err, ErrSecretKey) {
		t.Fatalf("a 16-byte key: %v", err)
	}
}

func TestParseSecretKey(t *testing.T) {
	key := randomKey(t)
	for _, s := range []string{
		hex.EncodeToString(key), strings.ToUpper(hex.EncodeToString(key)),
		base64.StdEncoding.EncodeToString(key), base64.RawURLEncoding.EncodeToString(key),
		" " + base64.StdEncoding.EncodeToString(key) + "\n",
	} {
		got, err := ParseSecretKey(s)
		if err != nil || !bytes.Equal(got, key) {
			t.Fatalf("ParseSecretKey(%q) = %x, %v", s, got, err)
		}
	}
	for _, s := range []string{"", "short", hex.EncodeToString(key[:16]), base64.StdEncoding.EncodeToString(append(key, 1))} {
		if _, err := ParseSecretKey(s); !errors.Is(err, ErrSecretKey) || !strings.Contains(err.Error(), SecretKeyEnv) {
			t.Fatalf("ParseSecretKey(%q): %v", s, err)
		}
	}
}

func TestLoadSecretKey(t *testing.T) {
	dir := t.TempDir()
	db := filepath.Join(dir, "rosetta.db")
	env := randomKey(t)
	got, err := LoadSecretKey(hex.EncodeToString(env), db)
	must(t, err)
	wantEqual(t, "key from the environment", got, env)
	if _, err := os.Stat(db + ".key"); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a key file was made although the environment had the key: %v", err)
	}

	// SQLite without the variable: made once, 0600, then reused; several
	// processes starting at once agree on one key.
	keys, errs := make([][]byte, 8), make([]error, 8)
	var wg sync.WaitGroup
	for i := range keys {
		wg.Go(func() { keys[i], errs[i] = LoadSecretKey("", db) })
	}
	wg.Wait()
	for i, k := range keys {
		if errs[i] != nil || len(k) != SecretKeySize || !bytes.Equal(k, keys[0]) {
			t.Fatalf("caller %d got key %x, %v; caller 0 %x", i, k, errs[i], keys[0])
		}
	}
	info, err := os.Stat(db + ".key")
	must(t, err)
	if info.Mode().Perm() != 0o600 {
		t.Fatalf("key file mode %v, want 0600", info.Mode().Perm())
	}
	again, err := LoadSecretKey("", db)
	must(t, err)
	wantEqual(t, "key on the second start", again, keys[0])
	if left, _ := filepath.Glob(filepath.Join(dir, ".rosetta-key-*")); len(left) > 0 {
		t.Fatalf("temporary files left: %v", left)
	}

	// PostgreSQL without the variable: no key, and no error yet.
	got, err = LoadSecretKey("", "")
	if got != nil || err != nil {
		t.Fatalf("postgres without %s: %x, %v", SecretKeyEnv, got, err)
	}
	if _, err := LoadSecretKey("not a key", db); !errors.Is(err, ErrSecretKey) {
		t.Fatalf("a bad variable: %v", err)
	}
	must(t, os.WriteFile(db+".key", []byte("garbage"), 0o600))
	if _, err := LoadSecretKey("", db); !errors.Is(err, ErrSecretKey) || !strings.Contains(err.Error(), db+".key") {
		t.Fatalf("a bad key file: %v", err)
	}
}
