package serve

// The service's witnessing (docs/WITNESS.md): a witness.Submitter that
// sends the ledger's latest checkpoint to the policy's witnesses at most
// once per Config.WitnessInterval, off the path of the receipts, and keeps
// the witnessed checkpoints in DIR/witnessed/; the read API serves the
// latest at /checkpoint.witnessed and the policy at /witness-policy.

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"path/filepath"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/zarlog/zarlog/ledger"
	"github.com/zarlog/zarlog/merkle"
	"github.com/zarlog/zarlog/publisher"
	"github.com/zarlog/zarlog/witness"
)

// witnessing is the service's witnessing: the Submitter and the store of
// what it witnessed, with the policy as served.
type witnessing struct {
	sub   *witness.Submitter // nil: no witness has a URL, nobody is asked
	store *witness.Witnessed
}

// WitnessReader returns a witness.Witnessed as the read API serves it
// (publisher.WitnessReader): its latest witnessed checkpoint and its
// policy's text.
func WitnessReader(w *witness.Witnessed) publisher.WitnessReader { return witnessReader{w} }

type witnessReader struct{ w *witness.Witnessed }

func (r witnessReader) Witnessed() []byte {
	n, _, _ := r.w.Latest()
	return n
}

func (r witnessReader) Policy() []byte { return r.w.PolicyText() }

// witnessedDir is where the witnessed checkpoints are kept.
func (c *Config) witnessedDir() string { return filepath.Join(c.Dir, "witnessed") }

// PolicyFor returns the witness policy a log with verifier key vkey
// publishes, given the operator's policy text: the text itself if it lists
// the log's key among its logs, or the text after a "log <vkey>" line if it
// lists no log. It is an error if the text does not parse, lists logs but
// not this one's key, or has a quorum that no cosignature is needed for
// ("quorum none"): such a policy would call every checkpoint witnessed.
func PolicyFor(text []byte, vkey string) ([]byte, *merkle.Policy, error) {
	p, err := merkle.ParsePolicy(text)
	if err != nil {
		return nil, nil, fmt.Errorf("serve: witness policy: %w", err)
	}
	v, err := merkle.NewVerifier(vkey)
	if err != nil {
		return nil, nil, fmt.Errorf("serve: witness policy: the log's key: %w", err)
	}
	if logs := p.Logs(); len(logs) > 0 {
		found := false
		for _, l := range logs {
			found = found || l.Name() == v.Name() && l.KeyHash() == v.KeyHash()
		}
		if !found {
			return nil, nil, fmt.Errorf("serve: witness policy: it lists %d logs, none with this log's key %s", len(logs), vkey)
		}
	} else {
		text = append([]byte("log "+vkey+"\n"), text...)
		if p, err = merkle.ParsePolicy(text); err != nil {
			return nil, nil, fmt.Errorf("serve: witness policy: %w", err)
		}
	}
	if len(p.Witnesses()) == 0 {
		return nil, nil, errors.New("serve: witness policy: it lists no witness")
	}
	if needsNone(p) {
		return nil, nil, errors.New("serve: witness policy: its quorum is met without any cosignature (quorum none): no checkpoint would need a witness")
	}
	return bytes.Clone(text), p, nil
}

// needsNone reports whether the policy's quorum is met by a checkpoint
// without cosignatures.
func needsNone(p *merkle.Policy) bool {
	_, err := p.CheckWitnesses([]byte("x\n1\n" + "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=\n\n— x AAAAAAAA\n"))
	return err == nil
}

// newWitnessing sets up the witnessing of ledger l under the operator's
// policy text; nil without one.
func newWitnessing(cfg *Config, key *loadedKey, l *ledger.Ledger, log *slog.Logger, reg prometheus.Registerer) (*witnessing, error) {
	if len(cfg.WitnessPolicy) == 0 {
		return nil, nil
	}
	text, p, err := PolicyFor(cfg.WitnessPolicy, key.vkey)
	if err != nil {
		return nil, err
	}
	store, err := witness.OpenWitnessed(nil, cfg.witnessedDir(), key.verifier, text)
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	w := &witnessing{store: store}
	to := cfg.WitnessTimeout
	if to <= 0 {
		to = witness.DefaultRoundTimeout
	}
	g, err := witness.NewGroup(p, &http.Client{Timeout: to})
	if err != nil {
		return nil, fmt.Errorf("serve: witness policy: %w", err)
	}
	if len(g.Clients()) == 0 {
		log.Warn("the witness policy has no witness with a URL: nobody is asked to cosign")
		return w, nil
	}
	w.sub, err = witness.NewSubmitter(witness.SubmitterConfig{Group: g, Log: l, Proofs: l, LogKey: key.verifier, Witnessed: store,
		Interval: cfg.WitnessInterval, Timeout: to, Logger: log.With("component", "witnessing"), Registerer: reg})
	if err != nil {
		return nil, fmt.Errorf("serve: %w", err)
	}
	return w, nil
}

// reader returns w as the read API's publisher.WitnessReader: nil (no
// witnessing served) if w is nil.
func (w *witnessing) reader() publisher.WitnessReader {
	if w == nil {
		return nil
	}
	return WitnessReader(w.store)
}

func orDefaultDuration(d, def time.Duration) time.Duration {
	if d <= 0 {
		return def
	}
	return d
}

// source returns the witnessed checkpoints as the Bundler reads them: nil
// (bundles built once) if w is nil.
func (w *witnessing) source() publisher.WitnessedSource {
	if w == nil {
		return nil
	}
	return w.store
}
