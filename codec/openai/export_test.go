package openai

// CheckedBody exposes checkedBody to the external tests.
func (r *ChatRequest) CheckedBody(body []byte) bool { return r.checkedBody(body) }

// Held is the capacity of the bytes a form holds between two pieces.
func (r *FormRequest) Held() int { return cap(r.scan.hold) }
