// Command rosetta is the Rosetta model gateway.
//
//	rosetta serve [-config rosetta.yaml] [-listen addr]   run the gateway
//	rosetta admin reset-password [-config f] [user]       set a console user's password
//	rosetta version                                       print the version
//
// Every command takes -h (or --help): it prints the command's usage and
// exits 0.
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/signal"
	"runtime/pprof"
	"sync"
	"syscall"
	"time"

	"github.com/rosetta-gateway/rosetta/cluster"
	"github.com/rosetta-gateway/rosetta/config"
	"github.com/rosetta-gateway/rosetta/console"
	"github.com/rosetta-gateway/rosetta/internal/asynclog"
	"github.com/rosetta-gateway/rosetta/proxy"
	"github.com/rosetta-gateway/rosetta/store"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	err := command(os.Args[1:])
	var bad usageError
	switch {
	case err == nil, errors.Is(err, flag.ErrHelp):
		// -h asked for the usage, which is printed: not a failure.
	case errors.As(err, &bad):
		fmt.Fprintln(os.Stderr, "rosetta:", bad.msg)
		fmt.Fprint(os.Stderr, bad.usage)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "rosetta:", err)
		os.Exit(1)
	}
}

// command runs the command that args name.
func command(args []string) error {
	if len(args) == 0 {
		return usageError{"no command given", mainUsage}
	}
	switch args[0] {
	case "serve":
		return serve(args[1:])
	case "admin":
		return admin(args[1:])
	case "version", "-version", "--version":
		if err := noFlags("version", versionUsage, args[1:]); err != nil {
			return err
		}
		fmt.Println("rosetta", version)
		return nil
	case "help", "-h", "-help", "--help":
		fmt.Print(mainUsage)
		return nil
	default:
		return usageError{fmt.Sprintf("unknown command %q", args[0]), mainUsage}
	}
}

const mainUsage = `usage: rosetta <command> [flags]

commands:
  serve                  run the gateway (-config FILE; without it, the built-in demo setup)
  admin reset-password   set a console user's password (a lost admin password)
  version                print the version

rosetta <command> -h prints the command's flags.
`

const versionUsage = "usage: rosetta version\n\nPrints the version.\n"

// usageError is a command line the commands cannot run: main prints msg
// and usage on stderr and exits 2.
type usageError struct{ msg, usage string }

func (e usageError) Error() string { return e.msg }

// newFlags makes the flag set of a command, whose usage is the text before
// the flags' list.
func newFlags(name, usage string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), usage)
		fmt.Fprintln(fs.Output(), "\nflags:")
		fs.PrintDefaults()
	}
	return fs
}

// parseFlags parses args into fs. On -h or --help it prints the usage on
// stdout and returns flag.ErrHelp (main exits 0); on a bad flag it returns
// a usageError with the usage (main exits 2).
func parseFlags(fs *flag.FlagSet, args []string) error {
	fs.SetOutput(io.Discard) // the flag package would print both cases to stderr
	err := fs.Parse(args)
	if err == nil {
		return nil
	}
	var usage bytes.Buffer
	fs.SetOutput(&usage)
	fs.Usage()
	if errors.Is(err, flag.ErrHelp) {
		os.Stdout.Write(usage.Bytes())
		return flag.ErrHelp
	}
	return usageError{err.Error(), usage.String()}
}

// noFlags checks the arguments of a command that takes none but -h.
func noFlags(name, usage string, args []string) error {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.Usage = func() { fmt.Fprint(fs.Output(), usage) }
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("%s takes no arguments, got %q", name, fs.Args()), usage}
	}
	return nil
}

const serveUsage = `usage: rosetta serve [-config FILE] [-listen ADDR] [-log-format json|text]

Runs the gateway. Without -config, the built-in demo setup: the demo channel,
a SQLite store rosetta.db in the working directory, and a key for this run,
printed on stdout. The listen address is -listen, else ROSETTA_LISTEN, else
server.listen of the config (default 127.0.0.1:8080).
`

func serve(args []string) error {
	fs := newFlags("serve", serveUsage)
	path := fs.String("config", "", "configuration file (YAML); empty: built-in demo setup")
	listen := fs.String("listen", "", "address to listen on, host:port (overrides ROSETTA_LISTEN and server.listen)")
	logFormat := fs.String("log-format", "json", "log format: json or text")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile (pprof) of the whole run to this file, for `go tool pprof`")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return usageError{fmt.Sprintf("serve takes no arguments, got %q", fs.Args()), serveUsage}
	}
	if *cpuProfile != "" {
		stop, err := startCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stop()
	}
	cfg, demoKey, err := loadConfig(*path, *listen)
	if err != nil {
		return err
	}
	st, err := openStore(cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	// Before the logger starts: nothing else writes to stderr yet, so the
	// password block cannot be torn by a log line.
	if err := bootstrapAdmin(st); err != nil {
		return err
	}

	sink := asynclog.New(os.Stderr, 100*time.Millisecond, 4<<20)
	defer sink.Close()
	log := newLogger(sink, *logFormat)
	slog.SetDefault(log)
	usage := store.NewUsageWriter(st, store.UsageWriterOptions{
		Interval: cfg.Store.UsageFlush,
		OnError:  func(err error) { log.Error("usage log", "err", err) },
	})
	pruning, stopPruning := context.WithCancel(context.Background())
	var pruned sync.WaitGroup
	for _, p := range []struct {
		what  string
		prune func(context.Context, store.Store, time.Duration, time.Duration, func(int64, error))
		keep  time.Duration
	}{
		{"usage", store.PruneUsage, cfg.Store.UsageRetention},
		{"responses", store.PruneResponses, cfg.Store.ResponsesRetention},
	} {
		pruned.Go(func() {
			p.prune(pruning, st, p.keep, time.Hour, func(n int64, err error) {
				if err != nil {
					log.Error(p.what+" retention", "err", err)
				} else {
					log.Info(p.what+" retention: old rows deleted", "rows", n, "older_than", p.keep)
				}
			})
		})
	}
	// Before the store closes (deferred above).
	defer func() { stopPruning(); pruned.Wait() }()

	ln, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		return listenError(cfg.Server.Listen, err)
	}
	base := "http://" + ln.Addr().String()
	public := publicURL(cfg, base)
	gw := &consoleGateway{}
	con, err := console.New(console.Config{Store: st, Gateway: gw, PublicURL: public, Log: log,
		TrustedProxies: cfg.Server.TrustedPrefixes()})
	if err != nil {
		return err
	}
	node, err := newNode(cfg, log)
	if err != nil {
		return err
	}
	opts := proxy.Options{Log: log, AccessLog: sink, LogFormat: *logFormat, LogDropped: sink.Dropped, Store: st, Usage: usage,
		Mount: con.Register, Cluster: node, LimitWindow: cfg.Cluster.Window}
	if node != nil {
		// Gossip drops changed keys and channels everywhere at once: the
		// store poll is the fallback for a node that missed a broadcast.
		opts.KeyPoll, opts.ChannelPoll = fallbackKeyPoll, fallbackChannelPoll
	}
	g, err := proxy.New(cfg, opts)
	if err != nil {
		return err
	}
	gw.g, gw.node = g, node
	if node != nil {
		// Joined before serving: the first admissions see the fleet's counts.
		if err := node.Start(g.LimitCounts(), clusterHandlers(g, log)); err != nil {
			return err
		}
		defer leave(node, log)
	}
	// Catch signals before the banner: a caller that sends SIGTERM as soon
	// as it has read the banner must get a drain, not a killed process.
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(stop)
	log.Info("rosetta is serving", "version", version, "listen", ln.Addr().String(),
		"config", cfg.Source, "store", cfg.Store.Driver, "channels", len(cfg.Channels), "console", public+"/console/")
	printBanner(os.Stdout, base, public, demoKey)

	err = run(g, ln, cfg.Server.ShutdownTimeout, log, stop)
	// The gateway has handed over the usage rows of every request it
	// finished: write them before the store closes.
	ctx, cancel := context.WithTimeout(context.Background(), usageFlushTimeout)
	defer cancel()
	if uerr := usage.Close(ctx); uerr != nil {
		log.Error("usage rows not written", "err", uerr, "lost", usage.Failed())
	}
	if err == nil {
		log.Info("stopped")
	}
	return err
}

// The store polls of a node in a cluster, the fallback of gossip.
const (
	fallbackKeyPoll     = 5 * time.Second
	fallbackChannelPoll = 15 * time.Second
)

// newNode makes this node's cluster membership when cluster.enabled, not
// started yet; nil on a single node.
func newNode(cfg *config.Config, log *slog.Logger) (*cluster.Node, error) {
	cl := &cfg.Cluster
	if !cl.Enabled {
		return nil, nil
	}
	raw := os.Getenv(cl.SecretKeyEnv)
	if raw == "" {
		return nil, fmt.Errorf("cluster.enabled: the gossip key is missing: set %s (16, 24 or 32 bytes, or their base64; the same on every node)", cl.SecretKeyEnv)
	}
	key, err := cluster.ParseSecretKey(raw)
	if err != nil {
		return nil, fmt.Errorf("cluster.secret_key_env: %s: %w", cl.SecretKeyEnv, err)
	}
	if cfg.Store.Driver == "sqlite" {
		log.Warn("cluster on SQLite files: every node has a store of its own. Rate limits, and the keys and channels " +
			"of the configuration file, hold for the whole fleet; keys and channels made in a node's console exist " +
			"on that node only (their changes are gossiped, but only to drop caches). Use PostgreSQL to share them.")
	}
	return cluster.New(cluster.Options{Name: cl.NodeName, Bind: cl.Bind, Advertise: cl.Advertise, Join: cl.Join,
		SecretKey: key, Window: cl.Window, Version: version, Log: log}), nil
}

// clusterHandlers apply the changes other nodes broadcast to this gateway.
func clusterHandlers(g *proxy.Gateway, log *slog.Logger) cluster.Handlers {
	return cluster.Handlers{
		KeyChanged:  g.KeyChanged,
		OpenStreams: g.OpenStreams,
		ChannelsChanged: func() {
			ctx, cancel := context.WithTimeout(context.Background(), storeOpenTimeout)
			defer cancel()
			switch skipped, err := g.ChannelsChanged(ctx); {
			case err != nil:
				log.Warn("channels changed on another node; cannot reload them", "err", err)
			case len(skipped) > 0:
				log.Warn("channels changed on another node; some left out", "skipped", fmt.Sprint(skipped))
			}
		},
	}
}

// leaveTimeout bounds announcing this node's leave to the others.
const leaveTimeout = 5 * time.Second

// leave takes the node out of the fleet at shutdown, once the requests in
// flight are done: the others stop reserving its share at once.
func leave(node *cluster.Node, log *slog.Logger) {
	if err := node.Leave(leaveTimeout); err != nil {
		log.Warn("cluster leave", "err", err)
	}
}

// startCPUProfile profiles the process into path until stop is called.
func startCPUProfile(path string) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpuprofile: %w", err)
	}
	return func() { pprof.StopCPUProfile(); f.Close() }, nil
}

// usageFlushTimeout bounds writing the last usage rows at shutdown.
const usageFlushTimeout = 15 * time.Second

// run serves until a signal arrives on stop (SIGTERM or SIGINT, registered
// by the caller before anything tells the world it is serving), then stops
// accepting connections and waits up to timeout for requests and streams
// in flight.
func run(g *proxy.Gateway, ln net.Listener, timeout time.Duration, log *slog.Logger, stop <-chan os.Signal) error {
	served := make(chan error, 1)
	go func() { served <- g.Serve(ln) }()
	select {
	case err := <-served:
		return err
	case sig := <-stop:
		log.Info("shutting down: no new connections, waiting for requests in flight",
			"signal", sig.String(), "deadline", timeout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	if err := g.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	} else if err != nil {
		log.Warn("shutdown deadline passed; closing the streams still open")
	}
	return nil
}

// listenError says which address could not be listened on and where to
// choose another: net's error names it only inside its own wording
// ("listen tcp 127.0.0.1:8080: bind: address already in use").
func listenError(addr string, err error) error {
	var op *net.OpError
	if errors.As(err, &op) && op.Err != nil {
		err = op.Err // "bind: address already in use"
	}
	return fmt.Errorf("cannot listen on %s: %w (set server.listen in the config, ROSETTA_LISTEN, or -listen)", addr, err)
}

// loadConfig reads the configuration file, or makes the built-in demo
// setup without one, with listen, when set, in place of ROSETTA_LISTEN and
// server.listen. With no keys configured, it adds a key for this run and
// returns its secret to print.
func loadConfig(path, listen string) (cfg *config.Config, demoKey string, err error) {
	// Through the variable the config reads, so that what follows the
	// address (the public URL's default) follows -listen too.
	if listen != "" {
		if err := os.Setenv("ROSETTA_LISTEN", listen); err != nil {
			return nil, "", err
		}
	}
	if path == "" {
		cfg = config.Default(os.Getenv)
	} else if cfg, err = config.Load(path); err != nil {
		return nil, "", err
	}
	if len(cfg.Keys) == 0 {
		demoKey = newKey()
		cfg.Keys = append(cfg.Keys, config.Key{Name: "demo", Key: demoKey, Models: []string{"*"}})
	}
	return cfg, demoKey, nil
}

// storeOpenTimeout bounds connecting to the store and migrating it.
const storeOpenTimeout = 30 * time.Second

// openStore opens the configured store with the key that seals channel
// API keys: ROSETTA_SECRET_KEY, or for SQLite a key file next to the
// database, made on first start.
func openStore(cfg *config.Config) (store.Store, error) {
	sqlitePath := ""
	if cfg.Store.Driver == "sqlite" {
		sqlitePath = cfg.Store.DSN
	}
	secret, err := store.LoadSecretKey(os.Getenv(store.SecretKeyEnv), sqlitePath)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), storeOpenTimeout)
	defer cancel()
	st, err := store.Open(ctx, cfg.Store.Driver, cfg.Store.DSN, store.Options{SecretKey: secret})
	if err != nil {
		return nil, fmt.Errorf("cannot open the store: %w", err)
	}
	return st, nil
}

// bootstrapAdmin creates the console's admin user on the first start, with
// ROSETTA_ADMIN_PASSWORD or a generated password, which it prints to
// stderr: this once, and never into the log.
func bootstrapAdmin(st store.Store) error {
	ctx, cancel := context.WithTimeout(context.Background(), storeOpenTimeout)
	defer cancel()
	generated, err := console.Bootstrap(ctx, st, os.Getenv("ROSETTA_ADMIN_PASSWORD"))
	if err != nil || generated == "" {
		return err
	}
	fmt.Fprintf(os.Stderr, `
=== Rosetta: first start ===
The console's admin user was created. Log in as %q with this password:

    %s

It is shown this once and is not stored in clear. Set ROSETTA_ADMIN_PASSWORD
before the first start to choose it instead.
============================

`, console.AdminName, generated)
	return nil
}

// publicURL is the configured public URL, or base, the address actually
// listened on, when the configured port is 0 (picked by the system).
func publicURL(cfg *config.Config, base string) string {
	if _, port, err := net.SplitHostPort(cfg.Server.Listen); err == nil && port == "0" {
		return base
	}
	return cfg.Server.PublicURL
}

// printBanner tells the person who started the gateway where it is, and,
// without configured keys, the key of this run and how to try it.
func printBanner(w io.Writer, base, public, demoKey string) {
	fmt.Fprintf(w, "\nRosetta is serving on %s (OpenAI base URL %s/v1).\nConsole: %s/console/\n", base, public, public)
	if demoKey == "" {
		return
	}
	fmt.Fprintf(w, `No keys are configured, so here is a key for this run only:

    %[2]s

Try it:
    curl %[1]s/v1/models -H "Authorization: Bearer %[2]s"
    curl -N %[1]s/v1/chat/completions -H "Authorization: Bearer %[2]s" \
      -H "Content-Type: application/json" \
      -d '{"model":"demo","stream":true,"messages":[{"role":"user","content":"Hello"}]}'

`, base, demoKey)
}

func newLogger(w io.Writer, format string) *slog.Logger {
	if format == "text" {
		return slog.New(slog.NewTextHandler(w, nil))
	}
	return slog.New(slog.NewJSONHandler(w, nil))
}

// newKey makes a random gateway key.
func newKey() string {
	var b [24]byte
	rand.Read(b[:]) //nolint:errcheck // crypto/rand never fails on Linux
	return "sk-rosetta-" + base64.RawURLEncoding.EncodeToString(b[:])
}
