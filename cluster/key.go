package cluster

import (
	"encoding/base64"
	"fmt"
)

// ParseSecretKey reads a gossip encryption key as the variable
// cluster.secret_key_env names holds it: the base64 of 16, 24 or 32 bytes
// (`openssl rand -base64 32`), or those bytes as they are.
func ParseSecretKey(v string) ([]byte, error) {
	if b, err := base64.StdEncoding.DecodeString(v); err == nil && validKeyLen(len(b)) {
		return b, nil
	}
	if validKeyLen(len(v)) {
		return []byte(v), nil
	}
	return nil, fmt.Errorf("the gossip key must be 16, 24 or 32 bytes, or their base64; got %d characters", len(v))
}

func validKeyLen(n int) bool { return n == 16 || n == 24 || n == 32 }
