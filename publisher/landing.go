package publisher

// This file serves the pages that find a game: the landing page (what this
// log is, its key and size, a search box, the games that finished last),
// the search (a seal code as people type it, a game id or a player id),
// and a player's page (their games, and their dice against their
// opponents').

import (
	"context"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"strings"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/events/dice"
	"github.com/zarlog/zarlog/verifier"
)

// A GameIndex finds the finished games for the landing page, the search and
// the player pages. *Store is one. Implementations must be safe for
// concurrent use.
type GameIndex interface {
	// Recent lists up to limit games, the last finished first.
	Recent(ctx context.Context, limit int) ([]BundleRef, error)
	// FindSeal lists up to limit games with this seal code, the last
	// finished first.
	FindSeal(ctx context.Context, seal dice.Seal, limit int) ([]BundleRef, error)
	// GamesOf lists up to limit games that emitter logged with this seat
	// id, the last finished first; never another emitter's.
	GamesOf(ctx context.Context, emitter string, seat dice.UUID, limit int) ([]BundleRef, error)
	// EmittersOf lists up to limit emitters that logged a game with this
	// seat id.
	EmittersOf(ctx context.Context, seat dice.UUID, limit int) ([]string, error)
	// Row returns a game's row, or an error wrapping ErrNoBundle.
	Row(ctx context.Context, game string) (GameRow, error)
}

// Limits of the lists.
const (
	// RecentGames is how many finished games the landing page lists.
	RecentGames = 12
	// MaxMatches is the most games a search lists.
	MaxMatches = 100
	// MaxPlayerGames is the most games a player page counts, the last
	// finished first; the page says when a player has more.
	MaxPlayerGames = 1000
	// MaxPlatforms is the most platforms a page lists for one player id.
	MaxPlatforms = 100
)

// gameItem is one game in a list.
type gameItem struct {
	ID, Href, Heading, When, Result, Seal string
	SealWords                             string        // per-roll-v1: how many seal codes, in words
	Players                               template.HTML // the seats, each a link to its player page where the game logs seat ids
	Rolls                                 int
}

func (p *Pages) item(l verifier.Lang, r GameRow) gameItem {
	r.Names = p.cfg.HiddenNames.shown(r.GameSummary)
	it := gameItem{ID: r.Game, Href: "/games/" + url.PathEscape(r.Game) + "?lang=" + string(l),
		Heading: text(l, "GameHeading", variantName(l, r.Variant)), When: playedText(l, r.Started, r.Ended),
		Players: playersHTML(l, r.GameSummary),
		Result:  resultText(l, r.End, r.Names), Rolls: r.Rolls}
	switch {
	case len(r.Seals) == 1:
		it.Seal = r.Seals[0].String()
	case len(r.Seals) > 1:
		it.SealWords = text(l, "SealsOfRolls", len(r.Seals)) // words, in the page's direction
	}
	return it
}

// playerPath is the page of a seat id of an emitter's games.
func playerPath(emitter string, seat dice.UUID) string {
	return "/players/" + url.PathEscape(emitter) + "/" + seat.String()
}

// playersHTML says who played a game ("Ayşe against Mehmet"), each seat a
// link to its player page on the game's platform when the game logs seat
// ids (tavlarena-v1), each name isolated (bdi) so that a name in another
// script keeps its place in the sentence.
func playersHTML(l verifier.Lang, sum GameSummary) template.HTML {
	if sum.Opponent == verifier.OpponentComputer {
		return template.HTML(template.HTMLEscapeString(text(l, "AgainstComputer")))
	}
	const mark0, mark1 = "\x00seat0\x00", "\x00seat1\x00"
	line := template.HTMLEscapeString(text(l, "PlayersLine", mark0, mark1))
	for seat, mark := range []string{mark0, mark1} {
		name := "<bdi>" + template.HTMLEscapeString(seatLabel(l, sum.Names, seat)) + "</bdi>"
		if sum.HasSeats && events.ValidEmitter(sum.Emitter) {
			name = `<a class="player" href="` + template.HTMLEscapeString(playerPath(sum.Emitter, sum.Seats[seat])+"?lang="+string(l)) + `">` + name + `</a>`
		}
		line = strings.Replace(line, template.HTMLEscapeString(mark), name, 1)
	}
	return template.HTML(line)
}

// items reads the rows of refs; a game whose row is missing (a store being
// rebuilt) is left out.
func (p *Pages) items(ctx context.Context, l verifier.Lang, refs []BundleRef) ([]gameItem, error) {
	var out []gameItem
	for _, ref := range refs {
		r, err := p.cfg.Index.Row(ctx, ref.Game)
		if errors.Is(err, ErrNoBundle) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, p.item(l, r))
	}
	return out, nil
}

type landingView struct {
	base
	Indexed  bool
	Games    uint64
	LogSize  uint64
	HasStats bool
	Recent   []gameItem
}

func (p *Pages) landing(w http.ResponseWriter, r *http.Request) {
	l := Negotiate(r.URL.Query().Get("lang"), r.Header.Get("Accept-Language"))
	v := &landingView{base: p.base(r, l, "LandingTitle"), Indexed: p.cfg.Index != nil}
	if p.cfg.Stats != nil {
		s, err := p.cfg.Stats.Stats(r.Context())
		if err != nil {
			p.log.Error("pages: reading the statistics", "err", err)
		} else {
			v.HasStats, v.Games, v.LogSize = true, s.Games, s.LogSize
		}
	}
	if p.cfg.Index != nil {
		refs, err := p.cfg.Index.Recent(r.Context(), RecentGames)
		if err == nil {
			v.Recent, err = p.items(r.Context(), l, refs)
		}
		if err != nil {
			p.log.Error("pages: listing the recent games", "err", err)
			http.Error(w, "cannot list the games", http.StatusInternalServerError)
			return
		}
	}
	p.render(w, http.StatusOK, "landing.tmpl", v)
}

type searchView struct {
	base
	Query   string
	Problem string // why the query found nothing, in words
	Matches []gameItem
	Indexed bool
}

// search answers /search?q=: a seal code (as people type it: any case, O
// for 0, I and L for 1, with or without the hyphen), a game id, or a
// player's seat id. One game found: to its page. Several: all listed.
func (p *Pages) search(w http.ResponseWriter, r *http.Request) {
	l := Negotiate(r.URL.Query().Get("lang"), r.Header.Get("Accept-Language"))
	q := strings.TrimSpace(r.URL.Query().Get("q"))
	if len(q) > 300 {
		q = q[:300]
	}
	v := &searchView{base: p.base(r, l, "SearchTitle"), Query: q, Indexed: p.cfg.Index != nil}
	ctx := r.Context()
	to := func(path string) {
		http.Redirect(w, r, path+"?lang="+string(l), http.StatusSeeOther)
	}
	if q == "" {
		v.Problem = text(l, "SearchEmpty")
		p.render(w, http.StatusNotFound, "search.tmpl", v)
		return
	}
	if seal, err := dice.ParseSealCode(q); err == nil && p.cfg.Index != nil {
		refs, err := p.cfg.Index.FindSeal(ctx, seal, MaxMatches)
		if err == nil {
			v.Matches, err = p.items(ctx, l, refs)
		}
		if err != nil {
			p.log.Error("pages: searching a seal", "err", err)
			http.Error(w, "cannot search", http.StatusInternalServerError)
			return
		}
		if len(v.Matches) == 1 {
			to("/games/" + url.PathEscape(v.Matches[0].ID))
			return
		}
		if len(v.Matches) > 1 {
			p.render(w, http.StatusOK, "search.tmpl", v)
			return
		}
		v.Problem = text(l, "SearchNoSeal", ltr(seal.String()))
	}
	if events.ValidGameID(q) {
		_, err := p.cfg.Games.Game(ctx, q)
		switch {
		case err == nil:
			to("/games/" + url.PathEscape(q))
			return
		case !errors.Is(err, ErrNoGame):
			p.log.Error("pages: searching a game", "game", q, "err", err)
			http.Error(w, "cannot search", http.StatusInternalServerError)
			return
		}
		if u, err := dice.ParseUUID(q); err == nil && p.cfg.Index != nil {
			emitters, err := p.cfg.Index.EmittersOf(ctx, u, MaxPlatforms)
			if err != nil {
				p.log.Error("pages: searching a player", "err", err)
				http.Error(w, "cannot search", http.StatusInternalServerError)
				return
			}
			switch {
			case len(emitters) == 1:
				to(playerPath(emitters[0], u))
				return
			case len(emitters) > 1:
				p.platforms(w, r, l, u, "", emitters)
				return
			}
		}
		if v.Problem == "" {
			v.Problem = text(l, "SearchNoGame", ltr(q))
		}
	}
	if v.Problem == "" {
		v.Problem = text(l, "SearchBad", ltr(q))
	}
	p.render(w, http.StatusNotFound, "search.tmpl", v)
}
