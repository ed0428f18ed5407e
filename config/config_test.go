package config

import (
	"os"
	"reflect"
	"strings"
	"testing"
	"time"
)

// envMap returns an env lookup backed by m.
func envMap(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestParseErrors(t *testing.T) {
	f := func(yml, want string) {
		t.Helper()
		_, err := Parse([]byte(yml), "rosetta.yaml", envMap(map[string]string{"EMPTY": ""}))
		if err == nil {
			t.Errorf("Parse(%q): no error, want %q", yml, want)
			return
		}
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Parse(%q):\n got %q\nwant %q", yml, err, want)
		}
	}

	// Decoder errors keep the line and name the field.
	f("server: [", "rosetta.yaml: line 1: did not find expected node content")
	f("- 1", "rosetta.yaml: line 1: cannot unmarshal !!seq into config.Config")
	f("severs: {}", `rosetta.yaml: severs: unknown field (line 1)`)
	f("server:\n  listen: 127.0.0.1:1\n  max_bdy: 1", `rosetta.yaml: server.max_bdy: unknown field (line 3)`)
	f("channels:\n- nmae: a", `rosetta.yaml: channels[0].nmae: unknown field (line 2)`)
	f("channels: [{name: a, timeouts: {conect: 1s}}]", `rosetta.yaml: channels[0].timeouts.conect: unknown field (line 1)`)
	f("channels: {a: 1}", "rosetta.yaml: channels: cannot unmarshal !!map into []config.Channel (line 1)")
	f("channels:\n- name: a\n  weight: heavy", "rosetta.yaml: channels[0].weight: cannot unmarshal !!str `heavy` into int (line 3)")
	// On a flow-style line the line number cannot tell name from weight.
	f("channels: [{name: a, weight: heavy}]", "rosetta.yaml: line 1: cannot unmarshal !!str `heavy` into int")
	f("channels: [{timeouts: {idle: 5}}]", "rosetta.yaml: channels[0].timeouts.idle: cannot unmarshal !!int `5` into time.Duration (line 1)")
	f("server:\n  max_body: 12 parsecs", `rosetta.yaml: server.max_body: "12 parsecs" is not a size (use e.g. 32MiB) (line 2)`)
	f("server: {max_body: [1]}", "rosetta.yaml: server.max_body: cannot unmarshal !!seq into a size (use e.g. 32MiB) (line 1)")
	f("channels: [{name: a, api_keys: [k, {x: y}]}]", "rosetta.yaml: channels[0].api_keys[1]: cannot unmarshal !!map into string (line 1)")
	f("server: {max_body: -1}", `rosetta.yaml: server.max_body: "-1" is not a size`)

	// server
	f("server: {listen: '8080'}", `rosetta.yaml: server.listen: "8080" is not host:port (e.g. 127.0.0.1:8080)`)
	f("server: {listen: 'localhost:http'}", `rosetta.yaml: server.listen: "localhost:http" is not host:port`)
	f("server: {listen: 'localhost:70000'}", `rosetta.yaml: server.listen: "localhost:70000" is not host:port`)
	f("server: {public_url: llm.example.com}", `rosetta.yaml: server.public_url: "llm.example.com" is not an absolute http(s) URL`)
	f("server: {public_url: 'ftp://llm.example.com'}", `rosetta.yaml: server.public_url: "ftp://llm.example.com" is not an absolute http(s) URL`)
	f("server: {shutdown_timeout: -1s}", "rosetta.yaml: server.shutdown_timeout: must be positive, got -1s")
	f("server: {max_ws_message: -1}", `rosetta.yaml: server.max_ws_message: "-1" is not a size`)
	f("server: {trusted_proxies: [10.0.0.0/8, 'fd00::1', nope]}", `rosetta.yaml: server.trusted_proxies[2]: "nope" is not an IP address or CIDR prefix`)
	f("store: {usage_flush: -1s}", "rosetta.yaml: store.usage_flush: must be positive, got -1s")
	f("store: {usage_retention: 10m}", "rosetta.yaml: store.usage_retention: must be at least 1h, got 10m0s")

	// store
	f("store: {driver: mysql}", `rosetta.yaml: store.driver: unknown driver "mysql" (want sqlite or postgres)`)
	f("store: {driver: postgres}", "rosetta.yaml: store.dsn: missing")
	f("store: {driver: postgres, dsn: 'postgres://u:${PGPASS}@db/r'}", "rosetta.yaml: store.dsn: ${PGPASS} is not set")

	// channels
	f("channels: [{type: demo, models: [m]}]", "rosetta.yaml: channels[0].name: missing")
	f("channels: [{name: a, type: demo, models: [m]}, {name: a, type: demo, models: [m]}]",
		`rosetta.yaml: channels[1].name: "a" already used by channels[0]`)
	f("channels: [{name: a, models: [m]}]", "rosetta.yaml: channels[0].type: missing (want openai, anthropic, gemini, cohere or demo)")
	f("channels: [{name: a, type: demo, models: [m]}, {name: b, type: foo, models: [m]}]",
		`rosetta.yaml: channels[1].type: unknown type "foo" (want openai, anthropic, gemini, cohere or demo)`)
	f("channels: [{name: a, type: openai, base_url: 'ftp://x', api_keys: [k], models: [m]}]",
		`rosetta.yaml: channels[0].base_url: "ftp://x" is not an absolute http(s) URL`)
	f("channels: [{name: a, type: openai, base_url: /v1, api_keys: [k], models: [m]}]",
		`rosetta.yaml: channels[0].base_url: "/v1" is not an absolute http(s) URL`)
	f("channels: [{name: a, type: demo, base_url: 'http://x', models: [m]}]", "rosetta.yaml: channels[0].base_url: not used by demo channels")
	f("channels: [{name: a, type: openai, models: [m]}]", "rosetta.yaml: channels[0].api_keys: missing (set api_keys or OPENAI_API_KEY)")
	f("channels: [{name: a, type: anthropic, models: [m]}]", "rosetta.yaml: channels[0].api_keys: missing (set api_keys or ANTHROPIC_API_KEY)")
	f("channels: [{name: a, type: gemini, models: [m]}]", "rosetta.yaml: channels[0].api_keys: missing (set api_keys or GEMINI_API_KEY)")
	f("channels: [{name: a, type: openai, api_keys: [k, ''], models: [m]}]", "rosetta.yaml: channels[0].api_keys[1]: empty")
	f("channels: [{name: a, type: openai, api_keys: [k, '${NOPE}'], models: [m]}]", "rosetta.yaml: channels[0].api_keys[1]: ${NOPE} is not set")
	f("channels: [{name: a, type: openai, api_keys: ['${EMPTY}'], models: [m]}]", "rosetta.yaml: channels[0].api_keys[0]: ${EMPTY} is not set")
	f("channels: [{name: a, type: openai, api_keys: ['sk-${NOPE'], models: [m]}]", `rosetta.yaml: channels[0].api_keys[0]: unclosed "${"`)
	f("channels: [{name: a, type: demo}]", "rosetta.yaml: channels[0].models: missing (list models or model_map)")
	f("channels: [{name: a, type: demo, models: [m, '']}]", "rosetta.yaml: channels[0].models[1]: empty")
	f("channels: [{name: a, type: demo, model_map: {fast: ''}}]", "rosetta.yaml: channels[0].model_map.fast: empty upstream name")
	f("channels: [{name: a, type: demo, model_map: {gemini-1.5: ''}}]", `rosetta.yaml: channels[0].model_map["gemini-1.5"]: empty upstream name`)
	f("channels: [{name: a, type: demo, model_map: {'': m}}]", "rosetta.yaml: channels[0].model_map: empty public name")
	f("channels: [{name: a, type: demo, models: [m], priority: -1}]", "rosetta.yaml: channels[0].priority: must not be negative, got -1")
	f("channels: [{name: a, type: demo, models: [m], weight: -2}]", "rosetta.yaml: channels[0].weight: must be at least 1, got -2")
	f("channels: [{name: a, type: openai, api_keys: [k], models: [m], api_version: '2023-06-01'}]",
		"rosetta.yaml: channels[0].api_version: only used by anthropic channels")
	f("channels: [{name: a, type: demo, models: [m], timeouts: {connect: -1s}}]", "rosetta.yaml: channels[0].timeouts.connect: must be positive, got -1s")
	f("channels: [{name: a, type: demo, models: [m], timeouts: {first_byte: -1s}}]", "rosetta.yaml: channels[0].timeouts.first_byte: must be positive")
	f("channels: [{name: a, type: demo, models: [m], timeouts: {idle: -1s}}]", "rosetta.yaml: channels[0].timeouts.idle: must be positive")
	f("channels: [{name: a, type: demo, models: [m], timeouts: {total: -1m}}]", "rosetta.yaml: channels[0].timeouts.total: must be positive, got -1m0s")
	f("channels: [{name: a, type: demo, models: [m], breaker: {failures: -1}}]", "rosetta.yaml: channels[0].breaker.failures: must be at least 1, got -1")
	f("channels: [{name: a, type: demo, models: [m], breaker: {cooldown: -1s}}]", "rosetta.yaml: channels[0].breaker.cooldown: must be positive, got -1s")
	f("channels: [{name: a, type: openai, api_keys: [k], models: [m], pace: 1s}]", "rosetta.yaml: channels[0].pace: only used by demo channels")
	f("channels: [{name: a, type: demo, models: [m], pace: -1s}]", "rosetta.yaml: channels[0].pace: must be positive, got -1s")
	f("channels: [{name: a, type: anthropic, api_keys: [k], models: [m], endpoints: [chat, embeddings]}]",
		"rosetta.yaml: channels[0].endpoints[1]: anthropic channels do not serve embeddings (they serve chat and responses)")
	f("channels: [{name: a, type: gemini, api_keys: [k], models: [m], endpoints: [embeddings, completions]}]",
		"rosetta.yaml: channels[0].endpoints[1]: gemini channels do not serve completions (they serve chat, embeddings and responses)")
	f("channels: [{name: a, type: openai, api_keys: [k], models: [m], endpoints: [chat, pictures]}]",
		`rosetta.yaml: channels[0].endpoints[1]: unknown endpoint "pictures" (want chat, completions, embeddings, rerank, images, audio, realtime or responses)`)
	f("channels: [{name: a, type: demo, models: [m], endpoints: [embeddings, chat, embeddings]}]",
		`rosetta.yaml: channels[0].endpoints[2]: "embeddings" listed twice`)

	// keys
	f("keys: [{key: 0123456789abcdef}]", "rosetta.yaml: keys[0].name: missing")
	f("keys: [{name: app}]", "rosetta.yaml: keys[0].key: missing")
	f("keys: [{name: app, key: short}]", "rosetta.yaml: keys[0].key: too short: 5 characters, want at least 16")
	f("keys: [{name: app, key: '${APP_KEY}'}]", "rosetta.yaml: keys[0].key: ${APP_KEY} is not set")
	f("keys: [{name: app, key: 0123456789abcdef}, {name: app, key: 0123456789abcdeX}]", `rosetta.yaml: keys[1].name: "app" already used by keys[0]`)
	f("keys: [{name: a, key: 0123456789abcdef}, {name: b, key: 0123456789abcdef}]", "rosetta.yaml: keys[1].key: same secret as keys[0]")
	f("keys: [{name: app, key: 0123456789abcdef, models: [gpt-*-mini]}]", `rosetta.yaml: keys[0].models[0]: "gpt-*-mini": "*" may only end a pattern`)
	f("keys: [{name: app, key: 0123456789abcdef, models: [m, '']}]", "rosetta.yaml: keys[0].models[1]: empty")
	f("keys: [{name: app, key: 0123456789abcdef, rpm: -1}]", "rosetta.yaml: keys[0].rpm: must not be negative, got -1")
	f("keys: [{name: app, key: 0123456789abcdef, tpm: -1}]", "rosetta.yaml: keys[0].tpm: must not be negative, got -1")

	// cluster
	f("cluster: {bind: '7946'}", `rosetta.yaml: cluster.bind: "7946" is not host:port`)
	f("cluster: {advertise: 10.0.0.1}", `rosetta.yaml: cluster.advertise: "10.0.0.1" is not host:port`)
	f("cluster: {join: [a, '']}", "rosetta.yaml: cluster.join[1]: empty")
	f("cluster: {window: 500ms}", "rosetta.yaml: cluster.window: must be at least 1s, got 500ms")
	f("keys: [{name: a, key: 0123456789abcdef, model_limits: {gpt-4o: {rpm: -1}}}]", "rosetta.yaml: keys[0].model_limits.gpt-4o.rpm: must not be negative, got -1")
	f("channels: [{name: a, type: demo, models: [m], tpm: -5}]", "rosetta.yaml: channels[0].tpm: must not be negative, got -5")
}

func TestParseReportsAllProblems(t *testing.T) {
	yml := `
server:
  listen: nowhere
  max_body: 1 parsec
channels:
  - {name: a, type: foo, models: [m]}
  - name: a
    type: demo
    weight: heavy
  - name: [b]
    type: demo
    models: [m]
keys:
  - {name: app, key: '${APP_KEY}'}
`
	_, err := Parse([]byte(yml), "rosetta.yaml", nil)
	if err == nil {
		t.Fatal("no error")
	}
	// Decoding, then the environment, then validation; one problem per field,
	// so channels[2].name is not also "missing", nor ${APP_KEY} "too short".
	want := []string{
		`rosetta.yaml: server.max_body: "1 parsec" is not a size (use e.g. 32MiB) (line 4)`,
		"rosetta.yaml: channels[1].weight: cannot unmarshal !!str `heavy` into int (line 9)",
		"rosetta.yaml: channels[2].name: cannot unmarshal !!seq into string (line 10)",
		`rosetta.yaml: keys[0].key: ${APP_KEY} is not set`,
		`rosetta.yaml: server.listen: "nowhere" is not host:port (e.g. 127.0.0.1:8080)`,
		`rosetta.yaml: channels[0].type: unknown type "foo" (want openai, anthropic, gemini, cohere or demo)`,
		`rosetta.yaml: channels[1].name: "a" already used by channels[0]`,
		`rosetta.yaml: channels[1].models: missing (list models or model_map)`,
	}
	if got := strings.Split(err.Error(), "\n"); !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

func TestParseFull(t *testing.T) {
	yml := `
server:
  listen: 0.0.0.0:9000
  public_url: https://llm.example.com/
  max_body: 1GiB
  max_upload: 2GiB
  shutdown_timeout: 1m
store:
  driver: postgres
  dsn: postgres://rosetta:${PGPASSWORD}@db/rosetta
channels:
  - name: oa
    type: openai
    base_url: https://openrouter.ai/api/v1/
    api_keys: [sk-1, "${OA_KEY}"]
    models: [gpt-4o, gpt-4o-mini]
    model_map: {fast: gpt-4o-mini}
    priority: 2
    weight: 7
    rpm: 5000
    tpm: 2000000
    timeouts: {connect: 1s, first_byte: 2s, idle: 3s, total: 4s}
    breaker: {failures: 9, cooldown: 1m}
  - name: claude
    type: anthropic
    api_keys: [sk-ant]
    models: [claude-sonnet-4-5]
    api_version: "2026-10-21"
  - name: demo
    type: demo
    models: [demo]
    pace: 1ms
keys:
  - name: app
    key: sk-rosetta-${APP_SECRET}
    models: [gpt-4o*, fast]
    rpm: 60
    tpm: 1000
    model_limits: {gpt-4o: {rpm: 10}, fast: {tpm: 500}}
cluster:
  enabled: true
  node_name: gw1
  bind: 10.0.0.1:7000
  advertise: 192.0.2.1:7000
  join: [gw2:7000, rosetta-headless]
  secret_key_env: GOSSIP
  window: 10s
`
	env := envMap(map[string]string{
		"PGPASSWORD": "pw", "OA_KEY": "sk-2", "APP_SECRET": "0123456789",
		"OPENAI_API_KEY": "ignored: api_keys is set",
	})
	got, err := Parse([]byte(yml), "full.yaml", env)
	if err != nil {
		t.Fatal(err)
	}
	defaultTimeouts := Timeouts{Connect: 5 * time.Second, FirstByte: time.Minute, Idle: time.Minute, Total: 10 * time.Minute}
	defaultBreaker := Breaker{Failures: 5, Cooldown: 30 * time.Second}
	want := &Config{
		Server: Server{
			Listen:          "0.0.0.0:9000",
			PublicURL:       "https://llm.example.com",
			MaxBody:         1 << 30,
			MaxUpload:       2 << 30,
			MaxWSMessage:    16 << 20,
			ShutdownTimeout: time.Minute,
		},
		Store: Store{Driver: "postgres", DSN: "postgres://rosetta:pw@db/rosetta", UsageFlush: time.Second, UsageRetention: 90 * 24 * time.Hour, ResponsesRetention: 30 * 24 * time.Hour},
		Channels: []Channel{{
			Name:      "oa",
			Type:      "openai",
			BaseURL:   "https://openrouter.ai/api/v1",
			APIKeys:   []string{"sk-1", "sk-2"},
			Models:    []string{"gpt-4o", "gpt-4o-mini"},
			ModelMap:  map[string]string{"fast": "gpt-4o-mini"},
			Priority:  2,
			Weight:    7,
			Responses: "native",
			RPM:       5000,
			TPM:       2000000,
			Timeouts:  Timeouts{Connect: time.Second, FirstByte: 2 * time.Second, Idle: 3 * time.Second, Total: 4 * time.Second},
			Breaker:   Breaker{Failures: 9, Cooldown: time.Minute},
		}, {
			Name:       "claude",
			Type:       "anthropic",
			BaseURL:    "https://api.anthropic.com",
			APIKeys:    []string{"sk-ant"},
			Models:     []string{"claude-sonnet-4-5"},
			Weight:     1,
			APIVersion: "2026-10-21",
			Responses:  "translate",
			Timeouts:   defaultTimeouts,
			Breaker:    defaultBreaker,
		}, {
			Name:      "demo",
			Type:      "demo",
			Models:    []string{"demo"},
			Weight:    1,
			Responses: "translate",
			Timeouts:  defaultTimeouts,
			Breaker:   defaultBreaker,
			Pace:      time.Millisecond,
		}},
		Keys: []Key{{Name: "app", Key: "sk-rosetta-0123456789", Models: []string{"gpt-4o*", "fast"}, RPM: 60, TPM: 1000,
			ModelLimits: map[string]Limits{"gpt-4o": {RPM: 10}, "fast": {TPM: 500}}}},
		Cluster: Cluster{
			Enabled:      true,
			NodeName:     "gw1",
			Bind:         "10.0.0.1:7000",
			Advertise:    "192.0.2.1:7000",
			Join:         []string{"gw2:7000", "rosetta-headless"},
			SecretKeyEnv: "GOSSIP",
			Window:       10 * time.Second,
		},
		Source: "full.yaml",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", got, want)
	}
}

func TestParseDefaults(t *testing.T) {
	yml := `
channels:
  - {name: oa, type: openai, models: [gpt-4o]}
  - {name: claude, type: anthropic, models: [claude-sonnet-4-5]}
  - {name: gem, type: gemini, model_map: {flash: gemini-2.5-flash}}
  - {name: demo, type: demo, models: [demo]}
keys:
  - {name: app, key: 0123456789abcdef}
`
	env := envMap(map[string]string{
		"OPENAI_API_KEY":    "sk-1, sk-2,",
		"ANTHROPIC_API_KEY": "sk-ant",
		"GEMINI_API_KEY":    "AIza",
	})
	got, err := Parse([]byte(yml), "rosetta.yaml", env)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	timeouts := Timeouts{Connect: 5 * time.Second, FirstByte: 60 * time.Second, Idle: 60 * time.Second, Total: 10 * time.Minute}
	breaker := Breaker{Failures: 5, Cooldown: 30 * time.Second}
	want := &Config{
		Server: Server{Listen: "127.0.0.1:8080", PublicURL: "http://127.0.0.1:8080", MaxBody: 32 << 20, MaxUpload: 100 << 20, MaxWSMessage: 16 << 20, ShutdownTimeout: 30 * time.Second},
		Store:  Store{Driver: "sqlite", DSN: "rosetta.db", UsageFlush: time.Second, UsageRetention: 90 * 24 * time.Hour, ResponsesRetention: 30 * 24 * time.Hour},
		Channels: []Channel{
			{Name: "oa", Type: "openai", BaseURL: "https://api.openai.com/v1", APIKeys: []string{"sk-1", "sk-2"},
				Models: []string{"gpt-4o"}, Weight: 1, Responses: "native", Timeouts: timeouts, Breaker: breaker},
			{Name: "claude", Type: "anthropic", BaseURL: "https://api.anthropic.com", APIKeys: []string{"sk-ant"},
				Models: []string{"claude-sonnet-4-5"}, Weight: 1, APIVersion: "2023-06-01", Responses: "translate", Timeouts: timeouts, Breaker: breaker},
			{Name: "gem", Type: "gemini", BaseURL: "https://generativelanguage.googleapis.com", APIKeys: []string{"AIza"},
				ModelMap: map[string]string{"flash": "gemini-2.5-flash"}, Weight: 1, Responses: "translate", Timeouts: timeouts, Breaker: breaker},
			{Name: "demo", Type: "demo", Models: []string{"demo"}, Weight: 1, Responses: "translate", Timeouts: timeouts, Breaker: breaker, Pace: 40 * time.Millisecond},
		},
		Keys:    []Key{{Name: "app", Key: "0123456789abcdef", Models: []string{"*"}}},
		Cluster: Cluster{NodeName: host + "-8080", Bind: "0.0.0.0:7946", SecretKeyEnv: "ROSETTA_GOSSIP_KEY", Window: time.Minute},
		Source:  "rosetta.yaml",
	}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", got, want)
	}
}

func TestParseEmpty(t *testing.T) {
	for _, yml := range []string{"", "# nothing\n", "{}"} {
		c, err := Parse([]byte(yml), "empty.yaml", nil)
		if err != nil {
			t.Fatalf("Parse(%q): %v", yml, err)
		}
		if c.Server.Listen != "127.0.0.1:8080" || c.Store.Driver != "sqlite" || len(c.Channels) != 0 {
			t.Fatalf("Parse(%q) = %+v, want defaults and no channels", yml, c)
		}
	}
}

func TestParseEnv(t *testing.T) {
	f := func(yml string, env map[string]string, check func(*Config) bool) {
		t.Helper()
		c, err := Parse([]byte(yml), "rosetta.yaml", envMap(env))
		if err != nil {
			t.Fatalf("Parse(%q): %v", yml, err)
		}
		if !check(c) {
			t.Fatalf("Parse(%q) with %v: unexpected %+v", yml, env, c)
		}
	}

	// ROSETTA_LISTEN overrides listen and the public URL derived from it.
	f("server: {listen: '127.0.0.1:1'}", map[string]string{"ROSETTA_LISTEN": "10.0.0.1:9000"}, func(c *Config) bool {
		return c.Server.Listen == "10.0.0.1:9000" && c.Server.PublicURL == "http://10.0.0.1:9000"
	})
	f("server: {public_url: 'https://llm.example.com'}", map[string]string{"ROSETTA_LISTEN": ":9000"}, func(c *Config) bool {
		return c.Server.Listen == ":9000" && c.Server.PublicURL == "https://llm.example.com"
	})
	f("server: {listen: ':9000'}", nil, func(c *Config) bool { return c.Server.PublicURL == "http://localhost:9000" })
	f("server: {listen: '[::]:9000'}", nil, func(c *Config) bool { return c.Server.PublicURL == "http://localhost:9000" })
	f("server: {listen: '[::1]:9000'}", nil, func(c *Config) bool { return c.Server.PublicURL == "http://[::1]:9000" })

	// Provider keys fill only channels without api_keys.
	f("channels: [{name: a, type: openai, api_keys: [sk-own], models: [m]}]", map[string]string{"OPENAI_API_KEY": "sk-env"}, func(c *Config) bool {
		return reflect.DeepEqual(c.Channels[0].APIKeys, []string{"sk-own"})
	})
	f("channels: [{name: a, type: demo, models: [m]}]", map[string]string{"OPENAI_API_KEY": "sk-env"}, func(c *Config) bool {
		return c.Channels[0].APIKeys == nil
	})

	// ${VAR} expansion, anywhere in the value, several times.
	f("channels: [{name: a, type: openai, api_keys: ['${A}', 'x-${A}-${B}-y'], models: [m]}]", map[string]string{"A": "1", "B": "2"}, func(c *Config) bool {
		return reflect.DeepEqual(c.Channels[0].APIKeys, []string{"1", "x-1-2-y"})
	})
	f("keys: [{name: app, key: '${K}'}]", map[string]string{"K": "0123456789abcdef"}, func(c *Config) bool {
		return c.Keys[0].Key == "0123456789abcdef"
	})
	// Only api_keys, keys[].key and store.dsn are expanded.
	f("channels: [{name: '${A}', type: demo, models: ['${A}']}]", map[string]string{"A": "1"}, func(c *Config) bool {
		return c.Channels[0].Name == "${A}" && c.Channels[0].Models[0] == "${A}"
	})
}

func TestByteSize(t *testing.T) {
	f := func(s string, want ByteSize, ok bool) {
		t.Helper()
		got, gotOK := parseSize(s)
		if got != want || gotOK != ok {
			t.Errorf("parseSize(%q) = %d, %v; want %d, %v", s, got, gotOK, want, ok)
		}
	}
	f("1048576", 1<<20, true)
	f("0", 0, true)
	f("100B", 100, true)
	f("512KiB", 512<<10, true)
	f("32MiB", 32<<20, true)
	f("1GiB", 1<<30, true)
	f("2TiB", 2<<40, true)
	f("10MB", 10e6, true)
	f("3KB", 3000, true)
	f("4GB", 4e9, true)
	f("1TB", 1e12, true)
	f("32mib", 32<<20, true)
	f(" 32 MiB ", 32<<20, true)
	f("", 0, false)
	f("MiB", 0, false)
	f("-1", 0, false)
	f("1.5GiB", 0, false)
	f("12 parsecs", 0, false)
	f("32M", 0, false)
	f("9223372036854775807", 1<<63-1, true)
	f("9223372036854775808", 0, false)
	f("8388608TiB", 0, false) // 2^63 overflows

	g := func(s ByteSize, want string) {
		t.Helper()
		if got := s.String(); got != want {
			t.Errorf("ByteSize(%d).String() = %q, want %q", int64(s), got, want)
		}
		if back, ok := parseSize(want); !ok || back != s {
			t.Errorf("parseSize(%q) = %d, %v; want %d", want, back, ok, int64(s))
		}
	}
	g(0, "0B")
	g(100, "100B")
	g(1024, "1KiB")
	g(32<<20, "32MiB")
	g(3<<30, "3GiB")
	g(1<<40, "1TiB")
	g(10e6, "10MB")
	g(1500, "1500B")
	g(1025, "1025B")
}

func TestDefault(t *testing.T) {
	host, _ := os.Hostname()
	want := &Config{
		Server: Server{Listen: "127.0.0.1:8080", PublicURL: "http://127.0.0.1:8080", MaxBody: 32 << 20, MaxUpload: 100 << 20, MaxWSMessage: 16 << 20, ShutdownTimeout: 30 * time.Second},
		Store:  Store{Driver: "sqlite", DSN: "rosetta.db", UsageFlush: time.Second, UsageRetention: 90 * 24 * time.Hour, ResponsesRetention: 30 * 24 * time.Hour},
		Channels: []Channel{{
			Name: "demo", Type: "demo", Models: []string{"demo"}, Weight: 1, Pace: 40 * time.Millisecond, Responses: "translate",
			Timeouts: Timeouts{Connect: 5 * time.Second, FirstByte: 60 * time.Second, Idle: 60 * time.Second, Total: 10 * time.Minute},
			Breaker:  Breaker{Failures: 5, Cooldown: 30 * time.Second},
		}},
		Cluster: Cluster{NodeName: host + "-8080", Bind: "0.0.0.0:7946", SecretKeyEnv: "ROSETTA_GOSSIP_KEY", Window: time.Minute},
	}
	c := Default(nil)
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got\n%+v\nwant\n%+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Fatal(err)
	}

	c = Default(envMap(map[string]string{"ROSETTA_LISTEN": "0.0.0.0:9000", "OPENAI_API_KEY": "sk"}))
	if c.Server.Listen != "0.0.0.0:9000" || c.Server.PublicURL != "http://localhost:9000" || c.Channels[0].APIKeys != nil {
		t.Fatalf("Default with env: %+v", c)
	}

	c = Default(envMap(map[string]string{"ROSETTA_LISTEN": "9000"}))
	want2 := `default config: server.listen: "9000" is not host:port`
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), want2) {
		t.Fatalf("Validate() = %v, want %q", err, want2)
	}
}

func TestValidate(t *testing.T) {
	// Rules that YAML input cannot reach, for configs built in code.
	c := Default(nil)
	c.Source = "code"
	c.Server.MaxBody = -1
	c.Server.MaxUpload = 0
	c.Cluster.NodeName = ""
	c.Cluster.SecretKeyEnv = ""
	want := "code: server.max_body: must be positive, got -1B\n" +
		"code: server.max_upload: must be positive, got 0B\n" +
		"code: cluster.node_name: missing\n" +
		"code: cluster.secret_key_env: missing"
	if err := c.Validate(); err == nil || err.Error() != want {
		t.Fatalf("Validate() = %v, want\n%s", err, want)
	}
}

func TestModels(t *testing.T) {
	ch := &Channel{
		Models:   []string{"gpt-4o-mini", "gpt-4o", "o3", "gpt-4o"},
		ModelMap: map[string]string{"fast": "gpt-4o-mini", "smart": "o3-pro", "gpt-4o": "gpt-4o-2024-11-20"},
	}
	if got, want := ch.PublicModels(), []string{"fast", "gpt-4o", "o3", "smart"}; !reflect.DeepEqual(got, want) {
		t.Errorf("PublicModels() = %q, want %q", got, want)
	}
	if got := (&Channel{}).PublicModels(); len(got) != 0 {
		t.Errorf("PublicModels() of an empty channel = %q", got)
	}

	f := func(public, want string, ok bool) {
		t.Helper()
		got, gotOK := ch.UpstreamModel(public)
		if got != want || gotOK != ok {
			t.Errorf("UpstreamModel(%q) = %q, %v; want %q, %v", public, got, gotOK, want, ok)
		}
	}
	f("fast", "gpt-4o-mini", true)
	f("smart", "o3-pro", true)             // a target need not be listed in models
	f("gpt-4o", "gpt-4o-2024-11-20", true) // a model_map key wins over models
	f("o3", "o3", true)
	f("gpt-4o-mini", "", false) // mapped: served only as "fast"
	f("o3-pro", "", false)
	f("nope", "", false)
}

func TestExample(t *testing.T) {
	for k, v := range map[string]string{
		"PGPASSWORD": "pw", "OPENAI_KEY_1": "sk-1", "OPENAI_KEY_2": "sk-2",
		"ANTHROPIC_API_KEY": "sk-ant", "GEMINI_API_KEY": "AIza",
		"ROSETTA_APP_KEY": "sk-rosetta-0123456789", "ROSETTA_LISTEN": "",
		"COHERE_API_KEY": "co-key",
	} {
		t.Setenv(k, v)
	}
	const path = "testdata/rosetta.example.yaml"
	c, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if c.Source != path || len(c.Channels) != 5 || len(c.Keys) != 1 {
		t.Fatalf("Load(%q) = %+v", path, c)
	}
	if got := c.Channels[1].APIKeys; !reflect.DeepEqual(got, []string{"sk-ant"}) {
		t.Errorf("claude api_keys = %q, want the ANTHROPIC_API_KEY value", got)
	}
	if co := c.Channels[3]; co.Type != "cohere" || !reflect.DeepEqual(co.APIKeys, []string{"co-key"}) || co.BaseURL != "https://api.cohere.com" {
		t.Errorf("the cohere channel %+v: want COHERE_API_KEY and Cohere's base URL", co)
	}

	// Every field of the struct appears in the example.
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	for _, typ := range []reflect.Type{
		reflect.TypeFor[Config](), reflect.TypeFor[Server](), reflect.TypeFor[Store](), reflect.TypeFor[Channel](),
		reflect.TypeFor[Timeouts](), reflect.TypeFor[Breaker](), reflect.TypeFor[Key](), reflect.TypeFor[Cluster](),
	} {
		for f := range typ.Fields() {
			if tag := f.Tag.Get("yaml"); tag != "-" && !strings.Contains(string(data), "\n"+tag+":") &&
				!strings.Contains(string(data), " "+tag+":") {
				t.Errorf("%s.%s (%s) is missing from %s", typ.Name(), f.Name, tag, path)
			}
		}
	}
}

func TestLoadMissing(t *testing.T) {
	_, err := Load("testdata/nope.yaml")
	if err == nil || !strings.Contains(err.Error(), "cannot read config: open testdata/nope.yaml") {
		t.Fatalf("Load = %v", err)
	}
}

func TestChannelComplete(t *testing.T) {
	c := Channel{Name: "console-oa", Type: "openai", APIKeys: []string{"sk-1"}, Models: []string{"gpt-4o"}}
	if err := c.Complete(); err != nil {
		t.Fatal(err)
	}
	if c.BaseURL != "https://api.openai.com/v1" || c.Weight != 1 || c.Timeouts.Total != 10*time.Minute || c.Breaker.Failures != 5 {
		t.Fatalf("defaults not applied: %+v", c)
	}
	f := func(c Channel, want string) {
		t.Helper()
		err := c.Complete()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("Complete(%+v) = %v, want %q", c, err, want)
		}
	}
	f(Channel{Name: "x", Type: "nope", Models: []string{"m"}}, `channel "x": type: unknown type "nope"`)
	f(Channel{Name: "x", Type: "anthropic", Models: []string{"m"}}, `channel "x": api_keys: missing`)
	f(Channel{Name: "x", Type: "openai", BaseURL: "ftp://h", APIKeys: []string{"k"}, Models: []string{"m"}}, `channel "x": base_url:`)
	f(Channel{Name: "x", Type: "demo"}, `channel "x": models: missing`)
}

func TestTrustedPrefixes(t *testing.T) {
	c, err := Parse([]byte("server: {trusted_proxies: [10.1.2.3/8, 192.168.1.7, 'fd00::/8', '::1']}"), "t.yaml", func(string) string { return "" })
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range c.Server.TrustedPrefixes() {
		got = append(got, p.String())
	}
	want := []string{"10.0.0.0/8", "192.168.1.7/32", "fd00::/8", "::1/128"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("TrustedPrefixes = %q, want %q", got, want)
	}
}
