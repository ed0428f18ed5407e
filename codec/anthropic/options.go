package anthropic

// The API versions (the anthropic-version header) this package speaks.
const (
	// Version20230601 is the version every SDK sent until October 2026.
	Version20230601 = "2023-06-01"
	// Version20261021 removes temperature, top_p and top_k from Messages and
	// count_tokens requests (400 when present, even at their defaults), and
	// rejects document blocks directly in assistant messages and text blocks
	// with non-empty citations in user messages. Responses and streams keep
	// their shape. Source: https://platform.claude.com/docs/en/api/versioning
	// and https://platform.claude.com/docs/en/api/migration-2026-10-21 .
	Version20261021 = "2026-10-21"
)

// KnownVersion reports whether v is an anthropic-version this package
// speaks. The proxy answers any other value (and a missing header) with 400.
func KnownVersion(v string) bool { return v == Version20230601 || v == Version20261021 }

// Options are the per-exchange settings of a request's decoding or encoding.
type Options struct {
	// Version is the anthropic-version: the client's header when decoding,
	// the channel's api_version when encoding. Empty means Version20230601.
	Version string
}

func (o Options) v2026() bool { return o.Version == Version20261021 }

// DefaultMaxTokens is the max_tokens sent upstream when the canonical
// request sets none (Anthropic requires it; OpenAI and Gemini clients may
// omit it). Every current Claude model allows at least this many.
const DefaultMaxTokens = 8192

// Minimum thinking budget (budget_tokens) the Messages API accepts.
const minThinkingBudget = 1024
