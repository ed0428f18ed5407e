package proxy

// usageOps are the operations that leave usage rows, one for each endpoint
// a row can name (operation.name), in the order the console offers them.
// Other operations sharing a name (opEmbedOne, the native Responses ones)
// are left out. TestUsageEndpoints holds the rows of every endpoint to
// this list.
var usageOps = []*operation{opGenerate, opComplete, opResponsesTranslated, opEmbed, opRerank,
	opImage, opImageEdit, opImageVary, opSpeech, opTranscribe, opTranslate, opRealtime}

// UsageEndpoints lists the endpoints usage rows name (store.Usage.Endpoint),
// whatever the client's style: the console's usage pages filter by them.
func UsageEndpoints() []string {
	names := make([]string, len(usageOps))
	for i, op := range usageOps {
		names[i] = op.name
	}
	return names
}
