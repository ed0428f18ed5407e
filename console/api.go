package console

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/store"
)

// apiError is an error the client can act on. It is sent as
// {"error":{"message":...,"field":...}} with its status.
type apiError struct {
	Status  int    `json:"-"`
	Message string `json:"message"`
	Field   string `json:"field,omitempty"` // the input field at fault, for 400
}

func (e *apiError) Error() string { return e.Message }

// badField reports bad input in one field of a form or query.
func badField(field, format string, args ...any) error {
	return &apiError{Status: fasthttp.StatusBadRequest, Message: fmt.Sprintf(format, args...), Field: field}
}

var (
	errNotLoggedIn = &apiError{Status: fasthttp.StatusUnauthorized, Message: "not logged in"}
	errAdminOnly   = &apiError{Status: fasthttp.StatusForbidden, Message: "only an admin may do this"}
	errBadCSRF     = &apiError{Status: fasthttp.StatusForbidden, Message: "missing or wrong X-CSRF-Token header"}
	errCrossOrigin = &apiError{Status: fasthttp.StatusForbidden, Message: "cross-origin request refused"}
	// errNotFound is also the answer for rows that exist but belong to
	// someone else, so ids cannot be probed.
	errNotFound = &apiError{Status: fasthttp.StatusNotFound, Message: "not found"}
)

// call is one authenticated API request.
type call struct {
	rc   *fasthttp.RequestCtx
	ctx  context.Context // for the store and the gateway; see withContext
	user *store.User
	sess *store.Session
}

// withContext runs f with a context for the store. A fasthttp RequestCtx
// is a context.Context too, but a recycled one: database/sql keeps
// watching a query's context from a goroutine of its own, which must not
// outlive the request, so the store gets a context ended with the handler.
func withContext(f func(ctx context.Context)) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	f(ctx)
}

func (cl *call) admin() bool { return cl.user.Role == store.RoleAdmin }

// reply writes v as the JSON body with status 200.
func (cl *call) reply(v any) error {
	writeJSON(cl.rc, fasthttp.StatusOK, v)
	return nil
}

func writeJSON(ctx *fasthttp.RequestCtx, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil { // only our own view types get here
		panic("BUG: console: cannot encode reply: " + err.Error())
	}
	ctx.SetStatusCode(status)
	ctx.SetContentType("application/json")
	ctx.Response.Header.Set(fasthttp.HeaderCacheControl, "no-store")
	ctx.Response.Header.Set("X-Content-Type-Options", "nosniff")
	ctx.SetBody(b)
}

// fail writes err as the API's error shape. Errors that are not an
// apiError or a known store error are logged and reported as a bare 500.
func (c *Console) fail(ctx *fasthttp.RequestCtx, err error) {
	var ae *apiError
	switch {
	case errors.As(err, &ae):
	case errors.Is(err, store.ErrNotFound):
		ae = errNotFound
	case errors.Is(err, store.ErrConflict):
		ae = &apiError{Status: fasthttp.StatusConflict, Message: "the name is already taken", Field: "name"}
	case errors.Is(err, store.ErrSecretKey):
		// The store's message names the environment variable to set.
		ae = &apiError{Status: fasthttp.StatusBadRequest, Message: err.Error(), Field: "api_keys"}
	default:
		c.log.Error("console: request failed", "path", string(ctx.Path()),
			"request_id", string(ctx.Response.Header.Peek("X-Request-Id")), "err", err)
		ae = &apiError{Status: fasthttp.StatusInternalServerError, Message: "internal error; see the gateway log"}
	}
	writeJSON(ctx, ae.Status, struct {
		Error *apiError `json:"error"`
	}{ae})
}

// maxFormBody bounds the body of a console form: the largest real one (a
// channel with many models and keys) is a few KiB.
const maxFormBody = 64 << 10

// decode reads the request body, a JSON object, into v. Unknown fields
// and wrong types are reported as 400s naming the field.
func decode(ctx *fasthttp.RequestCtx, v any) error {
	if len(ctx.PostBody()) > maxFormBody {
		return &apiError{Status: fasthttp.StatusRequestEntityTooLarge,
			Message: fmt.Sprintf("the body is larger than %d KiB", maxFormBody>>10)}
	}
	d := json.NewDecoder(bytes.NewReader(ctx.PostBody()))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return decodeError(err)
	}
	if d.More() {
		return badField("", "the body must hold one JSON object")
	}
	return nil
}

func decodeError(err error) error {
	var typ *json.UnmarshalTypeError
	var syn *json.SyntaxError
	switch {
	case errors.As(err, &typ) && typ.Field == "":
		return badField("", "the body must be a JSON object")
	case errors.As(err, &typ):
		kind := jsonKind(typ.Type.Kind().String())
		if kind == "number" && strings.HasPrefix(typ.Value, "number") { // a fraction, or out of range
			return badField(typ.Field, "%s must be a whole number within range", typ.Field)
		}
		return badField(typ.Field, "%s must be a JSON %s", typ.Field, kind)
	case errors.As(err, &syn):
		return badField("", "malformed JSON at byte %d", syn.Offset)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		return badField("", "the body must be a JSON object")
	}
	// encoding/json has no typed error for this one.
	if name, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		name = strings.Trim(name, `"`)
		return badField(name, "unknown field %q", name)
	}
	return badField("", "bad JSON: %v", err)
}

// jsonKind names a Go kind the way a JSON author would.
func jsonKind(goKind string) string {
	switch {
	case strings.HasPrefix(goKind, "int"), strings.HasPrefix(goKind, "uint"), strings.HasPrefix(goKind, "float"):
		return "number"
	case goKind == "slice":
		return "array"
	case goKind == "map", goKind == "struct":
		return "object"
	case goKind == "bool":
		return "boolean"
	}
	return goKind
}

// pathID reads a numeric id from the route. A malformed id cannot name a
// row, so it is a 404 like a missing one.
func pathID(ctx *fasthttp.RequestCtx, name string) (int64, error) {
	s, _ := ctx.UserValue(name).(string)
	id, err := strconv.ParseInt(s, 10, 64)
	if err != nil || id <= 0 {
		return 0, errNotFound
	}
	return id, nil
}
