package rpctest

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/vtcode/vtcode-ls/rpc"
	"github.com/vtcode/vtcode-ls/session"
)

// State is what the fake editor has seen from the server so far.
type State struct {
	// Notifications are all notifications, in arrival order.
	Notifications []Notification
	// Work is the work-done progress seen, by token text, in begin order in
	// WorkOrder.
	Work      map[string]*Work
	WorkOrder []string
	// Created are the tokens the server created with
	// window/workDoneProgress/create.
	Created []string
	// Pressure is the last vtcode/tokenPressure per session, and
	// PressureCount how many arrived.
	Pressure      map[string]session.PressureEvent
	PressureCount map[string]int
	// Boundaries are the vtcode/compactBoundary notifications.
	Boundaries []session.BoundaryEvent
	// ShowMessages and LogMessages are the window messages.
	ShowMessages []rpc.ShowMessageParams
	LogMessages  []rpc.LogMessageParams
}

// A Notification is one notification as received.
type Notification struct {
	Method string
	Params json.RawMessage
}

// Work is one work-done progress.
type Work struct {
	Token   string
	Title   string
	Reports []string // report messages
	Percent []int    // report percentages, in order
	Ended   bool
	End     string // the end message
}

func newState() *State {
	return &State{
		Work:          map[string]*Work{},
		Pressure:      map[string]session.PressureEvent{},
		PressureCount: map[string]int{},
	}
}

// clone returns a deep copy of s.
func (s *State) clone() State {
	c := State{
		Notifications: slices.Clone(s.Notifications),
		Work:          make(map[string]*Work, len(s.Work)),
		WorkOrder:     slices.Clone(s.WorkOrder),
		Created:       slices.Clone(s.Created),
		Pressure:      maps.Clone(s.Pressure),
		PressureCount: maps.Clone(s.PressureCount),
		Boundaries:    slices.Clone(s.Boundaries),
		ShowMessages:  slices.Clone(s.ShowMessages),
		LogMessages:   slices.Clone(s.LogMessages),
	}
	for k, w := range s.Work {
		w2 := *w
		w2.Reports, w2.Percent = slices.Clone(w.Reports), slices.Clone(w.Percent)
		c.Work[k] = &w2
	}
	return c
}

// record adds one notification to the state.
func (s *State) record(method string, params json.RawMessage) {
	s.Notifications = append(s.Notifications, Notification{Method: method, Params: params})
	switch method {
	case "$/progress":
		var p struct {
			Token json.RawMessage `json:"token"`
			Value struct {
				Kind       string `json:"kind"`
				Title      string `json:"title"`
				Message    string `json:"message"`
				Percentage *int   `json:"percentage"`
			} `json:"value"`
		}
		if json.Unmarshal(params, &p) != nil {
			return
		}
		key := string(p.Token)
		w := s.Work[key]
		switch p.Value.Kind {
		case "begin":
			w = &Work{Token: key, Title: p.Value.Title}
			s.Work[key] = w
			s.WorkOrder = append(s.WorkOrder, key)
		case "report":
			if w != nil {
				w.Reports = append(w.Reports, p.Value.Message)
				if p.Value.Percentage != nil {
					w.Percent = append(w.Percent, *p.Value.Percentage)
				}
			}
		case "end":
			if w != nil {
				w.Ended, w.End = true, p.Value.Message
			}
		}
	case "vtcode/tokenPressure":
		var ev session.PressureEvent
		if json.Unmarshal(params, &ev) == nil {
			s.Pressure[ev.SessionID] = ev
			s.PressureCount[ev.SessionID]++
		}
	case "vtcode/compactBoundary":
		var ev session.BoundaryEvent
		if json.Unmarshal(params, &ev) == nil {
			s.Boundaries = append(s.Boundaries, ev)
		}
	case "window/showMessage":
		var m rpc.ShowMessageParams
		if json.Unmarshal(params, &m) == nil {
			s.ShowMessages = append(s.ShowMessages, m)
		}
	case "window/logMessage":
		var m rpc.LogMessageParams
		if json.Unmarshal(params, &m) == nil {
			s.LogMessages = append(s.LogMessages, m)
		}
	}
}

// String summarizes the state for failure messages.
func (s *State) String() string {
	var b strings.Builder
	for _, key := range s.WorkOrder {
		w := s.Work[key]
		fmt.Fprintf(&b, "progress %s %q reports=%q ended=%v end=%q\n", key, w.Title, w.Reports, w.Ended, w.End)
	}
	for id, ev := range s.Pressure {
		fmt.Fprintf(&b, "pressure %s: %s %.3f (%d notifications)\n", id, ev.State, ev.Pressure, s.PressureCount[id])
	}
	for _, ev := range s.Boundaries {
		fmt.Fprintf(&b, "boundary %s: %s %s %d -> %d messages\n", ev.SessionID, ev.Trigger, ev.Mode, ev.OriginalMessageCount, ev.CompactedMessageCount)
	}
	for _, m := range s.ShowMessages {
		fmt.Fprintf(&b, "showMessage %d: %s\n", m.Type, m.Message)
	}
	for _, m := range s.LogMessages {
		fmt.Fprintf(&b, "logMessage %d: %s\n", m.Type, m.Message)
	}
	return b.String()
}

// A Verdict is the outcome of checking an Expectation against a State.
type Verdict int

// The verdicts.
const (
	// Met: the expectation holds.
	Met Verdict = iota
	// Unmet: it does not hold yet, but may later.
	Unmet
	// Unmeetable: it can never hold any more.
	Unmeetable
)

func (v Verdict) String() string {
	switch v {
	case Met:
		return "met"
	case Unmet:
		return "unmet"
	}
	return "unmeetable"
}

// An Expectation is a condition on the editor's State.
type Expectation struct {
	Check       func(*State) Verdict
	Description string
}

// OnceMet is met when pre is met and then every one of must holds at that
// moment; it is unmeetable when pre is met and one of must is not.
func OnceMet(pre Expectation, must ...Expectation) Expectation {
	descs := make([]string, len(must))
	for i, m := range must {
		descs[i] = m.Description
	}
	return Expectation{
		Check: func(s *State) Verdict {
			switch pre.Check(s) {
			case Unmeetable:
				return Unmeetable
			case Unmet:
				return Unmet
			}
			for _, m := range must {
				if m.Check(s) != Met {
					return Unmeetable
				}
			}
			return Met
		},
		Description: fmt.Sprintf("once %q: %s", pre.Description, strings.Join(descs, ", ")),
	}
}

// AllOf is met when every expectation is met.
func AllOf(es ...Expectation) Expectation {
	descs := make([]string, len(es))
	for i, e := range es {
		descs[i] = e.Description
	}
	return Expectation{
		Check: func(s *State) Verdict {
			v := Met
			for _, e := range es {
				v = max(v, e.Check(s))
			}
			return v
		},
		Description: "all of (" + strings.Join(descs, ", ") + ")",
	}
}

// Not is met when e is not met (and unmeetable once e is).
func Not(e Expectation) Expectation {
	return Expectation{
		Check: func(s *State) Verdict {
			if e.Check(s) == Met {
				return Unmeetable
			}
			return Met
		},
		Description: "not " + e.Description,
	}
}

// StartedWork is met when at least n progresses titled title have begun.
func StartedWork(title string, n int) Expectation {
	return Expectation{
		Check: func(s *State) Verdict {
			count := 0
			for _, w := range s.Work {
				if w.Title == title {
					count++
				}
			}
			if count >= n {
				return Met
			}
			return Unmet
		},
		Description: fmt.Sprintf("%d started %q", n, title),
	}
}

// CompletedWork is met when exactly n progresses titled title have ended
// (at least n with atLeast); more than n without atLeast is unmeetable.
func CompletedWork(title string, n int, atLeast bool) Expectation {
	return Expectation{
		Check: func(s *State) Verdict {
			count := 0
			for _, w := range s.Work {
				if w.Title == title && w.Ended {
					count++
				}
			}
			switch {
			case count == n || (atLeast && count > n):
				return Met
			case count > n:
				return Unmeetable
			}
			return Unmet
		},
		Description: fmt.Sprintf("%d completed %q", n, title),
	}
}

// EndedWith is met when a progress titled title ended with a message
// containing substr.
func EndedWith(title, substr string) Expectation {
	return Expectation{
		Check: func(s *State) Verdict {
			for _, w := range s.Work {
				if w.Title == title && w.Ended && strings.Contains(w.End, substr) {
					return Met
				}
			}
			return Unmet
		},
		Description: fmt.Sprintf("%q ended with %q", title, substr),
	}
}

// PressureState is met when the last vtcode/tokenPressure of session id
// reports state.
func PressureState(id, state string) Expectation {
	return Expectation{
		Check: func(s *State) Verdict {
			if ev, ok := s.Pressure[id]; ok && ev.State == state {
				return Met
			}
			return Unmet
		},
		Description: fmt.Sprintf("pressure of %s is %s", id, state),
	}
}

// PressureWhere is met when the last vtcode/tokenPressure of session id
// satisfies ok.
func PressureWhere(id, desc string, ok func(session.PressureEvent) bool) Expectation {
	return Expectation{
		Check: func(s *State) Verdict {
			if ev, seen := s.Pressure[id]; seen && ok(ev) {
				return Met
			}
			return Unmet
		},
		Description: fmt.Sprintf("pressure of %s: %s", id, desc),
	}
}

// Boundary is met when a vtcode/compactBoundary with trigger arrived for
// session id.
func Boundary(id, trigger string) Expectation {
	return Expectation{
		Check: func(s *State) Verdict {
			for _, ev := range s.Boundaries {
				if ev.SessionID == id && ev.Trigger == trigger {
					return Met
				}
			}
			return Unmet
		},
		Description: fmt.Sprintf("compact boundary %s of %s", trigger, id),
	}
}

// ShownMessage is met when a window/showMessage containing substr arrived.
func ShownMessage(substr string) Expectation {
	return Expectation{
		Check: func(s *State) Verdict {
			for _, m := range s.ShowMessages {
				if strings.Contains(m.Message, substr) {
					return Met
				}
			}
			return Unmet
		},
		Description: fmt.Sprintf("shown message containing %q", substr),
	}
}

// NoShownMessage is met while no window/showMessage has arrived.
func NoShownMessage() Expectation {
	return Expectation{
		Check: func(s *State) Verdict {
			if len(s.ShowMessages) > 0 {
				return Unmeetable
			}
			return Met
		},
		Description: "no shown message",
	}
}
