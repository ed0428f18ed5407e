package proxy

import "testing"

func TestMentions(t *testing.T) {
	f := func(msg string, want bool) {
		t.Helper()
		if got := mentions([]byte(msg), mappedEvents); got != want {
			t.Errorf("mentions(%s) = %v, want %v", msg, got, want)
		}
	}
	f(`{"type":"response.done","response":{}}`, true)
	f(`{"response":{"status":"completed"},"type":"response.done"}`, true)
	f(`"response.done"`, true)
	f(`{"type":"session.updated"}`, true)
	f(`"session.`, true)
	f(`{"text":"Done. Fine.","type":"response.output_text.delta"}`, false)
	f(`{"type":"response.done_x"}`, false) // the closing quote is part of the name
	f(`{"type":"response done"}`, false)
	f(`.response.done"`, false)
	f(`"response.don`, false)
	f(`...`, false)
	f(``, false)
}
