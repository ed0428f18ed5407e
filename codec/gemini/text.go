package gemini

import (
	"math/bits"
	"unicode/utf8"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
)

// text reads the string value at the cursor (not null: ok is false when
// the cursor is not at a quote) in one pass: it validates it as scanString
// does, unescapes it as strDecoder.unescape does, and reports plain when
// the value is one rawjson.AppendString writes as it is (valid UTF-8
// without a quote, a backslash or a control character: codec.Event.Plain).
// A text without escapes is a view of the input, invalid UTF-8 and all
// (then not plain).
func (p *parser) text(sd *strDecoder) (v string, plain, ok bool) {
	b := p.b
	if p.i >= len(b) || b[p.i] != '"' {
		return "", false, false
	}
	start := p.i + 1
	end, valid := plainRun(b, start)
	if end < len(b) && b[end] == '"' {
		p.i = end + 1
		return rawjson.UnsafeString(b[start:end]), valid, true
	}
	if sd.buf == nil {
		sd.buf = make([]byte, 0, max(len(b)-p.i, min(sd.capHint, 8<<10)))
	}
	from, i := len(sd.buf), start
	plain = true
	for {
		if end >= len(b) || b[end] < 0x20 {
			p.fail()
			return "", false, false
		}
		if valid {
			sd.buf = append(sd.buf, b[i:end]...)
		} else {
			sd.buf = rawjson.AppendUTF8(sd.buf, b[i:end]) // invalid bytes become U+FFFD
		}
		if b[end] == '"' {
			p.i = end + 1
			return rawjson.UnsafeString(sd.buf[from:]), plain, true
		}
		r, n, _ := rawjson.DecodeEscape(b[end:])
		if n == 0 {
			p.fail()
			return "", false, false
		}
		plain = plain && r >= 0x20 && r != '"' && r != '\\'
		sd.buf = utf8.AppendRune(sd.buf, r)
		i = end + n
		end, valid = plainRun(b, i)
	}
}

// vectorText: plainRun looks with rawjson.TextStop (a variable, so that
// tests turn it off).
var vectorText = rawjson.TextStopVector

// plainRun returns the offset of the first quote, backslash or control
// byte from b[i] on (len(b) when there is none), and whether the bytes
// before it are valid UTF-8. With vectorText, rawjson.TextStop finds it,
// 32 bytes a look, stepping over valid UTF-8 sequences; it leaves the
// invalid ones to skipRune, and the last partial block of b, when the run
// reaches it, to plainRunWords.
func plainRun(b []byte, i int) (end int, valid bool) {
	if !vectorText || len(b)-i < 32 {
		return plainRunWords(b, i) // TextStop would return at once
	}
	valid = true
	for {
		if i += rawjson.TextStop(b[i:]); i == len(b) {
			return i, valid
		}
		if c := b[i]; c < 0x20 || c == '"' || c == '\\' {
			return i, valid
		}
		if len(b)-i >= 32 { // a stop in a whole block: a byte above 0x7f
			var ok bool
			if i, ok = skipRune(b, i); !ok {
				valid = false
			}
			if len(b)-i >= 32 {
				continue
			}
		}
		end, tailValid := plainRunWords(b, i)
		return end, valid && tailValid
	}
}

// skipRune returns the offset past the UTF-8 sequence at b[i], a byte
// above 0x7f, and whether it is valid (else it skips that byte alone).
// A two-byte sequence, U+0080 to U+07FF, is checked inline.
func skipRune(b []byte, i int) (int, bool) {
	if c := b[i]; c >= 0xc2 && c < 0xe0 && i+1 < len(b) && b[i+1]&0xc0 == 0x80 {
		return i + 2, true
	}
	r, n := utf8.DecodeRune(b[i:])
	return i + n, r != utf8.RuneError || n != 1
}

// plainRunWords is plainRun without a vector search. It stops only at the bytes
// rawjson.EscapeMask flags (those, and bytes above 0x7f), testing two
// words a turn (one branch for both: a text is mostly plain); a two-byte
// UTF-8 sequence is checked inline. A sequence cannot run into the byte
// that ends the run: its bytes after the first are all above 0x7f.
func plainRunWords(b []byte, i int) (end int, valid bool) {
	valid = true
	for {
		found := false
		for ; i+16 <= len(b); i += 16 {
			m0, m1 := rawjson.EscapeMask(rawjson.Word(b, i)), rawjson.EscapeMask(rawjson.Word(b, i+8))
			if m0|m1 != 0 {
				if m0 != 0 {
					i += bits.TrailingZeros64(m0) >> 3
				} else {
					i += 8 + bits.TrailingZeros64(m1)>>3
				}
				found = true
				break
			}
		}
		if !found {
			i = flaggedNear(b, i)
		}
		if i >= len(b) || b[i] < utf8.RuneSelf {
			return i, valid
		}
		var ok bool
		if i, ok = skipRune(b, i); !ok {
			valid = false
		}
	}
}

// flaggedNear is plainRun's search in the last 15 bytes or fewer of b:
// the offset of the first byte from b[i] on that rawjson.EscapeMask
// flags, or len(b).
func flaggedNear(b []byte, i int) int {
	if i+8 <= len(b) {
		if m := rawjson.EscapeMask(rawjson.Word(b, i)); m != 0 {
			return i + bits.TrailingZeros64(m)>>3
		}
		i += 8
	}
	for i < len(b) && b[i] >= 0x20 && b[i] < utf8.RuneSelf && b[i] != '"' && b[i] != '\\' {
		i++
	}
	return i
}
