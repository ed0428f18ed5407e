// Package dialects is the list of the provider styles the gateway speaks:
// adding a style is a package under codec and a line here.
package dialects

import (
	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/anthropic"
	"github.com/rosetta-gateway/rosetta/codec/cohere"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
	"github.com/rosetta-gateway/rosetta/codec/openai"
)

// All are the styles, the first being the default (OpenAI's).
var All = []codec.Dialect{
	openai.Dialect,
	anthropic.Dialect,
	gemini.Dialect,
	cohere.Dialect, // rerank only: a channel type, no client style
}

// Named returns the style of that name (a channel type), or nil.
func Named(name string) codec.Dialect {
	for _, d := range All {
		if d.Name() == name {
			return d
		}
	}
	return nil
}

// Names lists the styles' names.
func Names() []string {
	names := make([]string, len(All))
	for i, d := range All {
		names[i] = d.Name()
	}
	return names
}
