package proxy

import (
	"math/rand/v2"
	"testing"
	"time"
)

// deadlinesConn is a deadlineConn (the read deadlines set on it) that
// notes the write deadline SetDeadline sets too.
type deadlinesConn struct {
	deadlineConn
	write time.Time
}

func (c *deadlinesConn) SetDeadline(t time.Time) error {
	c.write = t
	return c.SetReadDeadline(t)
}

// TestLazyReadDeadlineBusyConnection: fasthttp's two far deadlines a
// request, on a connection busy with requests, arm the connection once;
// the deadline armed is never sooner than asked, nor later than 1/64 of
// its distance after it.
func TestLazyReadDeadlineBusyConnection(t *testing.T) {
	var d lazyReadDeadline
	c := &deadlinesConn{}
	for range 1000 {
		for range 2 { // the idle deadline, then the read one
			now := time.Now()
			want := now.Add(2 * time.Minute)
			if err := d.set(c, want); err != nil {
				t.Fatal(err)
			}
			checkArmed(t, c.deadline, want, now)
		}
	}
	if c.set != 1 {
		t.Errorf("%d deadlines set on the connection, want 1", c.set)
	}
}

// checkArmed fails unless armed, the deadline on the connection, is want
// or at most 1/64 of its distance from now after it.
func checkArmed(t *testing.T, armed, want, now time.Time) {
	t.Helper()
	if late := armed.Sub(want); late < 0 || late > want.Sub(now)/deadlineSlack {
		t.Fatalf("armed %v for the deadline %v (%v ahead): %v late", armed, want, want.Sub(now), late)
	}
}

// TestLazyReadDeadlineExact: no deadline, a deadline under a minute away
// and one set with the write deadline are set as asked, at once, and the
// next far deadline is armed again after them.
func TestLazyReadDeadlineExact(t *testing.T) {
	var d lazyReadDeadline
	c := &deadlinesConn{}
	far := func() time.Time {
		now := time.Now()
		want := now.Add(2 * time.Minute)
		if err := d.set(c, want); err != nil {
			t.Fatal(err)
		}
		checkArmed(t, c.deadline, want, now)
		return want
	}
	near := []time.Time{{}, time.Now().Add(59 * time.Second), time.Now(), time.Unix(1, 0)}
	for _, want := range near {
		far()
		sets := c.set
		if err := d.set(c, want); err != nil {
			t.Fatal(err)
		}
		if !c.deadline.Equal(want) || c.set != sets+1 {
			t.Errorf("deadline %v: armed %v after %d sets", want, c.deadline, c.set-sets)
		}
		far()
		if c.set != sets+2 {
			t.Errorf("after the deadline %v, a far one was not armed again", want)
		}
	}
	far()
	want := time.Now().Add(2 * time.Minute)
	if err := d.setBoth(c, want); err != nil {
		t.Fatal(err)
	}
	if !c.deadline.Equal(want) || !c.write.Equal(want) {
		t.Errorf("SetDeadline(%v): read %v, write %v", want, c.deadline, c.write)
	}
	sets := c.set
	far()
	if c.set != sets+1 {
		t.Error("after SetDeadline, a far deadline was not armed again")
	}
}

// TestLazyReadDeadlineAnyOrder: deadlines of every kind in any order
// leave the connection with the one asked for, a far one at most 1/64 of
// its distance late.
func TestLazyReadDeadlineAnyOrder(t *testing.T) {
	var d lazyReadDeadline
	c := &deadlinesConn{}
	r := rand.New(rand.NewPCG(1, 2))
	aheads := []time.Duration{0, -time.Second, time.Second, 59 * time.Second, time.Minute, 2 * time.Minute,
		2*time.Minute + time.Second, 2*time.Minute - time.Second, time.Hour}
	for range 5000 {
		now := time.Now()
		ahead := aheads[r.IntN(len(aheads))] + time.Duration(r.IntN(3000))*time.Millisecond
		want := now.Add(ahead)
		if r.IntN(10) == 0 {
			want = time.Time{}
		}
		if err := d.set(c, want); err != nil {
			t.Fatal(err)
		}
		if want.IsZero() || ahead < farDeadline {
			if !c.deadline.Equal(want) {
				t.Fatalf("deadline %v (%v ahead) armed as %v", want, ahead, c.deadline)
			}
			continue
		}
		checkArmed(t, c.deadline, want, now)
	}
}
