package proxy

import (
	"crypto/x509"
	"testing"
)

// TrustUpstreamCert has the https channels that gateways make until t
// ends trust cert, a test upstream's own.
func TrustUpstreamCert(t testing.TB, cert *x509.Certificate) {
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	old := upstreamRoots.Swap(pool)
	t.Cleanup(func() { upstreamRoots.Store(old) })
}
