package publisher

// This file serves a log's witnessing (docs/HTTP.md, docs/WITNESS.md): its
// latest witnessed checkpoint and the witness policy it is witnessed under,
// so that the pages, zarlog-verify and watchers check cosignatures against
// the policy the log publishes.

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"golang.org/x/mod/sumdb/note"
)

// Paths of a log's witnessing, under its tlog-tiles prefix.
const (
	// WitnessedPath is the latest witnessed checkpoint: the log's signed
	// checkpoint with cosignatures that meet its witness policy's quorum.
	// (The transparency-dev distributor serves the same thing per number of
	// cosignatures as checkpoint.N; a log has one policy, hence one name.)
	WitnessedPath = "checkpoint.witnessed"
	// WitnessPolicyPath is the witness policy: a C2SP tlog-policy with the
	// log's own "log" line, its witnesses and its quorum.
	WitnessPolicyPath = "witness-policy"
	// EmitterKeysPath is the emitters' event-signing verifier keys the log
	// accepts (C2SP signed-note vkeys named by emitter id), one per line:
	// what the game pages check the platforms' signatures with, and what a
	// mirror re-serves.
	EmitterKeysPath = "emitter-keys"
)

// ContentTypePolicy is the content type of /witness-policy.
const ContentTypePolicy = "text/plain; charset=utf-8"

// CachePolicy is sent with /witness-policy, which changes only when the
// operator changes the log's witnesses.
const CachePolicy = "public, max-age=300"

// A WitnessReader is a log's witnessing as the read API serves it. The
// log service implements it over its witness.Submitter's store; a mirror
// over its copy of the log's. Its methods are safe for concurrent use.
type WitnessReader interface {
	// Witnessed returns the latest witnessed checkpoint note verbatim, or
	// nil if none is witnessed yet (404).
	Witnessed() []byte
	// Policy returns the witness policy's text, or nil if there is none
	// (404).
	Policy() []byte
}

func (a *API) witnessed(w http.ResponseWriter, r *http.Request) {
	note := a.cfg.Witness.Witnessed()
	if note == nil {
		a.fail(w, "witnessed", http.StatusNotFound, "no checkpoint of the log is witnessed yet")
		return
	}
	a.text(w, "witnessed", ContentTypeCheckpoint, CacheCheckpoint, note)
}

func (a *API) witnessPolicy(w http.ResponseWriter, r *http.Request) {
	p := a.cfg.Witness.Policy()
	if p == nil {
		a.fail(w, "witness-policy", http.StatusNotFound, "the log has no witness policy")
		return
	}
	a.text(w, "witness-policy", ContentTypePolicy, CachePolicy, p)
}

func (a *API) emitterKeys(w http.ResponseWriter, r *http.Request) {
	keys := a.cfg.EmitterKeys()
	if keys == nil {
		a.fail(w, "emitter-keys", http.StatusNotFound, "the log publishes no emitter keys")
		return
	}
	var b []byte
	for _, k := range keys {
		b = append(append(b, k...), '\n')
	}
	a.text(w, "emitter-keys", ContentTypePolicy, CachePolicy, b)
}

// ParseEmitterKeys reads the body of /emitter-keys: one verifier key per
// line (empty lines and "#" comments ignored). Each must be an Ed25519
// signed-note verifier key; it returns them in order.
func ParseEmitterKeys(b []byte) ([]string, error) {
	var out []string
	for i, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if _, err := note.NewVerifier(line); err != nil {
			return nil, fmt.Errorf("emitter keys line %d: %w", i+1, err)
		}
		out = append(out, line)
	}
	return out, nil
}

func (a *API) text(w http.ResponseWriter, resource, contentType, cache string, b []byte) {
	h := w.Header()
	h.Set("Content-Type", contentType)
	h.Set("Cache-Control", cache)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.Write(b)
	a.count(resource, http.StatusOK)
}
