package publisher

// This file serves /players/{emitter}/{id}/export: a player's own export,
// every proof bundle of the games one platform logged with the seat id, in
// one file that zarlog-verify checks whole (verifier.VerifyExport: one
// verdict per game and a summary). The format, JSON lines (docs/HTTP.md,
// docs/FORMATS.md §5): the header
//
//	{"emitter":"acme","format":"zarlog-player-export-v1","games":50,"player":"<id>"}
//
// then each game's bundle, byte for byte /games/<id>/proof.json, one per
// line, the last finished first. The header's count makes a cut download
// show: zarlog-verify says the file is not whole.

import (
	"fmt"
	"net/http"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/verifier"
)

// MaxExportGames is the most games a player's export holds, the last
// finished first.
const MaxExportGames = 10000

// playerExport serves /players/{emitter}/{id}/export.
func (p *Pages) playerExport(w http.ResponseWriter, r *http.Request) {
	emitter := r.PathValue("emitter")
	id, err := dice.ParseUUID(r.PathValue("id"))
	if err != nil || !events.ValidEmitter(emitter) || p.cfg.Index == nil {
		http.Error(w, "no such player: /players/<platform>/<player id>/export", http.StatusNotFound)
		return
	}
	ctx := r.Context()
	refs, err := p.cfg.Index.GamesOf(ctx, emitter, id, MaxExportGames)
	if err != nil {
		p.log.Error("pages: listing a player's games for the export", "err", err)
		http.Error(w, "cannot list the games", http.StatusInternalServerError)
		return
	}
	if len(refs) == 0 {
		http.Error(w, fmt.Sprintf("platform %q logged no finished game of player %s", emitter, id), http.StatusNotFound)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/x-ndjson")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="zarlog-%s-%s.jsonl"`, emitter, id))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", CacheBundle)
	w.Write(append(verifier.FormatExportHeader(emitter, id, len(refs)), '\n'))
	for _, ref := range refs {
		g, err := p.cfg.Games.Game(ctx, ref.Game)
		if err != nil || g.Status != GameFinished {
			// The header is sent: end the response short, so that the file
			// is seen as cut (its count) rather than whole with a game less.
			p.log.Error("pages: a game of a player's export is not to be had", "game", ref.Game, "err", err)
			panic(http.ErrAbortHandler)
		}
		w.Write(g.Bundle)
		w.Write([]byte{'\n'})
	}
}
