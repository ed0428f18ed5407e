package codec_test

import (
	"reflect"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
)

// TestRerankUsage: the tokens of each server's rerank answer, whichever
// shape it reports them in; Cohere's search units are Units, not tokens.
func TestRerankUsage(t *testing.T) {
	none := codec.Usage{Input: -1}
	for body, want := range map[string]codec.Usage{
		`{"results":[],"usage":{"total_tokens":15}}`:                                           {Input: 15},           // Jina, vLLM
		`{"results":[],"usage":{"prompt_tokens":9,"total_tokens":9}}`:                          {Input: 9},            // Infinity
		`{"results":[],"meta":{"billed_units":{"search_units":1,"input_tokens":21.0}}}`:        {Input: 21, Units: 1}, // Cohere
		`{"results":[],"meta":{"tokens":{"input_tokens":30,"output_tokens":0}}}`:               {Input: 30},
		`{"results":[],"meta":{"billed_units":{"search_units":2.0}}}`:                          {Units: 2},
		`{"results":[],"usage":{"total_tokens":4},"meta":{"billed_units":{"search_units":1}}}`: {Input: 4, Units: 1},
		`{"results":[],"meta":{"billed_units":{"search_units":"x"}}}`:                          none,
		`{"results":[],"usage":{"total_tokens":-3}}`:                                           none,
		`{"results":[],"usage":null,"meta":"x"}`:                                               none,
		`{"results":[]}`:                                                                       none,
		`[1]`:                                                                                  none,
	} {
		u, ok := codec.RerankUsage([]byte(body))
		if ok != (want != none) || ok && u != want {
			t.Errorf("%s: %+v %v, want %+v", body, u, ok, want)
		}
	}
}

func TestDecodeRanking(t *testing.T) {
	var r codec.Response
	body := `{"id":"abc","results":[{"index":2,"relevance_score":0.9,"document":{"text":"x"}},{"index":0,"relevance_score":1e-5}],` +
		`"meta":{"api_version":{"version":"2"},"billed_units":{"search_units":1}},"usage":{"total_tokens":4}}`
	if err := codec.DecodeRanking([]byte(body), &r); err != nil {
		t.Fatal(err)
	}
	want := &codec.Ranking{Results: []codec.Ranked{{Index: 2, Score: 0.9}, {Index: 0, Score: 1e-5}},
		Meta: `{"api_version":{"version":"2"},"billed_units":{"search_units":1}}`}
	if r.ID != "abc" || !reflect.DeepEqual(r.Ranking, want) || r.Usage != (codec.Usage{Input: 4, Units: 1}) {
		t.Fatalf("%+v %+v", r, r.Ranking)
	}
	for _, bad := range []string{`{"id":"x"}`, `{"results":[{"index":-1,"relevance_score":1}]}`,
		`{"results":[{"relevance_score":1}]}`, `{"results":[{"index":0}]}`, `{"results":[{"index":0.5,"relevance_score":1}]}`,
		`{"results":{}}`, `not json`} {
		if err := codec.DecodeRanking([]byte(bad), &r); err == nil {
			t.Errorf("%s: read as %+v", bad, r.Ranking)
		}
	}
}
