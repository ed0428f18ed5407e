package rawjson

import "testing"

func TestParseDataURL(t *testing.T) {
	for _, tc := range []struct {
		in              string
		mediaType, data string
		ok              bool
	}{
		{"data:image/png;base64,iVBORw0KGgo=", "image/png", "iVBORw0KGgo=", true},
		{"data:image/png;charset=x;base64,iVBO", "image/png", "iVBO", true},
		{"data:text/plain;charset=utf-8;name=a.txt;base64,aGk=", "text/plain", "aGk=", true},
		{"data:;base64,aGk=", "", "aGk=", true},
		{"data:image/png;base64,", "image/png", "", true},
		{"data:text/plain,hello", "", "", false},           // not base64
		{"data:text/plain;charset=x,hello", "", "", false}, // not base64
		{"data:image/png;base64", "", "", false},           // missing comma
		{"https://example.com/a.png", "", "", false},
		{"", "", "", false},
	} {
		mt, data, ok := ParseDataURL(tc.in)
		if mt != tc.mediaType || data != tc.data || ok != tc.ok {
			t.Errorf("ParseDataURL(%q) = %q, %q, %v; want %q, %q, %v", tc.in, mt, data, ok, tc.mediaType, tc.data, tc.ok)
		}
	}
}
