package openai

// CheckedBody exposes checkedBody to the external tests.
func (r *ChatRequest) CheckedBody(body []byte) bool { return r.checkedBody(body) }
