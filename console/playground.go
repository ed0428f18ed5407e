package console

import (
	"encoding/json"
	"net/url"
	"strings"

	"github.com/valyala/fasthttp"
)

// playgroundPaths are the gateway routes the playground may call: the
// three styles' generation endpoints, OpenAI's Responses API (a creation
// only: the calls on a stored response are the key owner's business, not a
// try-out's), and OpenAI's embeddings, image generation and speech. One
// ending in / is a prefix.
var playgroundPaths = []string{"/v1/chat/completions", "/v1/responses", "/v1/messages", "/v1beta/models/",
	"/v1/embeddings", "/v1/images/generations", "/v1/audio/speech"}

// attemptsHeader carries a playground request's upstream attempts back to
// the console's page, as URL-encoded JSON (header values are Latin-1, a
// cause may not be). Only the console's own requests get it.
const attemptsHeader = "X-Rosetta-Attempts"

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
	attempts := viewAttempts(c.gw.ServeAs(cl.rc, k))
	// The answer is written after this handler returns, a stream's body
	// after that: the header still goes out with it.
	if b, err := json.Marshal(attempts); err == nil && len(attempts) > 0 {
		cl.rc.Response.Header.Set(attemptsHeader, url.PathEscape(string(b)))
	}
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
