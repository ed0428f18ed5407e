package main

// The baseline binary (-baseline REV, split placement): a second shipped
// binary, built from git revision REV, runs beside the one built from the
// tree as the contender "rosetta@<short rev>", in the same rounds, so that
// before and after are measured in one run rather than in two runs minutes
// apart on a shared machine.
//
// At start, before anything is pinned, the harness resolves REV to a
// commit (git rev-parse), checks it out with `git worktree add --detach`
// into a new temporary directory (DIR/src), builds it there
// (`go build -o DIR/rosetta ./cmd/rosetta`, in the module's directory of
// the worktree) and removes the worktree at once (`git worktree remove
// --force`); on an error or a signal during the build, the build is killed
// and the worktree removed too. The binary then runs as the tree's does
// (shipped.go), in DIR: the same kind of configuration, written there, its
// own SQLite store and log, pinned to the servers' CPU, stopped with
// SIGTERM; DIR goes at the end. A run killed with SIGKILL leaves DIR and
// the worktree's entry in .git behind: the next -baseline run removes DIR
// (removeStaleDirs) and prunes the entry (git worktree prune).

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"
)

const baselineDirPrefix = "rosetta-bench-baseline-"

// baseline is the baseline binary: the revision it was built from, and
// its files and process.
type baseline struct {
	rev      string // as -baseline named it
	commit   string // the full hash
	short    string // the abbreviated hash, in the contender's label
	subject  string // the commit's subject line
	describe string // git describe --always of the commit, to compare with the tree's
	src      string // where its worktree was
	sh       *shipped
}

// label is the baseline's name in the tables.
func (b *baseline) label() string { return "rosetta@" + b.short }

// git runs git in dir and returns its trimmed standard output; the error
// carries its standard error.
func git(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", append([]string{"-C", dir}, args...)...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

// buildBaseline builds the binary of revision rev, before anything is
// pinned, and arranges for its worktree and directory to go (the worktree
// at once after the build, or at close should a signal come first).
func (s *splitEnv) buildBaseline(rev string, progress io.Writer) (*baseline, error) {
	if _, err := exec.LookPath("git"); err != nil {
		return nil, errors.New("-baseline: no git on PATH: it builds the revision from a git worktree")
	}
	root, err := moduleRoot()
	if err != nil {
		return nil, err
	}
	// The module's directory within the repository ("" at its top), the
	// same within the worktree.
	prefix, err := git(root, "rev-parse", "--show-prefix")
	if err != nil {
		return nil, fmt.Errorf("-baseline: %s is not in a git checkout: %w", root, err)
	}
	b := &baseline{rev: rev}
	if b.commit, err = git(root, "rev-parse", "--verify", "--quiet", rev+"^{commit}"); err != nil {
		return nil, fmt.Errorf("-baseline: %q names no commit of this repository (a shallow clone lacks older ones)", rev)
	}
	if b.short, err = git(root, "rev-parse", "--short", b.commit); err != nil {
		return nil, err
	}
	b.subject, _ = git(root, "log", "-1", "--format=%s", b.commit)
	b.describe, _ = git(root, "describe", "--always", b.commit)

	if removeStaleDirs(baselineDirPrefix, "rosetta.pid") > 0 {
		git(root, "worktree", "prune") //nolint:errcheck // the entries of the worktrees just removed; best effort
	}
	dir, err := os.MkdirTemp("", baselineDirPrefix)
	if err != nil {
		return nil, err
	}
	b.sh = newShipped(dir, "baseline binary, "+b.label())
	s.add(b.sh.remove) // added first: runs after the worktree's removal and the process's stop
	b.src = filepath.Join(dir, "src")

	fmt.Fprintf(progress, "bench: -baseline %s = %s: git worktree add --detach <tmp>/src %s; go build -o <tmp>/rosetta ./cmd/rosetta there\n",
		rev, b.short, b.short)
	t0 := time.Now()
	if _, err := git(root, "worktree", "add", "--detach", b.src, b.commit); err != nil {
		return nil, fmt.Errorf("-baseline: %w", err)
	}
	var once sync.Once
	removeWorktree := func() {
		once.Do(func() {
			if _, err := git(root, "worktree", "remove", "--force", b.src); err != nil {
				fmt.Fprintf(os.Stderr, "bench: removing the baseline's worktree: %v; removing %s and pruning instead\n", err, b.src)
				os.RemoveAll(b.src)            //nolint:errcheck
				git(root, "worktree", "prune") //nolint:errcheck
			}
		})
	}
	s.add(removeWorktree)
	// A signal during the build kills it (its process group: go build's
	// compilers too), then the worktree goes.
	ctx, cancel := context.WithCancel(context.Background())
	s.add(cancel)
	cmd := exec.CommandContext(ctx, goTool(), "build", "-o", b.sh.bin, "./cmd/rosetta")
	cmd.Dir = filepath.Join(b.src, filepath.FromSlash(prefix))
	prepareCmd(cmd)
	cmd.Cancel = func() error { return signalGroup(cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	out, err := cmd.CombinedOutput()
	removeWorktree()
	cancel()
	if err != nil {
		return nil, fmt.Errorf("-baseline %s: go build -o %s ./cmd/rosetta (in a worktree of %s): %w\n%s", rev, b.sh.bin, b.short, err, tail(out, 3000))
	}
	b.sh.build = time.Since(t0)
	b.sh.tree = b.describe
	fmt.Fprintf(progress, "bench: built %s (%s) in %.1fs, worktree removed\n", b.sh.bin, b.label(), b.sh.build.Seconds())
	return b, nil
}

// sameAsTree says whether the tree the shipped binary was built from is
// the baseline's commit, unchanged: the two binaries are then the same
// code, and their ratios measure the noise of the run.
func (b *baseline) sameAsTree(tree string) bool { return b.describe != "" && tree == b.describe }
