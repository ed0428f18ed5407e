package codec

// EstimateTokens is the gateway's one estimate of a request's input
// tokens, wherever it must report one before (or without) the upstream's
// count: four bytes of text a token, plus a few for each turn and tool.
func EstimateTokens(r *Request) int {
	n := 0
	count := func(parts []Part) {
		for _, p := range parts {
			n += len(p.Text) + len(p.Arguments) + len(p.Name)
			for _, c := range p.Content {
				n += len(c.Text)
			}
			if p.Kind == PartImage || p.Kind == PartDocument {
				n += 4 * 1000 // providers charge images by size; a typical one
			}
		}
	}
	count(r.System)
	for _, m := range r.Messages {
		count(m.Parts)
		n += 4 * 4
	}
	for _, t := range r.Tools {
		n += len(t.Name) + len(t.Description) + len(t.Parameters)
	}
	for _, t := range r.Embed.Texts {
		n += len(t)
	}
	for _, ids := range r.Embed.Tokens {
		n += 4 * len(ids) // a token each
	}
	return EstimateText(n)
}

// EstimateText is the estimate of n bytes of text: four bytes a token.
func EstimateText(n int) int { return max(n/4, 1) }
