package proxy

import (
	"reflect"
	"unsafe"

	"github.com/valyala/fasthttp"
)

// Passing an upstream's headers through fasthttp's setters cost about 380
// instructions a header (SetCanonical: the value copied and searched for
// line breaks, the name checked against the special ones and searched for
// among the header's pairs, then both copied), where the gateway knows
// all of that already: the value was read by fasthttp's parser, which
// refuses a line break in it, the name is none of the special ones
// (TestHeaderPairs checks every name the gateway passes or sets), and the
// client's header holds no pair of that name yet. So the gateway
// reads the upstream's pairs and appends to the client's itself, as
// fasthttp's own append does (appendArg), through a view of a header's
// pairs laid out as fasthttp lays them out (its argsKV) that is made only
// when the layout is checked to be that one, field by field; otherwise the
// setters are used, as before (TestHeaderPairs fails).

// headerPair is one name-value pair of a header, laid out as fasthttp's.
type headerPair struct {
	key, value []byte
	noValue    bool
}

// responsePairs and requestPairs are the offsets of the slice of pairs in
// fasthttp's response and request headers; -1 when it is not laid out as
// a slice of headerPair. They are the gateway's one view of the pairs:
// passing headers, finding them, and telling a header with storage from
// one without (hasStorage).
var (
	responsePairs = pairsOffset(reflect.TypeFor[fasthttp.ResponseHeader]())
	requestPairs  = pairsOffset(reflect.TypeFor[fasthttp.RequestHeader]())
)

// noPairs is the offset of pairs fasthttp does not lay out as headerPair.
const noPairs = ^uintptr(0)

func pairsOffset(t reflect.Type) uintptr {
	f, ok := t.FieldByName("h")
	if !ok || f.Type.Kind() != reflect.Slice || !samePairLayout(f.Type.Elem()) {
		return noPairs
	}
	var off uintptr // FieldByName gives a promoted field's offset in its own struct
	for i := range f.Index {
		sf := t.FieldByIndex(f.Index[:i+1])
		off += sf.Offset
	}
	return off
}

// samePairLayout reports whether t is laid out as headerPair: the same
// fields, of the same kinds, at the same offsets, and the same size.
func samePairLayout(t reflect.Type) bool {
	want := reflect.TypeFor[headerPair]()
	if t.Kind() != reflect.Struct || t.NumField() != want.NumField() || t.Size() != want.Size() {
		return false
	}
	for i := range t.NumField() {
		f, w := t.Field(i), want.Field(i)
		if f.Name != w.Name || f.Offset != w.Offset || f.Type.Kind() != w.Type.Kind() ||
			(f.Type.Kind() == reflect.Slice && f.Type.Elem().Kind() != reflect.Uint8) {
			return false
		}
	}
	return true
}

// responsePairsOf is h's name-value pairs but its special headers
// (Content-Type, Server and the like, held apart), nil when fasthttp lays
// them out otherwise.
func responsePairsOf(h *fasthttp.ResponseHeader) *[]headerPair {
	if responsePairs == noPairs {
		return nil
	}
	return (*[]headerPair)(unsafe.Add(unsafe.Pointer(h), responsePairs))
}

// requestPairsOf is responsePairsOf for a request's header.
func requestPairsOf(h *fasthttp.RequestHeader) *[]headerPair {
	if requestPairs == noPairs {
		return nil
	}
	return (*[]headerPair)(unsafe.Add(unsafe.Pointer(h), requestPairs))
}

// findPair returns the value of h's first header whose name match takes,
// nil when none is; first is the first byte of the names it takes (in
// either case). It searches h's pairs when such a name must be among them
// if h has it: fasthttp holds its special headers apart (Content-Type,
// Server, Set-Cookie, Trailer and the like), and all their names begin
// with c, s, t or d. A search of the pairs is a loop over a slice, where
// h.All calls a function at each header.
func findPair(h *fasthttp.ResponseHeader, first byte, match func(k []byte) bool) []byte {
	if ps := responsePairsOf(h); ps != nil && !mayBeSpecial(first) {
		for i := range *ps {
			if match((*ps)[i].key) {
				return (*ps)[i].value
			}
		}
		return nil
	}
	for k, v := range h.All() {
		if match(k) {
			return v
		}
	}
	return nil
}

// mayBeSpecial reports whether a name that begins with first may be that
// of a header fasthttp holds apart from its pairs.
func mayBeSpecial(first byte) bool {
	switch first | 0x20 {
	case 'c', 's', 't', 'd':
		return true
	}
	return false
}

// appendPair appends the pair name: value to pairs, in the storage of a
// pair the header held before its reset when it has one, as fasthttp's
// appendArg does. The caller knows that name is no special header's, that
// the header announces no trailer, and that value holds no line break.
func appendPair(pairs *[]headerPair, name, value []byte) {
	*pairs = withPair(*pairs, name, value)
}

// withPair is appendPair on a slice of pairs the caller holds, which it
// returns longer by one: a loop appending several keeps it in registers.
func withPair(ps []headerPair, name, value []byte) []headerPair {
	ps, kv := nextPair(ps)
	kv.key = append(kv.key[:0], name...)
	kv.value = append(kv.value[:0], value...)
	kv.noValue = false
	return ps
}

// nextPair returns ps longer by one and its new last pair, which keeps
// the storage of the pair the header held there before its reset, if any.
func nextPair(ps []headerPair) ([]headerPair, *headerPair) {
	n := len(ps)
	if n < cap(ps) {
		ps = ps[:n+1]
	} else {
		ps = append(ps, headerPair{value: []byte{}})
	}
	return ps, &ps[n]
}

// withMovedPair is withPair for a value whose header is done with it: the
// pair takes *value's storage, and *value the pair's own, emptied, where
// withPair copies the value's bytes. Each header still owns the storage
// its pairs hold, none shared.
func withMovedPair(ps []headerPair, name []byte, value *[]byte) []headerPair {
	ps, kv := nextPair(ps)
	kv.key = append(kv.key[:0], name...)
	kv.value, *value = *value, kv.value[:0]
	kv.noValue = false
	return ps
}

// setNew sets name: value, name spelled as fasthttp spells it, on an
// upstream request's header that has no header of that name yet, appended
// to its pairs when there is a view of them (requestPairsOf). name is no
// special header's (TestHeaderPairs checks every name the gateway sets),
// and value must hold no line break (oneLine), which fasthttp's setter
// would replace.
func setNew(h *fasthttp.RequestHeader, pairs *[]headerPair, name, value []byte) {
	if pairs != nil {
		appendPair(pairs, name, value)
		return
	}
	h.SetCanonical(name, value)
}

// setResponse sets name: value on a response's header as SetCanonical
// sets a name that is none of the special ones: in the first pair of that
// name, else in a pair appended. The client's answer gets its request id
// so when its request begins, on a header reset since the last answer but
// for a request served again in the process on the same one (ServeAs),
// whose id replaces the first's. Without SetCanonical's copy of the value
// in search of line breaks (the caller's has none: a request id is a
// token) and its check of the name, ~430 instructions a request.
func setResponse(h *fasthttp.ResponseHeader, name, value []byte) {
	pairs := responsePairsOf(h)
	if pairs == nil {
		h.SetCanonical(name, value)
		return
	}
	for i := range *pairs {
		if kv := &(*pairs)[i]; string(kv.key) == string(name) {
			kv.value = append(kv.value[:0], value...)
			kv.noValue = false
			return
		}
	}
	appendPair(pairs, name, value)
}

// oneLine is v with its line breaks replaced by spaces, as fasthttp's
// setters store a header value.
func oneLine(v []byte) []byte {
	for i, c := range v {
		if c == '\r' || c == '\n' {
			v[i] = ' '
		}
	}
	return v
}
