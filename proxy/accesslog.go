package proxy

import (
	"context"
	"io"
	"log/slog"
	"strconv"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// accessLog writes one line per finished request in the shape of slog's
// JSON or text handler (same keys, same value formats), appended by hand
// into a pooled buffer (lines): no allocation per request, where a
// slog call costs about a dozen. The line goes to out in one Write; out
// should be an asynclog.Writer, so that a request never waits on it.
type accessLog struct {
	out  io.Writer
	text bool // slog's text shape (key=value) instead of JSON
}

// newAccessLog returns nil when out is nil: the gateway then logs requests
// through its slog logger.
func newAccessLog(out io.Writer, format string) *accessLog {
	if out == nil {
		return nil
	}
	return &accessLog{out: out, text: format == "text"}
}

// write appends x's line to buf, writes it, and returns buf for reuse.
func (l *accessLog) write(buf []byte, x *exchange, now time.Time) []byte {
	if l.text {
		buf = appendTextLine(buf[:0], x, now)
	} else {
		buf = appendJSONLine(buf[:0], x, now)
	}
	l.out.Write(buf) //nolint:errcheck // nowhere left to report a failing log
	if cap(buf) > maxKeptLine {
		return nil // a line with a huge error message: not kept in the pool
	}
	return buf
}

const maxKeptLine = 16 << 10

// The shapes and levels of an access line, as indexes of a lineSecond's
// heads and tails.
const (
	shapeJSON, shapeText = 0, 1
	levelInfo, levelWarn = 0, 1
)

func accessLevel(x *exchange) int {
	if x.status >= 500 {
		return levelWarn
	}
	return levelInfo
}

// lineEdges makes what every access line of a second writes around the
// fraction of its time, date and zone being that second's: for each
// shape, the line up to the fraction, and from it to the request id at
// each level. A line then writes three pieces where it wrote eight.
func lineEdges(date, zone []byte) (heads [2][]byte, tails [2][2][]byte) {
	heads[shapeJSON] = append([]byte(`{"time":"`), date...)
	heads[shapeText] = append([]byte("time="), date...)
	for level, name := range [2]string{"INFO", "WARN"} {
		tails[shapeJSON][level] = append(append([]byte(nil), zone...), `","level":"`+name+`","msg":"request","id":"`...)
		tails[shapeText][level] = append(append([]byte(nil), zone...), " level="+name+" msg=request id="...)
	}
	return heads, tails
}

// appendLineHead appends x's line up to its request id in shape: the
// time (RFC 3339 with nanoseconds, trailing zeros left out, in JSON; with
// milliseconds in text), the level and the message.
func appendLineHead(b []byte, shape int, x *exchange, now time.Time) []byte {
	s := second(now)
	b = append(b, s.heads[shape]...)
	b = appendFraction(b, now.Nanosecond(), 9-6*shape)
	return append(b, s.tails[shape][accessLevel(x)]...)
}

// appendJSONLine is slog.JSONHandler's line for the attributes logExchange
// sends: the time in RFC 3339 with nanoseconds, durations as integer
// nanoseconds, attributes that are not set left out.
func appendJSONLine(b []byte, x *exchange, now time.Time) []byte {
	b = appendLineHead(b, shapeJSON, x, now)
	// The request id is a token (requestID makes sure): nothing to escape.
	b = append(b, x.id...)
	b = append(b, '"')
	l := line{b: b}
	l.fields(x)
	return append(l.b, "}\n"...)
}

// appendTextLine is slog.TextHandler's line for the same attributes: the
// time in RFC 3339 with milliseconds, durations as time.Duration.String,
// strings quoted only when slog would quote them.
func appendTextLine(b []byte, x *exchange, now time.Time) []byte {
	b = appendLineHead(b, shapeText, x, now)
	if len(x.id) == 0 {
		b = append(b, `""`...)
	}
	b = append(b, x.id...) // a token: nothing to quote
	l := line{b: b, text: true}
	l.fields(x)
	return append(l.b, '\n')
}

// line appends the attributes after the message, in either shape.
type line struct {
	b    []byte
	text bool
}

// fields appends x's attributes, those not set left out.
func (l *line) fields(x *exchange) {
	l.str(&fieldEndpoint, x.endpoint)
	l.int(&fieldStatus, int64(x.status))
	l.dur(&fieldLatency, x.elapsed)
	if x.key != nil {
		l.name(&fieldKey, x.key.Name, x.key.escaped)
		if x.key.ID != 0 {
			l.int(&fieldKeyID, x.key.ID)
		}
	}
	if x.model != "" {
		l.name(&fieldModel, x.model, x.modelEscaped())
		l.key(streamField(x.stream))
	}
	if x.attempts > 0 {
		l.name(&fieldChannel, x.channel, x.channelEscaped)
		l.int(&fieldAttempts, int64(x.attempts))
		l.dur(&fieldTTFB, x.ttfb)
	}
	if u := x.usage; u != (codec.Usage{}) {
		l.int(&fieldInput, int64(u.Input))
		l.int(&fieldOutput, int64(u.Output))
		if u.CachedInput > 0 {
			l.int(&fieldCached, int64(u.CachedInput))
		}
		if u.Reasoning > 0 {
			l.int(&fieldReasoning, int64(u.Reasoning))
		}
		if u.Estimated {
			l.key(&fieldEstimated)
		}
	}
	if n, unit := x.billedUnits(); n > 0 {
		l.int(&fieldUnits, int64(n))
		l.str(&fieldUnit, unit)
	}
	if x.errMsg != "" {
		l.str(&fieldError, x.errMsg)
	}
}

// field is an attribute's key as each shape writes it before the value,
// made once: three appends a key cost more than the value's.
type field struct{ json, text string }

func newField(k string) field { return field{json: `,"` + k + `":`, text: " " + k + "="} }

// newFlag is a boolean attribute's key and value, one string in each
// shape as a key is: a flag's value is one of two.
func newFlag(k string, v bool) field {
	f := newField(k)
	s := strconv.FormatBool(v)
	return field{json: f.json + s, text: f.text + s}
}

func streamField(stream bool) *field {
	if stream {
		return &fieldStreamed
	}
	return &fieldWhole
}

var (
	fieldEndpoint  = newField("endpoint")
	fieldStatus    = newField("status")
	fieldLatency   = newField("latency")
	fieldKey       = newField("key")
	fieldKeyID     = newField("key_id")
	fieldModel     = newField("model")
	fieldStreamed  = newFlag("stream", true)
	fieldWhole     = newFlag("stream", false)
	fieldChannel   = newField("channel")
	fieldAttempts  = newField("attempts")
	fieldTTFB      = newField("ttfb")
	fieldInput     = newField("input_tokens")
	fieldOutput    = newField("output_tokens")
	fieldCached    = newField("cached_tokens")
	fieldReasoning = newField("reasoning_tokens")
	fieldEstimated = newFlag("estimated", true)
	fieldUnits     = newField("units")
	fieldUnit      = newField("unit")
	fieldError     = newField("error")
)

func (l *line) key(f *field) {
	l.b = append(l.b, l.keyOf(f)...)
}

// keyOf is f's key in the line's shape.
func (l *line) keyOf(f *field) string {
	if l.text {
		return f.text
	}
	return f.json
}

func (l *line) str(f *field, v string) {
	l.key(f)
	if l.text {
		l.b = appendTextString(l.b, v)
	} else {
		l.b = rawjson.AppendString(l.b, v)
	}
}

// name writes a name whose JSON form, escaped (its text between the
// quotes), was made once where the name is kept (escapeName): a key's, a
// channel's, a route's; escaped "" is escaped here.
func (l *line) name(f *field, v, escaped string) {
	if l.text || escaped == "" && v != "" {
		l.str(f, v)
		return
	}
	l.key(f)
	l.b = append(l.b, '"')
	l.b = append(l.b, escaped...)
	l.b = append(l.b, '"')
}

// modelEscaped is the model's name as its route escaped it, "" when the
// exchange has none for it.
func (x *exchange) modelEscaped() string {
	if x.route != nil && x.route.public == x.model {
		return x.route.escaped
	}
	return ""
}

// escapeName is name as it stands between JSON quotes.
func escapeName(name string) string {
	quoted := rawjson.AppendString(nil, name)
	return string(quoted[1 : len(quoted)-1])
}

func (l *line) int(f *field, v int64) {
	l.b = appendDecimal(l.b, l.keyOf(f), v)
}

// dur appends d as slog does: integer nanoseconds in JSON,
// time.Duration.String's form in text.
func (l *line) dur(f *field, d time.Duration) {
	if l.text {
		l.key(f)
		l.b = appendDuration(l.b, d)
	} else {
		l.b = appendDecimal(l.b, f.json, int64(d))
	}
}

// appendTextString writes s as slog's text handler does: bare when it is
// non-empty printable text without spaces, '=' or '"', else Go-quoted.
func appendTextString(b []byte, s string) []byte {
	if textNeedsQuoting(s) {
		return strconv.AppendQuote(b, s)
	}
	return append(b, s...)
}

func textNeedsQuoting(s string) bool {
	if s == "" {
		return true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= ' ' || c == '=' || c == '"' || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}

// appendDuration appends d.String() without making a string.
func appendDuration(b []byte, d time.Duration) []byte {
	var buf [32]byte
	w := len(buf)
	u := uint64(d)
	neg := d < 0
	if neg {
		u = -u
	}
	if u < uint64(time.Second) {
		// Below one second: a single unit, with a fraction ("1.5ms").
		var prec int
		w--
		buf[w] = 's'
		w--
		switch {
		case u == 0:
			return append(b, "0s"...)
		case u < uint64(time.Microsecond):
			buf[w] = 'n'
		case u < uint64(time.Millisecond):
			prec = 3
			w-- // U+00B5, as time.Duration.String writes it
			copy(buf[w:], "µ")
		default:
			prec = 6
			buf[w] = 'm'
		}
		w, u = fmtFrac(buf[:w], u, prec)
		w = putDecimal(buf[:w], u)
	} else {
		w--
		buf[w] = 's'
		w, u = fmtFrac(buf[:w], u, 9)
		w = putDecimal(buf[:w], u%60) // seconds
		u /= 60
		if u > 0 {
			w--
			buf[w] = 'm'
			w = putDecimal(buf[:w], u%60) // minutes
			u /= 60
			if u > 0 {
				w--
				buf[w] = 'h'
				w = putDecimal(buf[:w], u) // hours
			}
		}
	}
	if neg {
		w--
		buf[w] = '-'
	}
	return append(b, buf[w:]...)
}

// fmtFrac writes the fraction of v/10^prec at the end of buf, leaving out
// trailing zeros (and the point when nothing is left), and returns where
// the output begins and v/10^prec.
func fmtFrac(buf []byte, v uint64, prec int) (int, uint64) {
	w := len(buf)
	printed := false
	for range prec {
		digit := v % 10
		printed = printed || digit != 0
		if printed {
			w--
			buf[w] = byte(digit) + '0'
		}
		v /= 10
	}
	if printed {
		w--
		buf[w] = '.'
	}
	return w, v
}

// logExchange writes the access-log line of x through the slog logger,
// when the gateway has no AccessLog. Attributes that are not set are left
// out: each costs about a tenth of a microsecond on every request. The
// accessLog writer makes the same line without slog.
func (g *Gateway) logExchange(x *exchange) {
	var buf [16]slog.Attr
	a := append(buf[:0],
		slog.String("id", string(x.id)),
		slog.String("endpoint", x.endpoint),
		slog.Int("status", x.status),
		slog.Duration("latency", x.elapsed))
	if x.key != nil {
		a = append(a, slog.String("key", x.key.Name))
		if x.key.ID != 0 { // a console key, whose name need not be unique
			a = append(a, slog.Int64("key_id", x.key.ID))
		}
	}
	if x.model != "" {
		a = append(a, slog.String("model", x.model), slog.Bool("stream", x.stream))
	}
	if x.attempts > 0 {
		a = append(a, slog.String("channel", x.channel), slog.Int("attempts", x.attempts), slog.Duration("ttfb", x.ttfb))
	}
	if u := x.usage; u != (codec.Usage{}) {
		a = append(a, slog.Int("input_tokens", u.Input), slog.Int("output_tokens", u.Output))
		if u.CachedInput > 0 {
			a = append(a, slog.Int("cached_tokens", u.CachedInput))
		}
		if u.Reasoning > 0 {
			a = append(a, slog.Int("reasoning_tokens", u.Reasoning))
		}
		if u.Estimated {
			a = append(a, slog.Bool("estimated", true))
		}
	}
	if n, unit := x.billedUnits(); n > 0 { // as the usage row has them
		a = append(a, slog.Int("units", n), slog.String("unit", unit))
	}
	level := slog.LevelInfo
	if x.errMsg != "" {
		a = append(a, slog.String("error", x.errMsg))
	}
	if x.status >= 500 {
		level = slog.LevelWarn
	}
	g.log.LogAttrs(context.Background(), level, "request", a...)
}
