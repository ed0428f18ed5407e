package console

import (
	"strings"

	"github.com/valyala/fasthttp"
)

// playgroundPaths are the gateway routes the playground may call: the
// three styles' generation endpoints. One ending in / is a prefix.
var playgroundPaths = []string{"/v1/chat/completions", "/v1/messages", "/v1beta/models/"}

// playground runs a model call as one of the caller's keys. The request,
// in any of the three styles, arrives at
// /console/api/playground/{key id}/{gateway path} and is handed to the
// gateway as if sent to the gateway path with the key's secret, which the
// console does not have. The reply, streamed or not, goes straight back.
func (c *Console) playground(cl *call) error {
	k, err := c.ownKey(cl)
	if err != nil {
		return err
	}
	if !k.Usable(c.now()) {
		return &apiError{Status: fasthttp.StatusForbidden, Message: "this key is revoked or expired"}
	}
	target, _ := cl.rc.UserValue("path").(string)
	target = "/" + strings.TrimPrefix(target, "/")
	if !allowedTarget(target) {
		return &apiError{Status: fasthttp.StatusNotFound, Message: "the playground can call " + strings.Join(playgroundPaths, ", ") + "…"}
	}
	req := &cl.rc.Request
	if q := cl.rc.URI().QueryString(); len(q) > 0 {
		target += "?" + string(q)
	}
	req.SetRequestURI(target)
	// The console's own credentials are no business of the gateway's
	// handler, nor of any upstream.
	req.Header.DelCookie(sessionCookie)
	req.Header.Del(csrfHeader)
	c.gw.ServeAs(cl.rc, k)
	return nil
}

func allowedTarget(path string) bool {
	if strings.Contains(path, "..") {
		return false // would leave the route once the gateway normalizes it
	}
	for _, p := range playgroundPaths {
		if prefix, ok := strings.CutSuffix(p, "/"); ok {
			// A prefix: some model must follow it.
			if rest, ok := strings.CutPrefix(path, prefix+"/"); ok && rest != "" {
				return true
			}
		} else if path == p {
			return true
		}
	}
	return false
}
