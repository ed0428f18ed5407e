package proxy

// SetKeep sets the hook that keeps translated Responses answers, for the
// tests of keepTranslated.
func SetKeep(g *Gateway, f func(id, status string, input, output, usage []byte)) {
	g.keep = func(_ *exchange, id, status, _ string, input, output, usage []byte) {
		f(id, status, input, output, usage)
	}
}
