// Package testutil is what the tests of several packages share: the
// allocation budget of the allocation tests, a buffer safe for concurrent
// writes (a log read while it is written), and the invariants of the
// streams the codec writes for a client, checked by the codec's golden
// tests and by the fuzz targets alike.
//
// Only _test.go files import it, and the load harness's mock upstream
// (bench), which answers with its EmbeddingAnswer. It depends on testing, the standard
// library, codec and codec/sse alone, and on nothing that does network I/O, so
// that the codec's tests may use it (codec/deps_test.go).
package testutil
