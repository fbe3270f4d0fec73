package audit

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/internal/pebblefs"
)

// Keys of the auditor's own state (a Pebble database beside the follower's
// copy). Numbers are big-endian.
//
//	m cursor      u64: every finished game whose final event's leaf index is below it is decided
//	m unusable    u64: the unusable leaves below this index have been reported
//	m problems    u64: the number of problem records
//	d game        the decision about a game: 1 byte (1 verified, 2 problem) ‖ u64 the bundle's checkpoint size
//	p N:u64       problem record N, JSON (Problem)
const (
	keyDecided = 'd'
	keyProblem = 'p'
)

var (
	keyCursor   = []byte("mcursor")
	keyUnusable = []byte("munusable")
	keyProblems = []byte("mproblems")
)

// Decisions about a game.
const (
	decidedOK      = 1
	decidedProblem = 2
)

// ErrCorrupt marks a stored record of the auditor that does not decode.
var ErrCorrupt = errors.New("corrupt audit record")

// A state is the auditor's own durable state.
type state struct {
	db *pebble.DB
}

func openState(dir string, fs vfs.FS, log *slog.Logger) (*state, error) {
	db, err := pebble.Open(dir, pebblefs.Options(fs, log, "audit state", 4<<20, 8<<20))
	if err != nil {
		return nil, fmt.Errorf("audit: opening the state in %s: %w", dir, err)
	}
	return &state{db: db}, nil
}

func (s *state) close() error { return s.db.Close() }

func (s *state) get(key []byte) ([]byte, error) {
	v, c, err := s.db.Get(key)
	if err != nil {
		return nil, err
	}
	out := bytes.Clone(v)
	return out, c.Close()
}

func (s *state) u64(key []byte) (uint64, error) {
	b, err := s.get(key)
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if len(b) != 8 {
		return 0, fmt.Errorf("audit: %s of %d bytes: %w", key, len(b), ErrCorrupt)
	}
	return binary.BigEndian.Uint64(b), nil
}

func decidedKey(game string) []byte { return append([]byte{keyDecided}, game...) }

// decided returns the decision about a game: 0 if none.
func (s *state) decided(game string) (byte, error) {
	b, err := s.get(decidedKey(game))
	if errors.Is(err, pebble.ErrNotFound) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	if len(b) != 9 || (b[0] != decidedOK && b[0] != decidedProblem) {
		return 0, fmt.Errorf("audit: decision about %q of %d bytes: %w", game, len(b), ErrCorrupt)
	}
	return b[0], nil
}

// A decision is one game's outcome to store.
type decision struct {
	game           string
	ok             bool
	checkpointSize uint64
	problem        *Problem
}

// record stores decisions, the problems they carry and other problems, and
// (if cursor is not nil) the new cursor, in one durable batch. It returns
// the problems' numbers.
func (s *state) record(ds []decision, problems []Problem, cursor, unusable *uint64) error {
	n, err := s.u64(keyProblems)
	if err != nil {
		return err
	}
	b := s.db.NewBatch()
	defer b.Close()
	add := func(p Problem) error {
		data, err := json.Marshal(p)
		if err != nil {
			return err
		}
		if err := b.Set(binary.BigEndian.AppendUint64([]byte{keyProblem}, n), data, nil); err != nil {
			return err
		}
		n++
		return nil
	}
	for _, d := range ds {
		v := []byte{decidedOK}
		if !d.ok {
			v[0] = decidedProblem
		}
		if err := b.Set(decidedKey(d.game), binary.BigEndian.AppendUint64(v, d.checkpointSize), nil); err != nil {
			return err
		}
		if d.problem != nil {
			if err := add(*d.problem); err != nil {
				return err
			}
		}
	}
	for _, p := range problems {
		if err := add(p); err != nil {
			return err
		}
	}
	if err := b.Set(keyProblems, binary.BigEndian.AppendUint64(nil, n), nil); err != nil {
		return err
	}
	if cursor != nil {
		if err := b.Set(keyCursor, binary.BigEndian.AppendUint64(nil, *cursor), nil); err != nil {
			return err
		}
	}
	if unusable != nil {
		if err := b.Set(keyUnusable, binary.BigEndian.AppendUint64(nil, *unusable), nil); err != nil {
			return err
		}
	}
	if err := b.Commit(pebble.Sync); err != nil {
		return fmt.Errorf("audit: storing %d decisions and %d problems: %w", len(ds), len(problems), err)
	}
	return nil
}

// problems returns every stored problem, in the order found.
func (s *state) problems() ([]Problem, error) {
	it, err := s.db.NewIter(&pebble.IterOptions{LowerBound: []byte{keyProblem}, UpperBound: []byte{keyProblem + 1}})
	if err != nil {
		return nil, err
	}
	defer it.Close()
	var out []Problem
	for ok := it.First(); ok; ok = it.Next() {
		p, err := ParseProblem(it.Value())
		if err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, it.Error()
}

// Kinds of problems.
const (
	// ProblemGame: a finished game's proof bundle fails a check.
	ProblemGame = "game"
	// ProblemMissingBundle: a finished game's bundle could not be fetched
	// within the grace period.
	ProblemMissingBundle = "missing-bundle"
	// ProblemSplitView: a signed checkpoint cannot be true together with
	// the verified view (a fork, or a failed consistency proof); an
	// evidence file is written.
	ProblemSplitView = "split-view"
	// ProblemEntries: the log's entries do not give a checkpoint's root;
	// an evidence file is written.
	ProblemEntries = "entries"
	// ProblemLogFault: the log served what no honest log serves and no
	// retry mends: a checkpoint larger than the largest tree accepted
	// (--max-size), an entry bundle or tile larger than the format allows,
	// or one that does not parse (follow.ErrLogFault). Nothing of it is
	// kept; the view stays at its verified checkpoint.
	ProblemLogFault = "log-fault"
	// ProblemLeaf: a leaf of the log is not a zarlog event, or an event the
	// state machine refuses.
	ProblemLeaf = "leaf"
	// ProblemWitnessing: the log's witnessing is wrong: its published
	// policy does not list its key or does not parse, its witnessed
	// checkpoint does not meet the policy, or it has stayed behind a log
	// that grew for longer than the witness grace (its witnesses stopped
	// cosigning: refusing the log's checkpoint as inconsistent, or down).
	ProblemWitnessing = "witnessing"
)

// A Problem is something wrong the auditor found. It is kept in its state,
// logged at error level, counted, and turns /healthz red.
type Problem struct {
	Time     time.Time `json:"time"`
	Kind     string    `json:"kind"`               // one of the Problem* kinds
	Game     string    `json:"game,omitempty"`     // the game concerned
	Index    *uint64   `json:"index,omitempty"`    // the leaf concerned (ProblemLeaf)
	Check    string    `json:"check,omitempty"`    // the failed check: a verifier check name, "fetch", "view-leaves", "view-consistency"
	Detail   string    `json:"detail"`             // what failed, in English
	Source   string    `json:"source,omitempty"`   // where the bundle or checkpoint came from
	Evidence string    `json:"evidence,omitempty"` // the evidence file written
}

func (p Problem) String() string {
	s := p.Kind
	switch {
	case p.Kind == ProblemGame:
		s = "game " + p.Game
	case p.Game != "":
		s += " (game " + p.Game + ")"
	}
	if p.Index != nil {
		s += fmt.Sprintf(" %d", *p.Index)
	}
	if p.Check != "" {
		s += ": " + p.Check
	}
	s += ": " + p.Detail
	if p.Evidence != "" {
		s += " (evidence " + p.Evidence + ")"
	}
	return s
}

// ParseProblem decodes a stored problem record strictly: one JSON object of
// known members, a known kind, a valid game id if any. Errors wrap
// ErrCorrupt.
func ParseProblem(b []byte) (Problem, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	var p Problem
	if err := d.Decode(&p); err != nil {
		return Problem{}, fmt.Errorf("audit: problem record: %w: %w", ErrCorrupt, err)
	}
	if _, err := d.Token(); err != io.EOF {
		return Problem{}, fmt.Errorf("audit: problem record: data after the object: %w", ErrCorrupt)
	}
	switch p.Kind {
	case ProblemGame, ProblemMissingBundle, ProblemSplitView, ProblemEntries, ProblemLeaf, ProblemWitnessing, ProblemLogFault:
	default:
		return Problem{}, fmt.Errorf("audit: problem record of kind %q: %w", p.Kind, ErrCorrupt)
	}
	if p.Game != "" && !events.ValidGameID(p.Game) {
		return Problem{}, fmt.Errorf("audit: problem record of game %q: %w", p.Game, ErrCorrupt)
	}
	return p, nil
}
