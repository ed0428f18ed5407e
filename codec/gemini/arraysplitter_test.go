package gemini

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// ArraySplitter frames the JSON-array stream (array.go) as it arrives. Only
// tests use it (to read back what StreamEncoder writes with Array set, and
// the recorded Gemini array streams), so it lives here.

// ErrArrayStream reports bytes that cannot belong to a JSON-array stream.
var ErrArrayStream = errors.New("gemini: malformed JSON-array stream")

// ArraySplitter frames the elements of a JSON-array stream as its bytes
// arrive, whatever the read boundaries. It skips the opening '[', the
// commas and whitespace between elements, and finds where each element ends
// by counting brackets outside strings. It frames; it does not validate:
// each element goes to StreamDecoder.Decode, which does.
//
// The caller keeps a buffer of the bytes not yet consumed: it appends what
// it reads, calls Next until Next wants more, and drops the n consumed
// bytes from the front. The splitter remembers how far it has scanned, so
// each byte is looked at once however small the reads. A body that is a
// single object instead of an array (an error answered without streaming)
// is framed as one element.
//
// The zero value is ready to use; Reset readies it for another stream.
type ArraySplitter struct {
	state  uint8
	depth  int
	inStr  bool
	start  int // offset of the current element in the buffer
	pos    int // offset scanned up to
	single bool
}

const (
	beforeArray uint8 = iota // before '['
	beforeElem               // after '[' or ',': an element or ']' next
	inElem                   // inside an element
	afterElem                // after an element: ',' or ']' next
	ended                    // after ']' (or after a single object)
)

// Reset readies s for a new stream.
func (s *ArraySplitter) Reset() { *s = ArraySplitter{} }

// Done reports whether the array has closed.
func (s *ArraySplitter) Done() bool { return s.state == ended }

// Next looks for the next element in buf, which must start with the first
// byte not yet consumed. It returns the element (a slice of buf) and the
// number of bytes consumed through it; or elem nil and n > 0 when buf
// consumed the closing ']' or, after it, whitespace (Done is then true); or
// nil and 0 when buf holds no complete element yet. After the end only
// whitespace may follow.
func (s *ArraySplitter) Next(buf []byte) (elem []byte, n int, err error) {
	for i := s.pos; i < len(buf); i++ {
		c := buf[i]
		switch s.state {
		case inElem:
			if i = s.scan(buf, i); i < 0 {
				s.pos = len(buf)
				return nil, 0, nil
			}
			elem, n = buf[s.start:i+1], i+1
			s.pos, s.start = 0, 0
			if s.single {
				s.state = ended
			} else {
				s.state = afterElem
			}
			return elem, n, nil
		case beforeArray:
			switch {
			case rawjson.IsSpace(c):
			case c == '[':
				s.state = beforeElem
			case c == '{':
				s.single = true
				s.begin(i)
			default:
				return nil, 0, ErrArrayStream
			}
		case beforeElem:
			switch {
			case rawjson.IsSpace(c):
			case c == '{' || c == '[':
				s.begin(i)
			case c == ']':
				s.state, s.pos = ended, 0
				return nil, i + 1, nil
			default:
				return nil, 0, ErrArrayStream
			}
		case afterElem:
			switch {
			case rawjson.IsSpace(c):
			case c == ',':
				s.state = beforeElem
			case c == ']':
				s.state, s.pos = ended, 0
				return nil, i + 1, nil
			default:
				return nil, 0, ErrArrayStream
			}
		case ended:
			if !rawjson.IsSpace(c) {
				return nil, 0, ErrArrayStream
			}
		}
	}
	if s.state == ended {
		s.pos = 0
		return nil, len(buf), nil // trailing whitespace
	}
	s.pos = len(buf)
	return nil, 0, nil
}

// begin starts an element at buf[i], an opening bracket.
func (s *ArraySplitter) begin(i int) {
	s.state, s.start, s.depth, s.inStr = inElem, i, 1, false
}

// scan reads an element from buf[i] on and returns the offset of the
// bracket that closes it, or -1 when buf ends first (the state is kept for
// the next call). Strings are skipped quote to quote; a quote preceded by
// an odd number of backslashes (all within the element, which the caller
// keeps in buf) is escaped.
func (s *ArraySplitter) scan(buf []byte, i int) int {
	depth, inStr := s.depth, s.inStr
	for i < len(buf) {
		if inStr {
			q := bytes.IndexByte(buf[i:], '"')
			if q < 0 {
				break
			}
			j := i + q
			n := 0
			for j-1-n > s.start && buf[j-1-n] == '\\' {
				n++
			}
			i = j + 1
			inStr = n%2 == 1
			continue
		}
		switch buf[i] {
		case '"':
			inStr = true
		case '{', '[':
			depth++
		case '}', ']':
			if depth--; depth == 0 {
				s.depth, s.inStr = 0, false
				return i
			}
		}
		i++
	}
	s.depth, s.inStr = depth, inStr
	return -1
}

func FuzzArraySplitter(f *testing.F) {
	for _, pattern := range []string{"../testdata/wire/gemini/stream_array.json", "testdata/stream*/*.out.array.json"} {
		paths, err := filepath.Glob(pattern)
		if err != nil || len(paths) == 0 {
			f.Fatalf("no seed files match %s", pattern)
		}
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Add([]byte(`{"error":{"code":500}}`))
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) > 64<<10 {
			return
		}
		split := func(k int) ([]string, bool) {
			var s ArraySplitter
			var elems []string
			var buf []byte
			for _, read := range [][]byte{in[:k], in[k:]} {
				buf = append(buf, read...)
				for {
					elem, n, err := s.Next(buf)
					if err != nil {
						return elems, false
					}
					if n == 0 {
						break
					}
					if n > len(buf) || (elem != nil && !bytes.Contains(buf[:n], elem)) {
						t.Fatalf("Next consumed %d of %d bytes, element %q", n, len(buf), elem)
					}
					if elem != nil {
						elems = append(elems, string(elem))
					}
					buf = buf[n:]
				}
			}
			return elems, s.Done()
		}
		want, ok := split(len(in))
		for _, k := range []int{0, 1, len(in) / 2, len(in) - 1} {
			k = max(0, min(k, len(in)))
			got, ok2 := split(k)
			if ok2 != ok || strings.Join(got, "\x00") != strings.Join(want, "\x00") {
				t.Fatalf("split at %d of %q: %q (%v), want %q (%v)", k, in, got, ok2, want, ok)
			}
		}
		// A complete array of valid elements is exactly what encoding/json reads.
		var ref []json.RawMessage
		if ok && len(in) > 0 && bytes.TrimSpace(in)[0] == '[' && json.Unmarshal(in, &ref) == nil {
			if len(ref) != len(want) {
				t.Fatalf("%q: %d elements, encoding/json reads %d", in, len(want), len(ref))
			}
			for i := range ref {
				if string(ref[i]) != want[i] {
					t.Fatalf("%q: element %d is %q, encoding/json reads %q", in, i, want[i], ref[i])
				}
			}
		}
	})
}
