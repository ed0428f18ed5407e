package console

import (
	"bytes"
	"net/netip"

	"github.com/valyala/fasthttp"
)

// clientIP is the address a request came from. It is the peer's address
// unless the peer is a trusted proxy: then X-Forwarded-For is read from the
// right, past every trusted proxy, and the first other address is the
// client. Entries left of it may be forged by the client and are never
// used, so a client cannot pick the IP its failed logins count against.
func (c *Console) clientIP(rc *fasthttp.RequestCtx) netip.Addr {
	ip, _ := netip.AddrFromSlice(rc.RemoteIP())
	ip = ip.Unmap()
	if !c.trusted(ip) {
		return ip
	}
	var hops []byte
	rc.Request.Header.VisitAll(func(k, v []byte) { // each header line, in order
		if bytes.EqualFold(k, []byte(fasthttp.HeaderXForwardedFor)) {
			if len(hops) > 0 {
				hops = append(hops, ',')
			}
			hops = append(hops, v...)
		}
	})
	for len(hops) > 0 {
		i := bytes.LastIndexByte(hops, ',')
		hop := bytes.TrimSpace(hops[i+1:])
		hops = hops[:max(i, 0)]
		a, err := netip.ParseAddr(string(hop))
		if err != nil {
			return ip // garbage from the proxy's side: stop at the last good hop
		}
		ip = a.Unmap()
		if !c.trusted(ip) {
			return ip
		}
	}
	return ip
}

func (c *Console) trusted(ip netip.Addr) bool {
	for _, p := range c.proxies {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}
