package proxy

import (
	"math/rand/v2"
	"slices"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/rosetta-gateway/rosetta/codec"
	"github.com/rosetta-gateway/rosetta/codec/gemini"
)

// route is the set of channels that serve one public model name, sorted by
// priority (lower first).
type route struct {
	public   string                // the public model name
	escaped  string                // the public name as it stands between JSON quotes
	tokens   [4]prometheus.Counter // input, output, cached input, reasoning
	metrics  metricsCache          // the series of its requests by endpoint, status and stream
	channels []*channel
	upstream []string // upstream model name on each channel
	weights  []int
}

// geminiMethods are the Gemini methods the route's channels serve: those of
// generation when one serves chat, of embeddings when one serves them.
func (r *route) geminiMethods() gemini.Methods {
	var m gemini.Methods
	for _, ch := range r.channels {
		if ch.serves(codec.OpGenerate) {
			m |= gemini.MethodsGenerate
		}
		if ch.serves(codec.OpEmbed) {
			m |= gemini.MethodsEmbed
		}
	}
	return m
}

// maxCandidates bounds the candidates of one request so that ordering them
// needs no allocation; a route with more channels tries its first ones.
const maxCandidates = 16

// candidate is one channel to try, with the model name it knows.
type candidate struct {
	ch    *channel
	model string
}

// order appends the candidates of r to dst in the order to try them: by
// priority, and within a priority in a weighted random order. Channels whose
// circuit is open are left out; reopen reports when the first of them may be
// probed again.
func (r *route) order(dst []candidate) (out []candidate, reopen time.Duration) {
	if len(r.channels) == 1 && len(dst) < maxCandidates {
		return r.orderOne(dst)
	}
	for start := 0; start < len(r.channels) && len(dst) < maxCandidates; {
		end := start + 1
		prio := r.channels[start].cfg.Priority
		for end < len(r.channels) && r.channels[end].cfg.Priority == prio {
			end++
		}
		var tier [maxCandidates]int
		n, total := 0, 0
		for i := start; i < end && n < maxCandidates; i++ {
			if wait := r.channels[i].breaker.readyNow(); wait > 0 {
				if reopen == 0 || wait < reopen {
					reopen = wait
				}
				continue
			}
			tier[n] = i
			total += r.weights[i]
			n++
		}
		// Weighted sampling without replacement; the last one left needs
		// no draw (a route of one channel, the commonest, draws none).
		for ; n > 0 && len(dst) < maxCandidates; n-- {
			j := 0
			if n > 1 {
				for pick := rand.IntN(total); pick >= r.weights[tier[j]]; j++ {
					pick -= r.weights[tier[j]]
				}
			}
			i := tier[j]
			dst = append(dst, candidate{r.channels[i], r.upstream[i]})
			total -= r.weights[i]
			tier[j] = tier[n-1]
		}
		start = end
	}
	return dst, reopen
}

// orderOne is order for a route of one channel, the commonest: no tier
// to make, no draw.
func (r *route) orderOne(dst []candidate) ([]candidate, time.Duration) {
	if wait := r.channels[0].breaker.readyNow(); wait > 0 {
		return dst, wait
	}
	return append(dst, candidate{r.channels[0], r.upstream[0]}), 0
}

// sortRoute orders a route's channels by priority, keeping configuration order within one.
func sortRoute(r *route) {
	idx := make([]int, len(r.channels))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return r.channels[a].cfg.Priority - r.channels[b].cfg.Priority })
	chs, ups, ws := make([]*channel, len(idx)), make([]string, len(idx)), make([]int, len(idx))
	for k, i := range idx {
		chs[k], ups[k], ws[k] = r.channels[i], r.upstream[i], r.weights[i]
	}
	r.channels, r.upstream, r.weights = chs, ups, ws
}
