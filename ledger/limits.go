package ledger

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cockroachdb/pebble/v2"

	"github.com/zarlog/zarlog/events"
)

// The ledger's codes for an event refused for a limit (docs/FORMATS.md
// §1.5): the emitter may send it again once it is within the limit (when
// some of its games have ended).
const (
	// CodeOverLimit: the event would take its emitter's open games (or
	// every emitter's) past a limit of Config: their number or their
	// bytes. The reason names the emitter and the limit.
	CodeOverLimit events.Code = "over-limit"
	// CodeGameTooLarge: the event would take its game's state past
	// Config.MaxGameBytes.
	CodeGameTooLarge events.Code = "game-too-large"
)

// The limits, as the refusals and the limit label of
// zarlog_ledger_limit_refusals_total name them: the flags of `zarlog serve`
// that set them.
const (
	LimitMaxGameBytes            = "max-game-bytes"
	LimitOpenGamesPerEmitter     = "open-games-per-emitter"
	LimitOpenGameBytesPerEmitter = "open-game-bytes-per-emitter"
	LimitOpenGameBytes           = "open-game-bytes"
)

// OpenGames returns each emitter's open games and the bytes of their states
// (events.Game.Size), as the groups prepared so far left them: what the
// limits of Config count.
func (l *Ledger) OpenGames() map[string]OpenCount {
	l.openMu.Lock()
	defer l.openMu.Unlock()
	out := make(map[string]OpenCount, len(l.openView))
	for e, o := range l.openView {
		out[e] = OpenCount(o)
	}
	return out
}

// setOpen publishes emitter's open-game counts to OpenGames and the metrics.
func (l *Ledger) setOpen(emitter string, o openCount) {
	l.openMu.Lock()
	if l.openView == nil {
		l.openView = map[string]openCount{}
	}
	if o == (openCount{}) {
		delete(l.openView, emitter)
	} else {
		l.openView[emitter] = o
	}
	l.openMu.Unlock()
	l.met.openGames.WithLabelValues(emitter).Set(float64(o.Games))
	l.met.openBytes.WithLabelValues(emitter).Set(float64(o.Bytes))
}

// An OpenCount is an emitter's open games: how many, and the bytes of their
// states.
type OpenCount struct{ Games, Bytes uint64 }

// readOpen reads every emitter's open-games record.
func readOpen(r pebble.Reader) (map[string]openCount, error) {
	it, err := r.NewIter(&pebble.IterOptions{LowerBound: []byte{prefixOpen}, UpperBound: prefixEnd(prefixOpen)})
	if err != nil {
		return nil, err
	}
	out := map[string]openCount{}
	for ok := it.First(); ok; ok = it.Next() {
		o, err := parseOpenCount(it.Value())
		if err != nil {
			it.Close()
			return nil, fmt.Errorf("emitter %q: %w", it.Key()[1:], err)
		}
		out[string(it.Key()[1:])] = o
	}
	return out, errors.Join(it.Error(), it.Close())
}

// migrateOpenGames counts the open games of a format-4 store, by emitter,
// and writes their records with format 6's format record in one batch
// (format 6 changed nothing a format-5 store holds but the record): a
// crash before it leaves a format-4 store, counted again at the next Open.
// It reads every game's head, and the history of the open ones.
func (l *Ledger) migrateOpenGames(ctx context.Context) (map[string]openCount, error) {
	db := l.db
	start := time.Now()
	it, err := db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: []byte{prefixGame}, UpperBound: prefixEnd(prefixGame)})
	if err != nil {
		return nil, err
	}
	open := map[string]openCount{}
	games := 0
	for ok := it.First(); ok; ok = it.Next() {
		if err := ctx.Err(); err != nil {
			it.Close()
			return nil, err
		}
		games++
		var head events.Game
		if err := head.UnmarshalBinary(it.Value()); err != nil {
			it.Close()
			return nil, fmt.Errorf("the state of game %q: %w: %w", it.Key()[1:], ErrCorrupt, err)
		}
		if head.Closed {
			continue
		}
		g, err := loadGame(db, string(it.Key()[1:]))
		if err != nil {
			it.Close()
			return nil, err
		}
		o := open[g.Emitter]
		o.Games++
		o.Bytes += uint64(g.Size())
		open[g.Emitter] = o
	}
	if err := errors.Join(it.Error(), it.Close()); err != nil {
		return nil, err
	}
	b := db.NewBatch()
	defer b.Close()
	for e, o := range open {
		b.Set(strKey(prefixOpen, e), o.marshal(), nil)
	}
	b.Set(keyFormat, append([]byte{6}, l.origin...), nil)
	if err := l.commit(b, "counting the open games of each emitter"); err != nil {
		return nil, err
	}
	l.log.Info("counted the open games of each emitter", "games", games, "emitters", len(open), "took", time.Since(start))
	return open, nil
}
