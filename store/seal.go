package store

// Channel API keys are sealed with AES-256-GCM before they reach the
// database, so a copy of the database (a backup, a stolen volume) does not
// hand out upstream credentials. A sealed value is
//
//	version (1 byte) | key fingerprint (4 bytes) | nonce (12 bytes) | ciphertext+tag
//
// The fingerprint names the key without revealing it, so a value sealed with
// another key fails with an error that says so instead of a bare
// "authentication failed". Version and fingerprint are authenticated as
// additional data: flipping them fails to open as well.

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// SecretKeyEnv is the environment variable that holds the key channel API
// keys are sealed with: 32 bytes, base64 or hex encoded.
const SecretKeyEnv = "ROSETTA_SECRET_KEY"

// SecretKeySize is the length of the key in bytes (AES-256).
const SecretKeySize = 32

// ErrSecretKey is returned when channel API keys cannot be sealed or opened:
// no secret key is configured, or the stored value was sealed with another.
var ErrSecretKey = errors.New("store: channel api keys cannot be sealed or opened")

const (
	sealVersion   = 1
	fingerprintSz = 4
	sealHeaderSz  = 1 + fingerprintSz
)

// Sealer encrypts and decrypts values with one AES-256-GCM key. It is safe
// for concurrent use.
type Sealer struct {
	aead        cipher.AEAD
	fingerprint [fingerprintSz]byte
}

// NewSealer returns a Sealer for a 32-byte key.
func NewSealer(key []byte) (*Sealer, error) {
	if len(key) != SecretKeySize {
		return nil, fmt.Errorf("%w: %s must be %d bytes, got %d", ErrSecretKey, SecretKeyEnv, SecretKeySize, len(key))
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	s := &Sealer{aead: aead}
	// Domain-separated so the fingerprint is not a hash anyone else computes
	// of the same key.
	sum := sha256.Sum256(append([]byte("rosetta secret key fingerprint\x00"), key...))
	copy(s.fingerprint[:], sum[:])
	return s, nil
}

// Seal encrypts plain with a fresh random nonce.
func (s *Sealer) Seal(plain []byte) []byte {
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		panic("BUG: crypto/rand failed: " + err.Error()) // rand.Read does not fail on supported systems
	}
	out := make([]byte, 0, sealHeaderSz+len(nonce)+len(plain)+s.aead.Overhead())
	out = append(out, sealVersion)
	out = append(out, s.fingerprint[:]...)
	out = append(out, nonce...)
	return s.aead.Seal(out, nonce, plain, out[:sealHeaderSz])
}

// Open decrypts a value made by Seal. A value sealed with another key, or
// altered, returns an error wrapping ErrSecretKey, never wrong plaintext.
func (s *Sealer) Open(sealed []byte) ([]byte, error) {
	ns := s.aead.NonceSize()
	if len(sealed) < sealHeaderSz+ns+s.aead.Overhead() || sealed[0] != sealVersion {
		return nil, fmt.Errorf("%w: not a sealed value (version or length)", ErrSecretKey)
	}
	if fp := sealed[1:sealHeaderSz]; !bytes.Equal(fp, s.fingerprint[:]) {
		return nil, fmt.Errorf("%w: sealed with another %s (key fingerprint %x, this process has %x)",
			ErrSecretKey, SecretKeyEnv, fp, s.fingerprint)
	}
	nonce := sealed[sealHeaderSz : sealHeaderSz+ns]
	plain, err := s.aead.Open(nil, nonce, sealed[sealHeaderSz+ns:], sealed[:sealHeaderSz])
	if err != nil {
		return nil, fmt.Errorf("%w: sealed value is corrupt: %v", ErrSecretKey, err)
	}
	return plain, nil
}

// ParseSecretKey decodes a key written as 64 hex digits or as base64
// (standard or URL alphabet, padded or not) of 32 bytes.
func ParseSecretKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if len(s) == 2*SecretKeySize {
		if k, err := hex.DecodeString(s); err == nil {
			return k, nil
		}
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if k, err := enc.DecodeString(s); err == nil && len(k) == SecretKeySize {
			return k, nil
		}
	}
	return nil, fmt.Errorf("%w: %s must be %d bytes as 64 hex digits or base64", ErrSecretKey, SecretKeyEnv, SecretKeySize)
}

// LoadSecretKey finds the key channel API keys are sealed with. env is the
// value of ROSETTA_SECRET_KEY and wins when set. Otherwise, for SQLite
// (sqlitePath set), the key lives in a file next to the database,
// sqlitePath+".key" (mode 0600), made on first use and reused after: the
// database and its key then travel together, and a copy of the database
// alone does not open the channel keys. For PostgreSQL (sqlitePath empty)
// there is no such place shared by every node, so with env unset it returns
// nil: the store then works, but refuses to save channels with API keys.
func LoadSecretKey(env, sqlitePath string) ([]byte, error) {
	if strings.TrimSpace(env) != "" {
		return ParseSecretKey(env)
	}
	if sqlitePath == "" {
		return nil, nil
	}
	return keyFile(sqlitePath + ".key")
}

// keyFile reads the key at path, or makes it when missing. Two processes
// starting at once on the same database must end with the same key, so the
// key is written to a temporary file and linked into place: link fails when
// the name exists, and the loser reads the winner's complete file.
func keyFile(path string) ([]byte, error) {
	if k, err := readKeyFile(path); !errors.Is(err, fs.ErrNotExist) {
		return k, err
	}
	key := make([]byte, SecretKeySize)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".rosetta-key-*") // mode 0600
	if err != nil {
		return nil, fmt.Errorf("store: cannot create secret key file: %w", err)
	}
	defer os.Remove(tmp.Name())
	_, err = tmp.WriteString(base64.StdEncoding.EncodeToString(key) + "\n")
	if err == nil {
		err = tmp.Sync() // the key must outlive a crash that keeps the database
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("store: cannot write secret key file: %w", err)
	}
	if err := os.Link(tmp.Name(), path); err != nil && !errors.Is(err, fs.ErrExist) {
		return nil, fmt.Errorf("store: cannot create secret key file: %w", err)
	}
	return readKeyFile(path)
}

func readKeyFile(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	k, err := ParseSecretKey(string(b))
	if err != nil {
		return nil, fmt.Errorf("store: secret key file %s: %w", path, err)
	}
	return k, nil
}
