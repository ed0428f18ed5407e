package codec

import (
	"strconv"
	"strings"
)

// Gemini keeps uploaded files behind its API (the Files API) and reads
// Cloud Storage; a part that refers to one by URI can be read by Gemini
// alone: another provider cannot fetch it without Google's credentials.
var geminiFilePrefixes = [...]string{"https://generativelanguage.googleapis.com/", "gs://"}

// ForeignFile finds an image or document of r that refers to a file a
// provider of style upstream cannot read (one of Gemini's, outside Gemini).
// It returns where it is ("messages[i].parts[j]") and its URL, or "", "".
// Such a request gets a 400 saying so, rather than the provider's own
// failure to download the file.
func (r *Request) ForeignFile(upstream string) (where, url string) {
	if upstream == DialectGemini {
		return "", ""
	}
	for i := range r.Messages {
		for j := range r.Messages[i].Parts {
			p := &r.Messages[i].Parts[j]
			if u := geminiFile(p); u != "" {
				return "messages[" + strconv.Itoa(i) + "].parts[" + strconv.Itoa(j) + "]", u
			}
			for k := range p.Content {
				if u := geminiFile(&p.Content[k]); u != "" {
					return "messages[" + strconv.Itoa(i) + "].parts[" + strconv.Itoa(j) + "].content[" + strconv.Itoa(k) + "]", u
				}
			}
		}
	}
	return "", ""
}

func geminiFile(p *Part) string {
	if p.Kind != PartImage && p.Kind != PartDocument || p.Data != "" {
		return ""
	}
	for _, prefix := range geminiFilePrefixes {
		if strings.HasPrefix(p.URL, prefix) {
			return p.URL
		}
	}
	return ""
}

// ForeignFileMessage is the message of the 400 for ForeignFile's find.
func ForeignFileMessage(where, url string) string {
	return where + ": " + url + " is a file kept by Gemini, which this model's provider cannot read; send the file's data inline (base64) instead"
}
