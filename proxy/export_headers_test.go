package proxy

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
