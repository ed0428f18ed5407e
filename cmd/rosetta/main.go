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
	"github.com/rosetta-gateway/rosetta/internal/asynclog"
	"github.com/rosetta-gateway/rosetta/proxy"
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
	var cfg *config.Config
	if *path == "" {
		cfg = config.Default(os.Getenv)
	} else {
		var err error
		if cfg, err = config.Load(*path); err != nil {
			return err
		}
	}
	demoKey := ""
	if len(cfg.Keys) == 0 {
		demoKey = newKey()
		cfg.Keys = append(cfg.Keys, config.Key{Name: "demo", Key: demoKey, Models: []string{"*"}})
	}

	sink := asynclog.New(os.Stderr, 100*time.Millisecond, 4<<20)
	defer sink.Close()
	log := newLogger(sink, *logFormat)
	slog.SetDefault(log)

	g, err := proxy.New(cfg, proxy.Options{Log: log, LogDropped: sink.Dropped})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Server.Listen)
	if err != nil {
		return fmt.Errorf("cannot listen: %w", err)
	}
	base := "http://" + ln.Addr().String()
	log.Info("rosetta is serving", "version", version, "listen", ln.Addr().String(),
		"config", cfg.Source, "channels", len(cfg.Channels))
	if demoKey != "" {
		fmt.Fprintf(os.Stdout, `
Rosetta is serving on %[1]s (OpenAI base URL %[1]s/v1).
No keys are configured, so here is a key for this run only:

    %[2]s

Try it:
    curl %[1]s/v1/models -H "Authorization: Bearer %[2]s"
    curl -N %[1]s/v1/chat/completions -H "Authorization: Bearer %[2]s" \
      -H "Content-Type: application/json" \
      -d '{"model":"demo","stream":true,"messages":[{"role":"user","content":"Hello"}]}'

`, base, demoKey)
	}

	served := make(chan error, 1)
	go func() { served <- g.Serve(ln) }()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGTERM, syscall.SIGINT)
	select {
	case err := <-served:
		return err
	case sig := <-stop:
		log.Info("shutting down: no new connections, waiting for requests in flight",
			"signal", sig.String(), "deadline", cfg.Server.ShutdownTimeout)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Server.ShutdownTimeout)
	defer cancel()
	if err := g.Shutdown(ctx); err != nil && !errors.Is(err, context.DeadlineExceeded) {
		return err
	} else if err != nil {
		log.Warn("shutdown deadline passed; closing the streams still open")
	}
	log.Info("stopped")
	return nil
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
