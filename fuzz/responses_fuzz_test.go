package fuzz

import (
	"encoding/json"
	"testing"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
	"github.com/rosetta-gateway/rosetta/codec/openai"
	"github.com/rosetta-gateway/rosetta/codec/responses"
)

// FuzzResponsesRequest: the Responses decoder (codec/responses) never
// panics and rejects with a 400 and a message; an accepted request encodes
// to valid JSON for every upstream style (or a 400 of its own), its stored
// input items are JSON, and put back by Prepend before an empty request
// they decode into the same turns.
func FuzzResponsesRequest(f *testing.F) {
	seedFiles(f, "../codec/responses/testdata/in/responses/request_*.json",
		"../codec/responses/testdata/request_2kb.json")
	upstreams := []codec.Dialect{openai.Dialect, anthropic.Dialect, gemini.Dialect}
	f.Fuzz(func(t *testing.T, body []byte) {
		if len(body) > 64<<10 {
			return
		}
		var r codec.Request
		if err := responses.DecodeRequest(body, &r); err != nil {
			if err.Status != 400 || err.Message == "" {
				t.Fatalf("rejection without a 400 and a message: %+v", err)
			}
			return
		}
		for _, d := range upstreams {
			r.Model = "upstream-model"
			out, _, err := d.AppendRequest(codec.OpGenerate, nil, &r, codec.Options{})
			if err != nil {
				if err.Status != 400 {
					t.Fatalf("%s: %+v", d.Name(), err)
				}
				continue
			}
			if !json.Valid(out) {
				t.Fatalf("%s: invalid JSON from %q:\n%s", d.Name(), body, out)
			}
		}
		items := responses.AppendInputItems(nil, &r)
		if !json.Valid(items) {
			t.Fatalf("input items are not JSON: %s", items)
		}
		again, err := responses.Prepend(nil, []byte(`{"model":"m"}`), items)
		if err != nil {
			t.Fatalf("Prepend: %v", err)
		}
		var r2 codec.Request
		if err := responses.DecodeRequest(again, &r2); err != nil {
			if len(r.Messages) == 0 && err.Param == "input" {
				return // instructions alone: no items
			}
			t.Fatalf("the stored items do not decode: %v\n%s", err, again)
		}
		if len(r2.Messages) != len(r.Messages) {
			t.Fatalf("%d turns became %d:\n%s", len(r.Messages), len(r2.Messages), again)
		}
		for i := range r.Messages {
			if len(r2.Messages[i].Parts) != len(r.Messages[i].Parts) || r2.Messages[i].Role != r.Messages[i].Role {
				t.Fatalf("turn %d differs:\n%s", i, again)
			}
		}
	})
}
