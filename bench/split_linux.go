package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// The primitives of split placement: CPU affinity, process groups and the
// /proc readings of other processes.

// clockTick is the unit of /proc/<pid>/stat and /proc/stat times: USER_HZ,
// 100 on every Linux architecture Go supports.
const clockTick = 10 * time.Millisecond

// allowedCPUs returns the CPUs this thread may run on, in order.
func allowedCPUs() ([]int, error) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	var cpus []int
	for i := range 8 * 128 { // unix.CPUSet holds 1024 CPUs
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	return cpus, nil
}

// prepareCmd puts a child process in a process group of its own (so that a
// terminal's ^C reaches this process only, which stops the child in order,
// and so that the group can be signalled: nginx's workers with their
// master), and has the kernel send it SIGTERM should this process die
// without cleaning up.
func prepareCmd(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
}

// startPinned starts cmd pinned to cpu. The affinity mask is inherited
// across fork and exec, from the forking thread: the goroutine locks its
// thread, narrows that thread's mask to cpu, starts the process (os/exec
// forks on the calling thread) and widens the mask again. Every thread and
// process the child starts inherits the mask, nginx's workers included,
// unlike sched_setaffinity on a pid after the start, which moves one
// thread. (This is what `taskset -c N cmd` does, without needing taskset.)
func startPinned(cmd *exec.Cmd, cpu int) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return fmt.Errorf("sched_getaffinity: %w", err)
	}
	set.Set(cpu)
	if err := unix.SchedSetaffinity(0, &set); err != nil {
		return fmt.Errorf("sched_setaffinity to CPU %d: %w", cpu, err)
	}
	err := cmd.Start()
	if rerr := unix.SchedSetaffinity(0, &old); rerr != nil {
		// The thread stays narrowed: pinSelf, which follows, repins it.
		if err == nil {
			err = fmt.Errorf("restoring the thread's CPU mask: %w", rerr)
		}
	}
	return err
}

// pinSelf pins every thread of this process to cpu (new threads inherit
// the mask of the thread that creates them, so the whole process stays
// there) and returns the function that restores the mask it had.
func pinSelf(cpu int) (restore func() error, err error) {
	var old, set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &old); err != nil {
		return nil, fmt.Errorf("sched_getaffinity: %w", err)
	}
	set.Set(cpu)
	if err := setAllThreads(&set); err != nil {
		setAllThreads(&old) //nolint:errcheck // best effort, the error is the first one
		return nil, err
	}
	return func() error { return setAllThreads(&old) }, nil
}

// setAllThreads sets the affinity of every thread of this process, again
// until a pass finds none left to change (a thread may be created during a
// pass by one not yet moved).
func setAllThreads(set *unix.CPUSet) error {
	for range 20 {
		tids, err := threads(os.Getpid())
		if err != nil {
			return err
		}
		changed := false
		for _, tid := range tids {
			var cur unix.CPUSet
			if unix.SchedGetaffinity(tid, &cur) != nil {
				continue // gone
			}
			if cur == *set {
				continue
			}
			changed = true
			if err := unix.SchedSetaffinity(tid, set); err != nil && err != unix.ESRCH {
				return fmt.Errorf("sched_setaffinity of thread %d: %w", tid, err)
			}
		}
		if !changed {
			return nil
		}
	}
	return fmt.Errorf("threads kept appearing while setting their CPU affinity")
}

// threads returns the thread ids of a process.
func threads(pid int) ([]int, error) {
	ents, err := os.ReadDir("/proc/" + strconv.Itoa(pid) + "/task")
	if err != nil {
		return nil, err
	}
	var tids []int
	for _, e := range ents {
		if tid, err := strconv.Atoi(e.Name()); err == nil {
			tids = append(tids, tid)
		}
	}
	return tids, nil
}

// threadCPUs returns the distinct Cpus_allowed_list values of a process's
// threads and how many threads it has: the proof of where it runs.
func threadCPUs(pid int) (lists []string, n int, err error) {
	tids, err := threads(pid)
	if err != nil {
		return nil, 0, err
	}
	for _, tid := range tids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/task/%d/status", pid, tid))
		if err != nil {
			continue // gone
		}
		for _, line := range bytes.Split(b, []byte("\n")) {
			if v, ok := bytes.CutPrefix(line, []byte("Cpus_allowed_list:")); ok {
				n++
				if s := strings.TrimSpace(string(v)); !slices.Contains(lists, s) {
					lists = append(lists, s)
				}
			}
		}
	}
	if n == 0 {
		return nil, 0, fmt.Errorf("process %d has no readable threads", pid)
	}
	return lists, n, nil
}

// childPids returns the pids of the processes whose parent is pid.
func childPids(pid int) []int {
	paths, _ := filepath.Glob("/proc/[0-9]*/stat")
	var kids []int
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			continue
		}
		f := statFields(b)
		if len(f) > 1 && string(f[1]) == strconv.Itoa(pid) { // f[0] is the state, f[1] the parent
			if k, err := strconv.Atoi(filepath.Base(filepath.Dir(p))); err == nil {
				kids = append(kids, k)
			}
		}
	}
	slices.Sort(kids)
	return kids
}

// statFields returns the fields of a /proc/<pid>/stat line after the
// command name (which may hold spaces and parentheses): field 3 of proc(5),
// the state, first.
func statFields(b []byte) [][]byte {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return nil
	}
	return bytes.Fields(b[i+1:])
}

// procTimesOf returns the CPU time (user and system, from /proc/<pid>/stat,
// threads that ended included) and the run-queue wait (summed over the
// threads' schedstat) of processes. A process that is gone counts 0.
func procTimesOf(pids []int) procTimes {
	var t procTimes
	for _, pid := range pids {
		if b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat"); err == nil {
			if f := statFields(b); len(f) > 12 { // utime and stime are fields 14 and 15
				ut, _ := strconv.ParseInt(string(f[11]), 10, 64)
				st, _ := strconv.ParseInt(string(f[12]), 10, 64)
				t.cpu += time.Duration(ut+st) * clockTick
			}
		}
		paths, _ := filepath.Glob("/proc/" + strconv.Itoa(pid) + "/task/*/schedstat")
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			if f := bytes.Fields(b); len(f) >= 2 {
				ns, _ := strconv.ParseInt(string(f[1]), 10, 64)
				t.wait += time.Duration(ns)
			}
		}
	}
	return t
}

// coreTimesOf returns a CPU's times from /proc/stat.
func coreTimesOf(cpu int) coreTimes {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return coreTimes{}
	}
	prefix := []byte("cpu" + strconv.Itoa(cpu) + " ")
	for _, line := range bytes.Split(b, []byte("\n")) {
		if !bytes.HasPrefix(line, prefix) {
			continue
		}
		// user nice system idle iowait irq softirq steal (guest time is in user)
		var v [8]time.Duration
		for i, f := range bytes.Fields(line[len(prefix):]) {
			if i == len(v) {
				break
			}
			n, _ := strconv.ParseInt(string(f), 10, 64)
			v[i] = time.Duration(n) * clockTick
		}
		var c coreTimes
		for _, x := range v {
			c.total += x
		}
		c.idle, c.irq, c.steal = v[3]+v[4], v[5]+v[6], v[7]
		return c
	}
	return coreTimes{}
}

// signalGroup sends sig to the process group led by pid.
func signalGroup(pid int, sig syscall.Signal) error { return syscall.Kill(-pid, sig) }
