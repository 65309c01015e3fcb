// Command ferretdb-dev runs FerretDB v1 (MongoDB wire protocol) with its SQLite
// backend for tests and the local stack, and can ping a MongoDB-compatible server.
//
// It exists because `go install github.com/FerretDB/FerretDB/cmd/ferretdb` panics
// without the generated build/version/version.txt; embedding the public
// `ferretdb` package avoids that (the version check only runs when FerretDB's own
// module is the main module).
//
// Usage:
//
//	ferretdb-dev serve [-listen-addr 127.0.0.1:27017] -sqlite-dir DIR [-log-level info]
//	ferretdb-dev ping  [-url mongodb://127.0.0.1:27017/] [-timeout 2s]
//
// Flags default to the env vars FERRETDB_LISTEN_ADDR, FERRETDB_SQLITE_DIR,
// FERRETDB_LOG_LEVEL and MONGO_URL.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"
	"github.com/FerretDB/wire/wireclient"
)

func main() {
	cmd, args := "serve", os.Args[1:]
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}

	var err error
	switch cmd {
	case "serve":
		err = serve(args)
	case "ping":
		err = ping(args)
	default:
		err = fmt.Errorf("unknown command %q (want serve or ping)", cmd)
	}

	if err != nil {
		fmt.Fprintln(os.Stderr, "ferretdb-dev:", err)
		os.Exit(1)
	}
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// serve runs FerretDB until SIGTERM/SIGINT.
func serve(args []string) error {
	fs := flag.NewFlagSet("serve", flag.ExitOnError)
	listenAddr := fs.String("listen-addr", envOr("FERRETDB_LISTEN_ADDR", "127.0.0.1:27017"), "TCP address to listen on")
	sqliteDir := fs.String("sqlite-dir", envOr("FERRETDB_SQLITE_DIR", ""), "directory for the SQLite databases (one file per database)")
	logLevel := fs.String("log-level", envOr("FERRETDB_LOG_LEVEL", "info"), "debug, info, warn or error")
	_ = fs.Parse(args)

	if *sqliteDir == "" {
		return errors.New("serve: -sqlite-dir (or FERRETDB_SQLITE_DIR) is required")
	}

	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("serve: bad -log-level: %w", err)
	}
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: level}))
	slog.SetDefault(logger)

	// The SQLite backend wants an existing directory as a "file:" URI ending with "/".
	dir, err := filepath.Abs(*sqliteDir)
	if err != nil {
		return err
	}
	if err = os.MkdirAll(dir, 0o755); err != nil {
		return err
	}

	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: *listenAddr},
		Logger:    logger,
		Handler:   "sqlite",
		SQLiteURL: "file:" + dir + "/",
	})
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	// infra.sh's readiness check pings the port; this line is for humans reading the log.
	logger.Info("ferretdb-dev starting", "listen", *listenAddr, "sqlite", dir, "pid", os.Getpid())

	err = f.Run(ctx) // returns after ctx is cancelled and connections/backends are closed
	logger.Info("ferretdb-dev stopped")
	return err
}

// ping sends a MongoDB `ping` command over the wire protocol and checks {ok: 1}.
func ping(args []string) error {
	fs := flag.NewFlagSet("ping", flag.ExitOnError)
	url := fs.String("url", envOr("MONGO_URL", "mongodb://127.0.0.1:27017/"), "mongodb://host:port/ URL")
	timeout := fs.Duration("timeout", 2*time.Second, "overall timeout")
	_ = fs.Parse(args)

	// wireclient only accepts the path "/", so normalise mongodb://host:port[/db].
	u := *url
	if rest, ok := strings.CutPrefix(u, "mongodb://"); ok {
		host, _, _ := strings.Cut(rest, "/")
		host, _, _ = strings.Cut(host, "?")
		u = "mongodb://" + host + "/"
	}

	ctx, cancel := context.WithTimeout(context.Background(), *timeout)
	defer cancel()

	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	conn, err := wireclient.Connect(ctx, u, quiet)
	if err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	defer conn.Close()

	if err = conn.Ping(ctx); err != nil {
		return fmt.Errorf("ping: %w", err)
	}
	fmt.Println("ok")
	return nil
}
