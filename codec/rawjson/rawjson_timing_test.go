package rawjson_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/bytedance/sonic"

	"github.com/rosetta-gateway/rosetta/codec/rawjson"
	"github.com/rosetta-gateway/rosetta/internal/testutil"
)

// chatRequestRest is a ~2 KB chat request without its model; its tool schema has a "model"
// property that Lookup must skip.
const chatRequestRest = `"messages":[` +
	`{"role":"system","content":"You are a helpful assistant for a car dealership. Answer questions about inventory, pricing and financing. Always check the inventory with the lookup_car tool before quoting a price, and never invent a model that is not in stock. Keep answers under 120 words unless the customer asks for detail."},` +
	`{"role":"user","content":"Hi! I'm looking for a reliable commuter car, ideally a hybrid. What do you have under $30k?"},` +
	`{"role":"assistant","content":null,"tool_calls":[{"id":"call_8f2a","type":"function","function":{"name":"lookup_car","arguments":"{\"make\":\"Toyota\",\"model\":\"Corolla Hybrid\",\"max_price\":30000}"}}]},` +
	`{"role":"tool","tool_call_id":"call_8f2a","content":"[{\"make\":\"Toyota\",\"model\":\"Corolla Hybrid LE\",\"year\":2024,\"price\":24900},{\"make\":\"Toyota\",\"model\":\"Prius LE\",\"year\":2024,\"price\":28550}]"},` +
	`{"role":"assistant","content":"We have two hybrids under $30k: the 2024 Corolla Hybrid LE at $24,900 and the 2024 Prius LE at $28,550. Both average around 50 mpg. Would you like to compare trims or book a test drive?"},` +
	`{"role":"user","content":"Compare them on cargo space and safety features, please. Also, do either come in blue?"}],` +
	`"tools":[{"type":"function","function":{"name":"lookup_car","description":"Search the dealership inventory by make, model, year and price.","parameters":{"type":"object","properties":{` +
	`"make":{"type":"string","description":"Manufacturer, e.g. Toyota"},` +
	`"model":{"type":"string","description":"Model name, e.g. Corolla"},` +
	`"year":{"type":"integer","minimum":1990,"maximum":2026},` +
	`"color":{"type":"string","enum":["black","white","silver","blue","red"]},` +
	`"max_price":{"type":"number","description":"Upper bound in USD"}},"required":["make"],"additionalProperties":false},"strict":true}},` +
	`{"type":"function","function":{"name":"book_test_drive","description":"Book a test drive slot.","parameters":{"type":"object","properties":{"vin":{"type":"string"},"slot":{"type":"string","format":"date-time"}},"required":["vin","slot"]}}}],` +
	`"tool_choice":"auto","temperature":0.3,"max_completion_tokens":512,"stream":true,"stream_options":{"include_usage":true},"user":"customer-48213"`

// chatRequest returns a ~2 KB chat request with its model first or last.
func chatRequest(modelFirst bool) []byte {
	const model = `"model":"gpt-4o-2024-08-06"`
	if modelFirst {
		return []byte("{" + model + "," + chatRequestRest + "}")
	}
	return []byte("{" + chatRequestRest + "," + model + "}")
}

// streamChunk is a ~250 B chat completion chunk.
const streamChunk = `{"id":"chatcmpl-AQ9pZ1yBx6Hc4t7uLrWmKsEnVd2Ff","object":"chat.completion.chunk","created":1730000000,"model":"gpt-4o-mini-2024-07-18","system_fingerprint":"fp_0ba0d124f1","choices":[{"index":0,"delta":{"content":" world"},"logprobs":null,"finish_reason":null}]}`

// imageRequest returns a ~4 MB chat request carrying a base64 image, with its model last.
func imageRequest() []byte {
	img := make([]byte, 3<<20)
	for i := range img {
		img[i] = byte(i*7 + i>>9)
	}
	return fmt.Appendf(nil, `{"messages":[{"role":"user","content":[{"type":"text","text":"What is in this image?"},`+
		`{"type":"image_url","image_url":{"url":"data:image/png;base64,%s","detail":"high"}}]}],"max_tokens":300,"model":"gpt-4o"}`,
		base64.StdEncoding.EncodeToString(img))
}

func BenchmarkLookup(b *testing.B) {
	bodies := []struct {
		name string
		body []byte
	}{
		{"request_2KB_model_first", chatRequest(true)},
		{"request_2KB_model_last", chatRequest(false)},
		{"chunk_250B", []byte(streamChunk)},
		{"request_4MB_base64_model_last", imageRequest()},
		// The worst case for skipping strings: every quote is escaped, so every other byte ends a
		// vectorized search.
		{"hostile_4MB_escaped_quotes", []byte(`{"a":"` + strings.Repeat(`\"`, 2<<20) + `","model":"x"}`)},
	}
	for _, c := range bodies {
		for _, all := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/all=%v", c.name, all), func(b *testing.B) {
				fields := []rawjson.Field{{Key: "model"}}
				b.ReportAllocs()
				b.SetBytes(int64(len(c.body)))
				for b.Loop() {
					if err := rawjson.Lookup(c.body, fields, all); err != nil || fields[0].Start < 0 {
						b.Fatal(err)
					}
				}
			})
		}
		// sonic.Get is the reference: it finds the value but not its offset.
		b.Run(c.name+"/sonic.Get", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				if _, err := sonic.Get(c.body, "model"); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkValidStrings checks the strings of a 2 KB chat request, compact
// (what SDKs send), compact with a newline after it (a body sent from a
// file: it took the quote-following path until the spaces after the
// document were left out) and indented (which takes that path).
func BenchmarkValidStrings(b *testing.B) {
	cases := compactAndIndented(b, chatRequest(true))
	cases = append(cases, namedBody{"compact+newline", append(chatRequest(true), '\n')})
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				if !rawjson.ValidStrings(c.body) {
					b.Fatal("invalid")
				}
			}
		})
	}
}

// BenchmarkValid compares Valid, which checks strings too, with sonic.Valid
// (structure only) and sonic.Valid with ValidStrings (what it replaces), on
// a stream chunk, a chat request and a request carrying a base64 image.
func BenchmarkValid(b *testing.B) {
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"chunk_250B", []byte(streamChunk)},
		{"ping_16B", []byte(`{"type": "ping"}`)},
		{"request_2KB", chatRequest(true)},
		{"request_4MB_base64", imageRequest()},
		{"embedding_19KB_floats", testutil.EmbeddingAnswer("text-embedding-3-small", false)},
	} {
		for _, v := range []struct {
			name  string
			valid func([]byte) bool
		}{
			{"Valid", rawjson.Valid},
			{"sonic.Valid", sonic.Valid},
			{"sonic.Valid+ValidStrings", func(b []byte) bool { return sonic.Valid(b) && rawjson.ValidStrings(b) }},
		} {
			b.Run(c.name+"/"+v.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetBytes(int64(len(c.body)))
				for b.Loop() {
					if !v.valid(c.body) {
						b.Fatal("invalid")
					}
				}
			})
		}
	}
}

// BenchmarkLookupValid compares LookupValid with the three passes it
// replaces in a request reader: sonic.Valid, ValidStrings and Lookup.
func BenchmarkLookupValid(b *testing.B) {
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"request_2KB", chatRequest(false)},
		{"request_4MB_base64", imageRequest()},
	} {
		fields := []rawjson.Field{{Key: "model"}, {Key: "messages"}, {Key: "stream"}, {Key: "stream_options"}}
		b.Run(c.name+"/LookupValid", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				if err := rawjson.LookupValid(c.body, fields); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/sonic.Valid+ValidStrings+Lookup", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				if !sonic.Valid(c.body) || !rawjson.ValidStrings(c.body) || rawjson.Lookup(c.body, fields, true) != nil {
					b.Fatal("invalid")
				}
			}
		})
	}
}

// BenchmarkShape is the check of a stream's text deltas: by a Shape that
// keeps the one before (delta), against the whole check (ValidKeysScoped),
// and a Shape whose chunks alternate between two shapes, so that each is
// checked whole and kept (miss: the most a Shape adds); delta_obfuscated
// and whole_obfuscated are the same for api.openai.com's deltas, whose
// obfuscation strings differ in length.
func BenchmarkShape(b *testing.B) {
	deltas := [][]byte{[]byte(streamChunk), []byte(strings.Replace(streamChunk, `" world"`, `" there"`, 1))}
	other := []byte(strings.Replace(streamChunk, `{"content":" world"}`, `{"role":"assistant","content":""}`, 1))
	at := make([]int, len(shapeKeys))
	run := func(name string, check func(i int) bool) {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(streamChunk)))
			i := 0
			for b.Loop() {
				if !check(i) {
					b.Fatal("invalid")
				}
				i++
			}
		})
	}
	var s rawjson.Shape
	run("delta", func(i int) bool { return s.ValidKeys(deltas[i&1], shapeKeys, at, shapeTop) })
	run("whole", func(i int) bool { return rawjson.ValidKeysScoped(deltas[i&1], shapeKeys, at, shapeTop) })
	wire := [][]byte{[]byte(wireChunk(" world", "dBNii")), []byte(wireChunk(" there", "khkI7m07"))}
	run("delta_obfuscated", func(i int) bool { return s.ValidKeys(wire[i&1], shapeKeys, at, shapeTop) })
	run("whole_obfuscated", func(i int) bool { return rawjson.ValidKeysScoped(wire[i&1], shapeKeys, at, shapeTop) })
	run("miss", func(i int) bool {
		if i&1 == 1 {
			return s.ValidKeys(other, shapeKeys, at, shapeTop)
		}
		return s.ValidKeys(deltas[0], shapeKeys, at, shapeTop)
	})
}

// BenchmarkValidEmbedding is the check of an embeddings answer, floats as
// text-embedding-3-small (1536) and -large (3072) send them, compact and
// indented as OpenAI's API writes its answers (a float a line, after eight
// spaces); sonic.Valid, which does not check strings, is the reference.
func BenchmarkValidEmbedding(b *testing.B) {
	for _, dims := range []int{1536, 3072} {
		for _, c := range compactAndIndented(b, testutil.EmbeddingAnswerDims("text-embedding-3-small", dims, false)) {
			for _, v := range []struct {
				name  string
				valid func([]byte) bool
			}{{"Valid", rawjson.Valid}, {"sonic.Valid", sonic.Valid}} {
				b.Run(fmt.Sprintf("floats_%d_%s/%s", dims, c.name, v.name), func(b *testing.B) {
					b.ReportAllocs()
					b.SetBytes(int64(len(c.body)))
					for b.Loop() {
						if !v.valid(c.body) {
							b.Fatal("invalid")
						}
					}
				})
			}
		}
	}
}

// namedBody is a document to check, named by its form.
type namedBody struct {
	name string
	body []byte
}

// compactAndIndented is compact as it is and indented by two spaces a
// level, as OpenAI's API writes its answers.
func compactAndIndented(b *testing.B, compact []byte) []namedBody {
	var indented bytes.Buffer
	if err := json.Indent(&indented, compact, "", "  "); err != nil {
		b.Fatal(err)
	}
	return []namedBody{{"compact", compact}, {"indented", indented.Bytes()}}
}

// BenchmarkLookupValidMarked is the check of a chat request on the
// pass-through path (openai.ChatRequest.Parse): the conversation of 2.8 KB
// that bench/ sends (long strings of prose), and the 2 KB request with tools
// (many short strings), beside sonic.Valid on the same bytes, which checks
// the structure only.
func BenchmarkLookupValidMarked(b *testing.B) {
	conv, err := os.ReadFile("testdata/conversation_3kb.json")
	if err != nil {
		b.Fatal(err)
	}
	mark := [8]byte([]byte("rosetta:"))
	for _, c := range []struct {
		name string
		body []byte
	}{
		{"conversation_3KB", conv},
		{"request_2KB", chatRequest(true)},
	} {
		fields := []rawjson.Field{{Key: "model"}, {Key: "messages"}, {Key: "stream"}, {Key: "stream_options"}}
		b.Run(c.name+"/LookupValidMarked", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				if _, err := rawjson.LookupValidMarked(c.body, fields, &mark); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/sonic.Valid", func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				if !sonic.Valid(c.body) {
					b.Fatal("invalid")
				}
			}
		})
	}
}

// BenchmarkCheckString checks a string on its own, as the Responses
// request reader checks a member's: plain ASCII, text with non-ASCII
// letters (read on in one pass, not read again from its quote) and text
// with escapes.
func BenchmarkCheckString(b *testing.B) {
	for _, c := range []struct{ name, s string }{
		{"ascii", strings.Repeat("The quick brown fox jumps over the dog. ", 6)},
		{"non_ascii", strings.Repeat("Die Größe über naïve Cafés, 東京. ", 6)},
		{"escaped", strings.Repeat(`line one\nline \"two\"\tand more text. `, 6)},
	} {
		s := []byte(`"` + c.s + `"`)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				if end, _ := rawjson.CheckString(s, 0); end != len(s) {
					b.Fatalf("end %d of %d", end, len(s))
				}
			}
		})
	}
}
