package anthropic

import (
	"reflect"
	"strings"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
)

// deltaSeeds are content_block_delta data in the API's spelling and in
// others the fast path must hand over.
var deltaSeeds = []string{
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":" 18 °C and overcast"}    }`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","thinking":"a \"quoted\" word\n"}}`,
	`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":"{\"city\": \"Tok"}}`,
	`{"type":"content_block_delta","index":2,"delta":{"type":"input_json_delta","partial_json":""}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"signature_delta","signature":"EqQBCgIYAhIM=="}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"ends in a backslash \\"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\\\"}"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"\ud83d\ude00 \u00e9"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"bad \q escape"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"citations_delta","citation":{"type":"char_location"}}}`,
	`{"type":"content_block_delta","index":00,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":7,"delta":{"type":"text_delta","text":"no such block"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}} trailing`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x","extra":1}}`,
	`{"index":0,"type":"content_block_delta","delta":{"text":"reordered","type":"text_delta"}}`,
	`{ "type": "content_block_delta", "index": 0, "delta": { "type": "text_delta", "text": "spaced" } }`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":5}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"unterminated}}`,
	`{"type":"content_block_delta","index":1,"delta":{"type":"thinking_delta","text":"key of another kind"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"tex_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"s","signature":"x"}}`,
	"{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"x\"} \t}\r\n",
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"}}}`,
	`{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"x"} } x`,
	`{"type":"content_block_delta","index":123456789,"delta":{"type":"text_delta","text":"x"}}`,
	`{"type":"content_block_delta","index":1234567890,"delta":{"type":"text_delta","text":"x"}}`,
}

// decoderWithBlocks is a decoder with three open blocks: text, thinking and
// a tool call.
func decoderWithBlocks() *StreamDecoder {
	d := new(StreamDecoder)
	d.blocks = []decBlock{{0, codec.PartText, true}, {1, codec.PartThinking, true}, {2, codec.PartToolCall, true}}
	d.next = 3
	return d
}

// fastMatchesGeneral checks that the fast path of content_block_delta gives
// what the general one gives.
func fastMatchesGeneral(t *testing.T, data string) {
	t.Helper()
	if !strings.HasPrefix(data, deltaPrefix) && string(dataType([]byte(data))) != "content_block_delta" {
		return // no delta, whatever the event's name: read by its type (TestMisnamedEvents)
	}
	fast, errFast := decoderWithBlocks().Decode(nil, []byte("content_block_delta"), []byte(data))
	general, errGeneral := decoderWithBlocks().deltaGeneral(nil, []byte(data))
	if (errFast == nil) != (errGeneral == nil) || !reflect.DeepEqual(fast, general) {
		t.Fatalf("%s:\nfast    %+v %v\ngeneral %+v %v", data, fast, errFast, general, errGeneral)
	}
}

func TestDeltaFastPath(t *testing.T) {
	for _, s := range deltaSeeds {
		fastMatchesGeneral(t, s)
	}
	// The fast path must take the API's spelling, or it quietly stops
	// saving anything.
	for _, s := range deltaSeeds[:9] {
		if !strings.HasPrefix(s, deltaPrefix) {
			t.Fatalf("seed %s is not in the API's spelling", s)
		}
	}
}

func FuzzDeltaFastPath(f *testing.F) {
	for _, s := range deltaSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		fastMatchesGeneral(t, data)
	})
}
