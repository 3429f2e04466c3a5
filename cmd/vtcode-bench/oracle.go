package main

import (
	"math"

	"github.com/vtcode/vtcode-ls/clearing"
	"github.com/vtcode/vtcode-ls/config"
	"github.com/vtcode/vtcode-ls/history"
	"github.com/vtcode/vtcode-ls/providers/catalog"
)

// bestStepped is the cost ratio (to sending everything) of the best
// stepped schedule in hindsight: knowing the whole session, it chooses the
// turns at which everything above docs/design.md §7's floor is cleared (a step, as the
// default schedule takes), and in between clears nothing new, so that each
// request starts with the previous one and its answer. A dynamic program
// over the turn of the last step finds it; no online schedule of steps
// costs less. Both costs count the messages only (no system prompt), with
// every request read from the cache up to the first byte that differs from
// the previous request and its answer.
func bestStepped(msgs []history.Message, cc catalog.CacheCost, window int) float64 {
	est := history.NewEstimator(history.O200k)
	reqs, answers := sessionRequests(est, msgs)
	if len(reqs) == 0 {
		return math.NaN()
	}
	seed := clearing.SeedPolicy()
	hold := seed
	hold.ClearAtLeastTokens = math.MaxInt // never steps: clears before the horizon only
	b := clearing.Budget{Capacity: window, ReservedOutput: config.Default().Context.ReservedOutputTokens}
	rc := requestCost{est: est, cc: cc}
	project := func(u, horizon int) []history.Message {
		return clearing.Project(est, reqs[u], clearing.Request{Policy: hold, Budget: b, Horizon: clearing.Horizon{Messages: horizon}}).Messages
	}

	// States: the horizon of the last step (0 before any), with the least
	// cost so far and the previous request's projection under it.
	type state struct {
		cost float64
		proj []history.Message
	}
	states := map[int]state{}
	var base float64
	var prevAll []history.Message
	for u := range reqs {
		var ans *history.Message
		if u > 0 {
			ans = &answers[u-1]
		}
		base += rc.of(reqs[u], prevAll, ans)
		prevAll = reqs[u]

		next := map[int]state{}
		// No step at u: each state goes on under its own horizon.
		if u == 0 {
			p := project(0, 0)
			next[0] = state{cost: rc.of(p, nil, nil), proj: p}
		}
		for hz, s := range states {
			p := project(u, hz)
			next[hz] = state{cost: s.cost + rc.of(p, s.proj, ans), proj: p}
		}
		// A step at u: clear everything above the floor, from any state.
		if u > 0 {
			stepHz := clearing.Project(est, reqs[u], clearing.Request{Policy: seed, Budget: b}).Horizon.Messages
			p := project(u, stepHz)
			best := math.Inf(1)
			for _, s := range states {
				best = min(best, s.cost+rc.of(p, s.proj, ans))
			}
			if cur, ok := next[stepHz]; !ok || best < cur.cost {
				next[stepHz] = state{cost: best, proj: p}
			}
		}
		states = next
	}
	best := math.Inf(1)
	for _, s := range states {
		best = min(best, s.cost)
	}
	return fratio(best, base)
}

// sessionRequests are the requests of a session as it sees them (the
// normalized history before each answer, estimated) and the answers.
func sessionRequests(est *history.Estimator, msgs []history.Message) (reqs [][]history.Message, answers []history.Message) {
	var h []history.Message
	request := func() {
		norm, _ := history.Normalize(h)
		norm = append([]history.Message(nil), norm...)
		est.Messages(norm)
		reqs = append(reqs, norm)
	}
	for i := range msgs {
		if msgs[i].Role != history.Assistant {
			h = append(h, msgs[i])
			continue
		}
		request()
		a := msgs[i]
		est.Message(&a)
		answers = append(answers, a)
		h = append(h, msgs[i])
	}
	if len(msgs) > 0 && msgs[len(msgs)-1].Role != history.Assistant {
		request() // the messages after the last answer go out in one more request
	}
	return reqs, answers
}

// requestCost prices a request's messages under a prompt cache.
type requestCost struct {
	est *history.Estimator
	cc  catalog.CacheCost
}

// of is the cost of request cur after request prev and its answer: read
// from the cache up to the first message that differs from them.
func (rc requestCost) of(cur, prev []history.Message, ans *history.Message) float64 {
	total, reused, n := 0, 0, 0
	for n < len(cur) && n < len(prev) && history.Same(&cur[n], &prev[n]) {
		n++
	}
	if prev != nil && n == len(prev) && n < len(cur) && history.Same(&cur[n], ans) {
		n++
	}
	for i := range cur {
		t := rc.est.Message(&cur[i])
		total += t
		if i < n {
			reused += t
		}
	}
	if prev == nil {
		reused = 0
	}
	return rc.cc.Units(total, reused)
}
