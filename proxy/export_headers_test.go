package proxy

import "os"

// OpenAIHeaders are the headers api.openai.com sends with a chat completion
// (Content-Type and Date aside), with typical values, for the tests of
// both packages.
var OpenAIHeaders = [][2]string{
	{"Openai-Organization", "user-bench0000000000000000"},
	{"Openai-Processing-Ms", "412"},
	{"Openai-Project", "proj_bench000000000000000000"},
	{"Openai-Version", "2020-10-01"},
	{"X-Ratelimit-Limit-Requests", "30000"},
	{"X-Ratelimit-Limit-Tokens", "150000000"},
	{"X-Ratelimit-Remaining-Requests", "29999"},
	{"X-Ratelimit-Remaining-Tokens", "149999513"},
	{"X-Ratelimit-Reset-Requests", "2ms"},
	{"X-Ratelimit-Reset-Tokens", "0s"},
	{"X-Request-Id", "req_3f9a2c1e8b7d4a6f9e0c2b1a8d7f6e5c"},
	{"Strict-Transport-Security", "max-age=31536000; includeSubDomains; preload"},
	{"X-Content-Type-Options", "nosniff"},
	{"Cf-Cache-Status", "DYNAMIC"},
}

// NoPairViewEnv, set in a test binary's environment, has it run without
// the view of fasthttp's header pairs, as with a fasthttp that lays them
// out otherwise: every header set through fasthttp's setters and searched
// through its All (TestWireHeadersWithoutPairView).
const NoPairViewEnv = "ROSETTA_TEST_NO_PAIR_VIEW"

func init() {
	if os.Getenv(NoPairViewEnv) != "" {
		responsePairs, requestPairs = noPairs, noPairs
	}
}

// PairView reports whether the gateway reaches fasthttp's header pairs
// through its view.
func PairView() bool { return responsePairs != noPairs && requestPairs != noPairs }
