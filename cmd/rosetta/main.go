// Command rosetta is the Rosetta model gateway.
//
//	rosetta serve [-config rosetta.yaml]   run the gateway
//	rosetta version                        print the version
package main

import (
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
	"syscall"
	"time"

	"github.com/rosetta-gateway/rosetta/config"
	"github.com/rosetta-gateway/rosetta/console"
	"github.com/rosetta-gateway/rosetta/internal/asynclog"
	"github.com/rosetta-gateway/rosetta/proxy"
	"github.com/rosetta-gateway/rosetta/store"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

func main() {
	if len(os.Args) < 2 {
		usage(os.Stderr)
		os.Exit(2)
	}
	switch os.Args[1] {
	case "serve":
		if err := serve(os.Args[2:]); err != nil {
			fmt.Fprintln(os.Stderr, "rosetta:", err)
			os.Exit(1)
		}
	case "version", "-version", "--version":
		fmt.Println("rosetta", version)
	case "help", "-h", "-help", "--help":
		usage(os.Stdout)
	default:
		fmt.Fprintf(os.Stderr, "rosetta: unknown command %q\n", os.Args[1])
		usage(os.Stderr)
		os.Exit(2)
	}
}

func usage(w io.Writer) {
	fmt.Fprint(w, `usage: rosetta <command> [flags]

commands:
  serve     run the gateway (-config FILE; without it, the built-in demo setup)
  version   print the version
`)
}

func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	path := fs.String("config", "", "configuration file (YAML); empty: built-in demo setup")
	logFormat := fs.String("log-format", "json", "log format: json or text")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, demoKey, err := loadConfig(*path)
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
	pruned := make(chan struct{})
	go func() {
		defer close(pruned)
		store.PruneUsage(pruning, st, cfg.Store.UsageRetention, time.Hour, func(n int64, err error) {
			if err != nil {
				log.Error("usage retention", "err", err)
			} else {
				log.Info("usage retention: old rows deleted", "rows", n, "older_than", cfg.Store.UsageRetention)
			}
		})
	}()
	// Before the store closes (deferred above).
	defer func() { stopPruning(); <-pruned }()

	ln, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		return fmt.Errorf("cannot listen: %w", err)
	}
	base := "http://" + ln.Addr().String()
	public := publicURL(cfg, base)
	gw := &consoleGateway{}
	con, err := console.New(console.Config{Store: st, Gateway: gw, PublicURL: public, Log: log,
		TrustedProxies: cfg.Server.TrustedPrefixes()})
	if err != nil {
		return err
	}
	g, err := proxy.New(cfg, proxy.Options{Log: log, AccessLog: sink, LogFormat: *logFormat, LogDropped: sink.Dropped, Store: st, Usage: usage, Mount: con.Register})
	if err != nil {
		return err
	}
	gw.g = g
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

// loadConfig reads the configuration file, or makes the built-in demo
// setup without one. With no keys configured, it adds a key for this run
// and returns its secret to print.
func loadConfig(path string) (cfg *config.Config, demoKey string, err error) {
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
