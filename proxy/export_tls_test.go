package proxy

import (
	"crypto/tls"
	"crypto/x509"
	"net/http"
	"net/http/httptest"
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

// TrustedServerTLS is a test upstream's TLS configuration, with
// httptest's certificate, which https channels trust until t ends.
func TrustedServerTLS(t testing.TB) *tls.Config {
	s := httptest.NewUnstartedServer(http.NotFoundHandler())
	s.StartTLS()
	t.Cleanup(s.Close)
	TrustUpstreamCert(t, s.Certificate())
	return &tls.Config{Certificates: s.TLS.Certificates}
}
