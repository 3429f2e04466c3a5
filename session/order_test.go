package session_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers"
	"github.com/vtcode/vtcode-ls/session"
)

// TestCallsRunInArrivalOrder queues appends behind a blocked compaction, one
// at a time, and checks they are applied in the order they entered; stats
// of the compacting session and of another session do not wait.
func TestCallsRunInArrivalOrder(t *testing.T) {
	slow := newBlocker()
	e := newEnv(t, session.Options{Clients: clients(map[string]providers.Generator{"slow": slow})}, "")
	a := e.open(session.OpenParams{Provider: "slow", Model: "m", ContextWindow: 16000})
	b := e.open(session.OpenParams{ContextWindow: 16000})
	e.append(a, turns(20, 4000)...)
	e.append(b, turns(2, 100)...)
	statsB := e.stats(b)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	compacted := make(chan error, 1)
	go func() {
		_, err := e.m.Compact(ctx, session.CompactParams{SessionID: a}, nil)
		compacted <- err
	}()
	<-slow.started

	// Stats never wait for a compaction: "compacting" for A, fresh for B.
	st := e.stats(a)
	if st.State != "compacting" || st.Messages != 20*6 {
		t.Errorf("stats of the compacting session = %+v", st)
	}
	if got := e.stats(b); jsonOf(t, got) != jsonOf(t, statsB) {
		t.Errorf("stats of B = %+v, want %+v", got, statsB)
	}

	entered := make(chan struct{}, 1)
	session.OnEnqueue(e.m, a, func() { entered <- struct{}{} })
	const n = 8
	done := make(chan error, n)
	for i := range n {
		go func() {
			_, err := e.m.AppendMessages(context.Background(), session.AppendParams{SessionID: a,
				Messages: []history.Message{history.NewText(history.User, fmt.Sprintf("message %d", i))}})
			done <- err
		}()
		<-entered // the next call starts only once this one is queued
	}
	cancel()
	if err := <-compacted; !errors.Is(err, context.Canceled) {
		t.Fatalf("compaction = %v", err)
	}
	for range n {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	h := e.history(a)
	for i := range n {
		if got, want := h[len(h)-n+i].Content.Text(), fmt.Sprintf("message %d", i); got != want {
			t.Fatalf("message %d is %q", i, got)
		}
	}
}

// TestQueuedCallCancelled leaves the queue usable when a waiting call is
// cancelled.
func TestQueuedCallCancelled(t *testing.T) {
	slow := newBlocker()
	e := newEnv(t, session.Options{Clients: clients(map[string]providers.Generator{"slow": slow})}, "")
	a := e.open(session.OpenParams{Provider: "slow", Model: "m", ContextWindow: 16000})
	e.append(a, turns(20, 4000)...)
	ctx, cancel := context.WithCancel(context.Background())
	compacted := make(chan error, 1)
	go func() {
		_, err := e.m.Compact(ctx, session.CompactParams{SessionID: a}, nil)
		compacted <- err
	}()
	<-slow.started

	entered := make(chan struct{}, 1)
	session.OnEnqueue(e.m, a, func() { entered <- struct{}{} })
	wctx, wcancel := context.WithCancel(context.Background())
	waited := make(chan error, 1)
	go func() {
		_, err := e.m.History(wctx, session.HistoryParams{SessionID: a})
		waited <- err
	}()
	<-entered
	wcancel()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Fatalf("queued call = %v", err)
	}
	cancel()
	<-compacted
	if n := len(e.history(a)); n != 20*6 {
		t.Fatalf("history has %d messages", n)
	}
}

// TestReservedTicketsRunInReservedOrder: a transport reserves places as it
// reads requests; the calls run in the order of their tickets, whatever
// order they are made in, and the next one waits until the ticket before it
// is released.
func TestReservedTicketsRunInReservedOrder(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	a := e.open(session.OpenParams{ContextWindow: 16000})
	first, second := e.m.Reserve(a), e.m.Reserve(a)
	done := make(chan error, 1)
	go func() {
		_, err := e.m.AppendMessages(context.Background(), session.AppendParams{SessionID: a,
			Messages: []history.Message{history.NewText(history.User, "second")}, Place: session.Place{Ticket: second}})
		second.Release()
		done <- err
	}()
	if _, err := e.m.AppendMessages(context.Background(), session.AppendParams{SessionID: a,
		Messages: []history.Message{history.NewText(history.User, "first")}, Place: session.Place{Ticket: first}}); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		t.Fatalf("the second call ran before the first ticket was released: %v", err)
	default:
	}
	first.Release()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	h := e.history(a)
	if len(h) != 2 || h[0].Content.Text() != "first" || h[1].Content.Text() != "second" {
		t.Fatalf("history %v", h)
	}
}

// TestTicketArgumentRunsInItsPlace: a call that takes only a session id
// takes its ticket as an argument and runs in the ticket's place, ahead of
// a call made after the ticket was reserved; without the ticket it would
// wait behind it, and the ticket is released only after it returns.
func TestTicketArgumentRunsInItsPlace(t *testing.T) {
	e := newEnv(t, session.Options{}, "")
	a := e.open(session.OpenParams{ContextWindow: 16000})
	first := e.m.Reserve(a)
	defer first.Release() // releasing twice is allowed
	later := make(chan error, 1)
	go func() {
		_, err := e.m.AppendMessages(context.Background(), session.AppendParams{SessionID: a,
			Messages: []history.Message{history.NewText(history.User, "later")}})
		later <- err
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second) // a failure, not a hang
	defer cancel()
	if err := e.m.CloseSession(ctx, a, first); err != nil {
		t.Fatalf("close in the ticket's place: %v", err)
	}
	first.Release()
	if err := <-later; !errors.Is(err, session.ErrUnknownSession) {
		t.Fatalf("the later call ran before the close: err = %v", err)
	}
}
