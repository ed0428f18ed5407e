package console

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"

	"golang.org/x/crypto/argon2"
)

// argonParams are argon2id's cost settings. They are written into every
// hash, so raising them later leaves old hashes verifiable.
type argonParams struct {
	Time    uint32 // passes
	Memory  uint32 // KiB
	Threads uint8
}

// hashParams is OWASP's argon2id baseline (19 MiB, 2 passes, 1 lane):
// about 40 ms a login on the build machine, which the login limiter keeps
// from becoming a way to burn the gateway's CPU. Tests lower it.
var hashParams = argonParams{Time: 2, Memory: 19 * 1024, Threads: 1}

const (
	saltLen     = 16
	argonKeyLen = 32
	minPassword = 8
)

var errBadHash = errors.New("console: malformed password hash")

// argonSlots bounds the argon2id computations running at once to the
// CPUs: each holds its memory cost (19 MiB) while it runs, so a burst of
// logins queues here instead of growing the heap by 19 MiB a request.
var argonSlots = make(chan struct{}, runtime.GOMAXPROCS(0))

// argonKey is argon2.IDKey in one of the argonSlots.
func argonKey(password, salt []byte, p argonParams, keyLen uint32) []byte {
	argonSlots <- struct{}{}
	defer func() { <-argonSlots }()
	return argon2.IDKey(password, salt, p.Time, p.Memory, p.Threads, keyLen)
}

// hashPassword returns the password's argon2id hash in the PHC string
// form: $argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>.
func hashPassword(password string) string {
	salt := make([]byte, saltLen)
	rand.Read(salt) //nolint:errcheck // crypto/rand never fails on Linux
	p := hashParams
	sum := argonKey([]byte(password), salt, p, argonKeyLen)
	b64 := base64.RawStdEncoding
	return fmt.Sprintf("$argon2id$v=%d$m=%d,t=%d,p=%d$%s$%s",
		argon2.Version, p.Memory, p.Time, p.Threads, b64.EncodeToString(salt), b64.EncodeToString(sum))
}

// checkPassword reports whether password matches the encoded hash, using
// the parameters stored in the hash.
func checkPassword(encoded, password string) (bool, error) {
	parts := strings.Split(encoded, "$")
	if len(parts) != 6 || parts[1] != "argon2id" || parts[2] != fmt.Sprintf("v=%d", argon2.Version) {
		return false, errBadHash
	}
	var p argonParams
	if _, err := fmt.Sscanf(parts[3], "m=%d,t=%d,p=%d", &p.Memory, &p.Time, &p.Threads); err != nil {
		return false, errBadHash
	}
	b64 := base64.RawStdEncoding
	salt, err1 := b64.DecodeString(parts[4])
	want, err2 := b64.DecodeString(parts[5])
	if err1 != nil || err2 != nil || len(want) == 0 || p.Time == 0 || p.Threads == 0 {
		return false, errBadHash
	}
	got := argonKey([]byte(password), salt, p, uint32(len(want)))
	return subtle.ConstantTimeCompare(got, want) == 1, nil
}

// dummyHash is checked against when a login names no existing user, so
// that the answer takes as long as for a wrong password and does not tell
// which user names exist.
var dummyHash = sync.OnceValue(func() string { return hashPassword("rosetta-dummy-password") })

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// randomBase62 returns n uniformly random characters of [0-9A-Za-z].
func randomBase62(n int) string {
	out := make([]byte, 0, n)
	buf := make([]byte, n+n/4+8)
	for len(out) < n {
		rand.Read(buf) //nolint:errcheck // crypto/rand never fails on Linux
		for _, b := range buf {
			// 248 = 4×62: dropping the bytes above keeps every character
			// equally likely.
			if b < 248 && len(out) < n {
				out = append(out, base62[b%62])
			}
		}
	}
	return string(out)
}

// randomToken returns 32 random bytes, URL-safe base64: session cookies
// and CSRF tokens.
func randomToken() string {
	var b [32]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand never fails on Linux
	return base64.RawURLEncoding.EncodeToString(b[:])
}
