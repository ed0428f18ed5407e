package openai_test

import (
	"bytes"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// BenchmarkFormStream scans a 4 MiB upload (a file, then the model, as the
// SDKs send it) in the gateway's 64 KiB reads: audio whose reads end
// anywhere, and the same audio with a CR at the end of every read, what may
// start a delimiter, which the scan holds for the next read.
func BenchmarkFormStream(b *testing.B) {
	const read = 64 << 10
	for _, cut := range []bool{false, true} {
		name := map[bool]string{false: "audio", true: "cut_delimiters"}[cut]
		b.Run(name, func(b *testing.B) {
			audio := make([]byte, 4<<20)
			for i := range audio {
				audio[i] = byte(i * 7)
			}
			body := formBody(b, "XyZ-boundary-0123456789", "model", "whisper-1")
			at := bytes.Index(body, []byte("RIFF\r\n--not the boundary\x00\xff"))
			body = bytes.Replace(body, []byte("RIFF\r\n--not the boundary\x00\xff"), audio, 1)
			for i := read - 1; cut && i < at+len(audio); i += read {
				body[i] = '\r'
			}
			benchFormStream(b, body, read)
		})
	}
}

func benchFormStream(b *testing.B, body []byte, read int) {
	ct := []byte("multipart/form-data; boundary=XyZ-boundary-0123456789")
	var r openai.FormRequest
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if e := r.Begin(ct); e != nil {
			b.Fatal(e)
		}
		for rest := body; len(rest) > 0; {
			n := min(len(rest), read)
			if _, err := r.Write(rest[:n]); err != nil {
				b.Fatal(err)
			}
			rest = rest[n:]
		}
		if e := r.End(); e != nil || string(r.Model) != "whisper-1" {
			b.Fatal(e, string(r.Model))
		}
	}
}
