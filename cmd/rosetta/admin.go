package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/rosetta-gateway/rosetta/console"
	"github.com/rosetta-gateway/rosetta/store"
)

const adminUsage = `usage: rosetta admin <command> [flags]

commands:
  reset-password [-config FILE] [USER]   set a console user's password

rosetta admin <command> -h prints the command's flags.
`

// admin runs the operators' commands, which work on the store directly,
// without the console: for when no one can log in to it.
func admin(args []string) error {
	if len(args) == 0 {
		return usageError{"admin: no command given", adminUsage}
	}
	switch args[0] {
	case "reset-password":
		return resetPassword(args[1:])
	case "help", "-h", "-help", "--help":
		fmt.Print(adminUsage)
		return nil
	default:
		return usageError{fmt.Sprintf("admin: unknown command %q", args[0]), adminUsage}
	}
}

const resetPasswordUsage = `usage: rosetta admin reset-password [-config FILE] [USER]

Sets a new password for the console user USER (default admin) in the store of
the config (without -config, rosetta.db in the working directory, as for
"rosetta serve" without it) and ends the user's console sessions. The password
is ROSETTA_ADMIN_PASSWORD when set, else a generated one, printed once on
stdout. The gateway may be running.
`

func resetPassword(args []string) error {
	flags := newFlags("admin reset-password", resetPasswordUsage)
	path := flags.String("config", "", "configuration file (YAML) naming the store; empty: rosetta.db here")
	// The user may come before the flags or after them.
	var names []string
	for {
		if err := parseFlags(flags, args); err != nil {
			return err
		}
		if flags.NArg() == 0 {
			break
		}
		names, args = append(names, flags.Arg(0)), flags.Args()[1:]
	}
	name := console.AdminName
	switch len(names) {
	case 0:
	case 1:
		name = names[0]
	default:
		return usageError{fmt.Sprintf("admin reset-password: one user, got %q", names), resetPasswordUsage}
	}

	cfg, _, err := loadConfig(*path, "")
	if err != nil {
		return err
	}
	// Opening a SQLite store creates it: a reset run in the wrong directory
	// would make an empty store (and its key file) there instead of failing.
	if cfg.Store.Driver == "sqlite" {
		if _, err := os.Stat(cfg.Store.DSN); errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("no store at %s: run this where the gateway runs, or pass its -config", cfg.Store.DSN)
		}
	}
	st, err := openStore(cfg)
	if err != nil {
		return err
	}
	defer st.Close()
	ctx, cancel := context.WithTimeout(context.Background(), storeOpenTimeout)
	defer cancel()
	u, err := st.UserByName(ctx, name)
	if errors.Is(err, store.ErrNotFound) {
		return fmt.Errorf("no console user %q in the store %s", name, cfg.Store.DSN)
	} else if err != nil {
		return fmt.Errorf("cannot look up the user: %w", err)
	}
	hash, generated, err := newPasswordHash(ctx, os.Getenv("ROSETTA_ADMIN_PASSWORD"))
	if err != nil {
		return err
	}
	if err := st.SetPassword(ctx, u.ID, hash); err != nil {
		return fmt.Errorf("cannot set the password: %w", err)
	}
	// The user's logins end, as when the password is changed in the console.
	if err := st.DeleteUserSessions(ctx, u.ID); err != nil {
		return fmt.Errorf("the password is set, but the user's sessions could not be ended: %w", err)
	}
	if u.Disabled {
		fmt.Fprintf(os.Stderr, "rosetta: note: the user %q is disabled; an admin can enable it in the console\n", name)
	}
	if generated == "" {
		fmt.Fprintf(os.Stderr, "rosetta: the password of %q is now ROSETTA_ADMIN_PASSWORD; its console sessions have ended\n", name)
		return nil
	}
	fmt.Fprintf(os.Stderr, "rosetta: the new password of %q, shown this once (its console sessions have ended):\n", name)
	fmt.Println(generated)
	return nil
}

// newPasswordHash makes a console password's hash as the first start
// makes the admin's: console.Bootstrap checks password (or, when it is
// empty, generates one and returns it) and hashes it. Bootstrap writes the
// admin it makes into a store with no users; here that store is
// hashCatcher, which keeps the hash instead.
func newPasswordHash(ctx context.Context, password string) (hash, generated string, err error) {
	var c hashCatcher
	if generated, err = console.Bootstrap(ctx, &c, password); err != nil {
		return "", "", err
	}
	if c.hash == "" {
		return "", "", errors.New("internal error: console.Bootstrap made no user")
	}
	return c.hash, generated, nil
}

// hashCatcher is an empty store.Store that keeps the password hash of the
// user created in it. Bootstrap calls only Users and CreateUser; any other
// method would panic on the nil Store.
type hashCatcher struct {
	store.Store
	hash string
}

func (*hashCatcher) Users(context.Context) ([]store.User, error) { return nil, nil }

func (c *hashCatcher) CreateUser(_ context.Context, u *store.User) error {
	c.hash = u.PasswordHash
	return nil
}
