package audit

// The auditor's checks of the log's witnessing (docs/WITNESS.md): the
// witness policy the log publishes and its latest witnessed checkpoint.

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/zarlog/zarlog/follow"
	"github.com/zarlog/zarlog/merkle"
)

// Paths of a zarlog log's witnessing (docs/HTTP.md; package publisher's
// WitnessPolicyPath, follow.WitnessedPath).
const (
	witnessPolicyPath = "witness-policy"
	maxPolicy         = 1 << 20
)

// witnessState is what the auditor knows of the log's witnessing.
type witnessState struct {
	policyText []byte         // the log's published policy, as read
	published  *merkle.Policy // parsed; nil: none (yet)
	note       []byte         // the latest witnessed checkpoint read
	size       uint64         // its size
	since      time.Time      // when it was cosigned (its latest cosignature by a witness of the policy), or first read
	stale      bool           // it stayed behind a log that grew for WitnessGrace or longer
	reported   uint64         // the size whose staleness was reported (+1; 0: none)
}

// errWaitingWitnesses is verifyGame's answer for a game whose bundle is not
// witnessed yet while the log's witnessing is not stale: not decided, not
// a problem; a later pass (or run) decides it.
var errWaitingWitnesses = errors.New("the game's bundle is not witnessed yet")

// witnessStale reports whether the log's witnessed checkpoint has stayed
// behind a log that grew for WitnessGrace or longer.
func (a *Auditor) witnessStale() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.wit.stale
}

// witnessPolicy returns the policy bundles and witnessed checkpoints are
// checked against: the auditor's own, or else the log's published one, or
// nil.
func (a *Auditor) witnessPolicy() *merkle.Policy {
	if a.policy != nil {
		return a.policy
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.wit.published
}

// witnessing reads the log's /witness-policy and /checkpoint.witnessed and
// returns the problems found:
//
//   - a published policy that does not parse or does not list the log's
//     key;
//   - a witnessed checkpoint not signed by the log, or whose cosignatures
//     do not meet the policy (the auditor's, or else the published one);
//   - one inconsistent with the view (a split view, with evidence: the
//     view advances to it like to any checkpoint of the log);
//   - one cosigned longer than WitnessGrace ago (its latest cosignature's
//     time, or when the auditor first read it) while the log grew past it:
//     the log's witnesses have stopped cosigning it. The detail names each
//     witness of the policy with the time of its cosignature.
//
// A log that serves neither (404) has no witnessing: nothing is checked.
func (a *Auditor) witnessing(ctx context.Context) []Problem {
	now := a.cfg.Now()
	var ps []Problem
	problem := func(detail string, source string) {
		ps = append(ps, Problem{Time: now.UTC(), Kind: ProblemWitnessing, Detail: detail, Source: source})
	}
	text, err := a.src.Get(ctx, witnessPolicyPath, maxPolicy)
	switch {
	case errors.Is(err, merkle.ErrNotFound):
	case err != nil:
		a.log.Warn("audit: reading the log's witness policy", "err", err)
	default:
		a.mu.Lock()
		changed := !bytes.Equal(text, a.wit.policyText)
		a.mu.Unlock()
		if changed {
			p, err := a.publishedPolicy(text)
			if err != nil {
				problem(err.Error(), a.src.URL(witnessPolicyPath))
			}
			a.mu.Lock()
			a.wit.policyText, a.wit.published = text, p
			a.mu.Unlock()
		}
	}
	policy := a.witnessPolicy()
	n, err := a.src.Get(ctx, follow.WitnessedPath, merkle.MaxNoteSize)
	source := a.src.URL(follow.WitnessedPath)
	switch {
	case errors.Is(err, merkle.ErrNotFound):
		return ps
	case err != nil:
		a.log.Warn("audit: reading the log's witnessed checkpoint", "err", err)
		return ps
	}
	cp, err := a.f.Open(n)
	if err != nil {
		problem(fmt.Sprintf("the log's witnessed checkpoint is not signed by its key: %s", err), source)
		return ps
	}
	if policy == nil {
		problem("the log serves a witnessed checkpoint but no witness policy to check it against", source)
		return ps
	}
	if _, err := policy.CheckWitnesses(n); err != nil {
		problem(fmt.Sprintf("the log's witnessed checkpoint (size %d) does not meet the witness policy: %s", cp.Size, err), source)
		return ps
	}
	if p, err := a.checkpoint(ctx, n, source, "witnessed"); p != nil {
		ps = append(ps, *p)
	} else if err != nil {
		a.log.Warn("audit: checking the log's witnessed checkpoint against the view", "size", cp.Size, "err", err)
	}
	// How far the log has grown: the view, or with a policy of the
	// auditor's own (the view then follows the witnessed checkpoints) the
	// log's latest signed checkpoint.
	grown := a.Checkpoint().Size
	if latest, err := a.src.Checkpoint(ctx); err == nil {
		if lcp, err := a.f.Open(latest); err == nil && lcp.Size > grown {
			grown = lcp.Size
		}
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.wit.note == nil || !bytes.Equal(n, a.wit.note) {
		a.wit.note, a.wit.size, a.wit.since = n, cp.Size, now
		if t := lastCosigned(n, policy); !t.IsZero() && t.Before(now) {
			a.wit.since = t
		}
	}
	a.wit.stale = grown > cp.Size && now.Sub(a.wit.since) >= a.cfg.WitnessGrace
	if a.wit.stale && a.wit.reported != cp.Size+1 {
		a.wit.reported = cp.Size + 1
		problem(fmt.Sprintf("the log's witnessed checkpoint (size %d) was cosigned %s ago and the log has grown to %d since: its witnesses have stopped cosigning it (refusing the log's checkpoint as inconsistent with one they cosigned, or down); cosignatures: %s",
			cp.Size, now.Sub(a.wit.since).Round(time.Second), grown, cosignedAt(n, policy)), source)
	}
	return ps
}

// publishedPolicy parses the log's published policy, which must list the
// log's key.
func (a *Auditor) publishedPolicy(text []byte) (*merkle.Policy, error) {
	p, err := merkle.ParsePolicy(text)
	if err != nil {
		return nil, fmt.Errorf("the log's witness policy does not parse: %w", err)
	}
	for _, l := range p.Logs() {
		if l.Name() == a.key.Name() && l.KeyHash() == a.key.KeyHash() {
			return p, nil
		}
	}
	return nil, fmt.Errorf("the log's witness policy does not list the log's key %s", a.cfg.LogKey)
}

// lastCosigned returns the time of the latest cosignature on note by a
// witness of the policy (zero if none).
func lastCosigned(note []byte, p *merkle.Policy) time.Time {
	cs, _ := merkle.VerifyCosignatures(note, p.Witnesses())
	var t time.Time
	for _, c := range cs {
		if c.Timestamp.After(t) {
			t = c.Timestamp
		}
	}
	return t
}

// cosignedAt says which of the policy's witnesses cosigned note and when.
func cosignedAt(note []byte, p *merkle.Policy) string {
	cs, _ := merkle.VerifyCosignatures(note, p.Witnesses())
	at := map[string]time.Time{}
	for _, c := range cs {
		at[c.Name] = c.Timestamp
	}
	var parts []string
	for _, w := range p.Witnesses() {
		if t, ok := at[w.Name()]; ok {
			parts = append(parts, w.Name()+" at "+t.Format(time.RFC3339))
		} else {
			parts = append(parts, w.Name()+" none")
		}
	}
	return strings.Join(parts, ", ")
}
