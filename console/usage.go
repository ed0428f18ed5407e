package console

import (
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/rosetta-gateway/rosetta/store"
)

type usageView struct {
	ID           int64     `json:"id"`
	Time         time.Time `json:"time"`
	KeyID        int64     `json:"key_id"`
	Key          string    `json:"key"`
	Model        string    `json:"model"`
	Channel      string    `json:"channel"`
	Status       int       `json:"status"`
	Input        int64     `json:"input_tokens"`
	Output       int64     `json:"output_tokens"`
	Cached       int64     `json:"cached_tokens"`
	Reasoning    int64     `json:"reasoning_tokens"`
	LatencyMS    float64   `json:"latency_ms"`
	FirstTokenMS float64   `json:"first_token_ms"`
	RequestID    string    `json:"request_id"`
	Style        string    `json:"style"`
	Endpoint     string    `json:"endpoint"` // "" for rows from before it was recorded
	Units        int64     `json:"units"`    // in unit: characters, seconds, search_units, images; 0 and "" when none
	Unit         string    `json:"unit"`
	// Attempts are the request's upstream attempts when one of them
	// failed, kept with the row.
	Attempts []Attempt `json:"attempts,omitempty"`
}

func viewUsage(u *store.Usage) usageView {
	return usageView{
		ID: u.ID, Time: u.Time, KeyID: u.KeyID, Key: u.KeyName, Model: u.Model, Channel: u.Channel,
		Status: u.Status, Input: u.Input, Output: u.Output, Cached: u.Cached, Reasoning: u.Reasoning,
		LatencyMS: ms(u.Latency), FirstTokenMS: ms(u.FirstToken), RequestID: u.RequestID, Style: u.ClientStyle,
		Endpoint: u.Endpoint, Units: u.Units, Unit: u.Unit, Attempts: viewAttempts(u.Attempts),
	}
}

type bucketView struct {
	Start     time.Time `json:"start"`
	KeyID     int64     `json:"key_id"`
	Model     string    `json:"model"`
	Endpoint  *string   `json:"endpoint,omitempty"` // with group=endpoint only, as are units and unit
	Units     *int64    `json:"units,omitempty"`
	Unit      *string   `json:"unit,omitempty"`
	Requests  int64     `json:"requests"`
	Errors    int64     `json:"errors"`
	Input     int64     `json:"input_tokens"`
	Output    int64     `json:"output_tokens"`
	Cached    int64     `json:"cached_tokens"`
	Reasoning int64     `json:"reasoning_tokens"`
	P50MS     float64   `json:"p50_ms"`
	P99MS     float64   `json:"p99_ms"`
}

func viewBucket(b *store.UsageBucket, byEndpoint bool) bucketView {
	v := bucketView{
		Start: b.Start, KeyID: b.KeyID, Model: b.Model, Requests: b.Requests, Errors: b.Errors,
		Input: b.Input, Output: b.Output, Cached: b.Cached, Reasoning: b.Reasoning,
		P50MS: ms(b.LatencyP50), P99MS: ms(b.LatencyP99),
	}
	if byEndpoint {
		v.Endpoint, v.Units, v.Unit = &b.Endpoint, &b.Units, &b.Unit
	}
	return v
}

// query reads typed query parameters, keeping the first error, which
// names its parameter.
type query struct {
	args *fasthttp.Args
	err  error
}

func (q *query) str(name string) string { return string(q.args.Peek(name)) }

func (q *query) int(name string, lo, hi int64) int64 {
	s := q.str(name)
	if s == "" || q.err != nil {
		return 0
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < lo || n > hi {
		q.err = badField(name, "%s must be a whole number from %d to %d", name, lo, hi)
	}
	return n
}

func (q *query) time(name string, def time.Time) time.Time {
	s := q.str(name)
	if s == "" || q.err != nil {
		return def
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		q.err = badField(name, "%s must be an RFC 3339 time such as 2030-01-02T15:04:05Z", name)
	}
	return t
}

// usageFilter reads the filters of the usage routes and narrows them to
// the rows the caller may see. none is true when that is no row at all.
func (c *Console) usageFilter(cl *call, defaultSpan time.Duration) (f store.UsageFilter, none bool, err error) {
	q := &query{args: cl.rc.QueryArgs()}
	now := c.now()
	f.To = q.time("to", time.Time{})
	f.From = q.time("from", time.Time{})
	if defaultSpan > 0 && f.To.IsZero() {
		f.To = now
	}
	if defaultSpan > 0 && f.From.IsZero() {
		f.From = f.To.Add(-defaultSpan)
	}
	keyID := q.int("key_id", 1, 1<<62)
	f.Model, f.Channel, f.Endpoint = q.str("model"), q.str("channel"), q.str("endpoint")
	f.Status = int(q.int("status", 100, 599))
	f.Limit = int(q.int("limit", 1, 10000))
	f.BeforeID = q.int("before_id", 1, 1<<62)
	if q.err != nil {
		return f, false, q.err
	}
	if !f.From.IsZero() && !f.To.IsZero() && !f.From.Before(f.To) {
		return f, false, badField("from", "from must be before to")
	}
	if keyID != 0 {
		f.KeyIDs = []int64{keyID}
	}
	if cl.admin() {
		return f, false, nil
	}
	return c.narrowToOwnKeys(cl, f, keyID)
}

// narrowToOwnKeys limits a user's filter to their own keys. A key of
// someone else is "not found", as on the keys routes.
func (c *Console) narrowToOwnKeys(cl *call, f store.UsageFilter, keyID int64) (store.UsageFilter, bool, error) {
	keys, err := c.st.Keys(cl.ctx, cl.user.ID)
	if err != nil {
		return f, false, err
	}
	own := make([]int64, len(keys))
	for i := range keys {
		own[i] = keys[i].ID
	}
	if keyID != 0 && !slices.Contains(own, keyID) {
		return f, false, errNotFound
	}
	if keyID == 0 {
		f.KeyIDs = own
	}
	// An empty KeyIDs means every key to the store: never send that for a
	// user.
	return f, len(f.KeyIDs) == 0, nil
}

func (c *Console) usageRows(cl *call) error {
	f, none, err := c.usageFilter(cl, 0)
	if err != nil {
		return err
	}
	views := []usageView{}
	if !none {
		rows, err := c.st.Usage(cl.ctx, f)
		if err != nil {
			return err
		}
		for i := range rows {
			views = append(views, viewUsage(&rows[i]))
		}
	}
	return cl.reply(map[string]any{"rows": views})
}

// usageEndpoints lists the endpoints the usage pages filter by, as the
// gateway names them in its rows: the page keeps no list of its own.
func (c *Console) usageEndpoints(cl *call) error {
	return cl.reply(map[string]any{"endpoints": c.gw.UsageEndpoints()})
}

// maxLatencyRows bounds the rows ranked for the latency per endpoint:
// 8 bytes each in memory, and about 0.2–0.4 s per 100,000 on SQLite on
// the 2-core test machine (BenchmarkUsageLatency). A range with more shows
// no latency rather than a figure of part of it.
var maxLatencyRows = 500000

type latencyView struct {
	Endpoint string  `json:"endpoint"` // "" for rows from before it was recorded
	Requests int64   `json:"requests"`
	P50MS    float64 `json:"p50_ms"`
	P95MS    float64 `json:"p95_ms"`
}

// usageLatency is the median and p95 latency of each endpoint's requests
// over the range (the last 24 hours by default), with the chart filters;
// ranked is false, and endpoints empty, when the range holds more than
// max_rows requests.
func (c *Console) usageLatency(cl *call) error {
	f, none, err := c.usageFilter(cl, 24*time.Hour)
	if err != nil {
		return err
	}
	views := []latencyView{}
	ranked := true
	if !none {
		list, err := c.st.UsageLatency(cl.ctx, f, maxLatencyRows)
		if err != nil && !errors.Is(err, store.ErrTooManyRows) {
			return err
		}
		ranked = err == nil
		for _, l := range list {
			views = append(views, latencyView{Endpoint: l.Endpoint, Requests: l.Requests, P50MS: ms(l.P50), P95MS: ms(l.P95)})
		}
	}
	return cl.reply(map[string]any{"endpoints": views, "ranked": ranked, "max_rows": maxLatencyRows})
}

// bucketWidths are the widths usageBuckets picks from when none is asked
// for: the narrowest that cuts the range into at most 60 buckets.
var bucketWidths = []time.Duration{
	time.Minute, 5 * time.Minute, 15 * time.Minute, time.Hour, 3 * time.Hour, 6 * time.Hour, 24 * time.Hour,
}

const maxBuckets = 60

func pickWidth(span time.Duration) time.Duration {
	for _, w := range bucketWidths {
		if span/w <= maxBuckets {
			return w
		}
	}
	return bucketWidths[len(bucketWidths)-1]
}

// bucketWidth is the width asked for in the query, or a picked one.
func bucketWidth(cl *call, span time.Duration) (time.Duration, error) {
	s := string(cl.rc.QueryArgs().Peek("width"))
	if s == "" {
		return pickWidth(span), nil
	}
	w, err := time.ParseDuration(s)
	if err != nil || w < 10*time.Second {
		return 0, badField("width", "width must be a duration of 10s or more, such as 5m")
	}
	if span/w > 2000 {
		return 0, badField("width", "width %s cuts the range into more than 2000 buckets", s)
	}
	return w, nil
}

type bucketsView struct {
	From    time.Time        `json:"from"`
	To      time.Time        `json:"to"`
	WidthMS float64          `json:"width_ms"`
	Buckets []bucketView     `json:"buckets"`
	Keys    map[int64]string `json:"keys"` // names of the keys in the buckets
}

// usageBuckets sums usage over time per key and model, and per endpoint
// with group=endpoint; the range defaults to the last 24 hours.
func (c *Console) usageBuckets(cl *call) error {
	f, none, err := c.usageFilter(cl, 24*time.Hour)
	if err != nil {
		return err
	}
	switch group := string(cl.rc.QueryArgs().Peek("group")); group {
	case "":
	case "endpoint":
		f.ByEndpoint = true
	default:
		return badField("group", "group must be endpoint, or absent")
	}
	w, err := bucketWidth(cl, f.To.Sub(f.From))
	if err != nil {
		return err
	}
	v := bucketsView{From: f.From, To: f.To, WidthMS: ms(w), Buckets: []bucketView{}, Keys: map[int64]string{}}
	if !none {
		if err := c.fillBuckets(cl, f, w, &v); err != nil {
			return err
		}
	}
	return cl.reply(v)
}

func (c *Console) fillBuckets(cl *call, f store.UsageFilter, w time.Duration, v *bucketsView) error {
	buckets, err := c.st.UsageBuckets(cl.ctx, f, w)
	if err != nil {
		return err
	}
	keys, err := c.visibleKeys(cl)
	if err != nil {
		return err
	}
	names := map[int64]string{}
	for i := range keys {
		names[keys[i].ID] = keys[i].Name
	}
	for i := range buckets {
		b := &buckets[i]
		v.Buckets = append(v.Buckets, viewBucket(b, f.ByEndpoint))
		if name, ok := names[b.KeyID]; ok {
			v.Keys[b.KeyID] = name
		}
	}
	return nil
}
