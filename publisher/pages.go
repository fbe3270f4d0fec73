package publisher

// This file serves the audit pages (docs/PAGES.md): a game's page with its
// seal, roll table, statement and in-browser verification, the proof file,
// the per-game Python checker, the single-file offline auditor and the
// static assets they load. The handlers read through the small GameSource
// and StatsSource interfaces, so the publisher's HTTP server mounts them on
// its own mux with Register.

import (
	"bytes"
	"context"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"log/slog"
	"net/http"
	"regexp"
	"strings"

	"github.com/zarlog/zarlog/events"
	"github.com/zarlog/zarlog/verifier"
)

//go:embed web
var webFS embed.FS

// ErrNoGame is returned by a GameSource for a game the log does not hold.
var ErrNoGame = errors.New("no such game")

// A GameStatus says how far a game has come, as far as its page is
// concerned.
type GameStatus int

// Game statuses.
const (
	// GameInPlay: the game is logged but has no proof bundle yet: it is
	// being played, or it ended and its seed is not revealed yet, or its
	// final event is not yet covered by a signed checkpoint. Its page
	// shows the seal and the events logged so far.
	GameInPlay GameStatus = iota + 1
	// GameFinished: the game's proof bundle is published.
	GameFinished
)

// A Game is what a GameSource knows about one game.
type Game struct {
	Status GameStatus
	// Bundle is the game's proof bundle (docs/FORMATS.md §3) when Status
	// is GameFinished; nil otherwise. It is the single source of truth of
	// the game's page: the page is drawn from it and the browser checks
	// it.
	Bundle []byte
	// Events are the game's logged events so far (leaves: canonical JSON,
	// seq 0 first) when Status is GameInPlay; nil otherwise.
	Events [][]byte
}

// A GameSource gives the pages the games of the log. Implementations must
// be safe for concurrent use; the pages never retry.
type GameSource interface {
	// Game returns the game whose id (the events' "game" member) is id.
	// It returns an error wrapping ErrNoGame if the log has no event of
	// that game; any other error is served as 500.
	Game(ctx context.Context, id string) (Game, error)
}

// Config configures the pages. Games is required; every other field may be
// zero.
type Config struct {
	// Games gives the games; required.
	Games GameSource
	// Index finds the finished games for the landing page, the search and
	// the player pages (a *Store); nil: the landing page lists no games,
	// the search finds games by id only, and /players/ is 404.
	Index GameIndex
	// Stats gives the fairness counters of the whole log for /stats; nil
	// serves /stats with a page that says no statistics are available.
	Stats StatsSource
	// EmitterKeys are the game servers' (emitters') verifier keys. The game
	// pages hand them to the browser, which then checks the signatures of
	// every game's binding events too; nil: the verdict says the
	// platform's signatures were not checked on the page.
	EmitterKeys []string
	// EmitterKeysFunc, if not nil, gives the emitters' keys instead of
	// EmitterKeys, page by page (a mirror's, which follow its log's).
	EmitterKeysFunc func() []string
	// Witness, if not nil, is the log's witnessing: a game page's statement
	// is made with its policy (Policy), as the browser's check is, which
	// fetches it from /witness-policy. Nil: the statement is made without
	// one.
	Witness WitnessReader
	// LogKey is the log's C2SP signed-note verifier key (vkey). The pages
	// show it, the browser verifier checks the checkpoint's signature with
	// it (the field is editable), and the offline auditor is built with it.
	// Empty: the browser verifier asks the user for it, and says the
	// signature was not checked when none is given.
	LogKey string
	// Origin is the log's origin line, shown on the pages; empty: taken
	// from LogKey's name.
	Origin string
	// HiddenNames are the players' display names the pages do not show
	// (ParseHiddenNames; docs/PRIVACY.md): they say "Player 1" instead. Nil
	// shows every name a platform gave.
	HiddenNames *HiddenNames
	// Logger receives errors from the sources; nil discards them.
	Logger *slog.Logger
}

// Pages serves the audit pages. Create it with NewPages; it is safe for
// concurrent use and holds no state beyond its Config and parsed templates.
type Pages struct {
	cfg      Config
	openings []OpeningFacts // what /stats says of the openings, from the rules engine
	tmpl     *template.Template
	auditor  []byte
	log      *slog.Logger
}

// NewPages returns the pages for cfg. It fails if cfg.Games is nil or the
// embedded templates do not parse (a broken build).
func NewPages(cfg Config) (*Pages, error) {
	if cfg.Games == nil {
		return nil, errors.New("publisher: pages: Config.Games is nil")
	}
	if cfg.Origin == "" && cfg.LogKey != "" {
		cfg.Origin, _, _ = strings.Cut(cfg.LogKey, "+")
	}
	t, err := template.New("").Funcs(templateFuncs).ParseFS(webFS, "web/*.tmpl")
	if err != nil {
		return nil, fmt.Errorf("publisher: pages: parsing templates: %w", err)
	}
	aud, err := Auditor(cfg.LogKey)
	if err != nil {
		return nil, fmt.Errorf("publisher: pages: %w", err)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	openings, err := allOpeningFacts()
	if err != nil {
		return nil, fmt.Errorf("publisher: pages: %w", err)
	}
	return &Pages{cfg: cfg, tmpl: t, auditor: aud, log: log, openings: openings}, nil
}

// Register mounts the pages on mux:
//
//	GET /                       the landing page: what the log is, a search box, the last games
//	GET /search?q=              a seal code, a game id or a player id
//	GET /players/{emitter}/{id} a player's games and dice on one platform (tavlarena-v1 seat ids)
//	GET /players/{id}           to that page, or the platforms that logged the id
//	GET /players/{emitter}/{id}/export every bundle of the player on that platform, one file (JSON lines)
//	GET /games/{id}             the game's audit page (?lang=en|tr|ar)
//	GET /games/{id}/proof.json  its proof bundle (download)
//	GET /games/{id}/check.py    the Python program that checks its dice
//	GET /auditor.html           the single-file offline auditor
//	GET /stats                  fairness statistics of the whole log
//	GET /static/...             the scripts and style the pages load
func (p *Pages) Register(mux *http.ServeMux) {
	mux.HandleFunc("GET /{$}", p.landing)
	mux.HandleFunc("GET /search", p.search)
	mux.HandleFunc("GET /players/{emitter}/{id}", p.playerPage)
	mux.HandleFunc("GET /players/{id}", p.playerByID)
	mux.HandleFunc("GET /players/{emitter}/{id}/export", p.playerExport)
	mux.HandleFunc("GET /games/{id}", p.gamePage)
	mux.HandleFunc("GET /games/{id}/proof.json", p.proof)
	mux.HandleFunc("GET /games/{id}/check.py", p.checkPy)
	mux.HandleFunc("GET /auditor.html", p.auditorFile)
	mux.HandleFunc("GET /stats", p.statsPage)
	mux.HandleFunc("GET /static/{file}", p.static)
}

// pageCSP is the Content-Security-Policy of the served pages: scripts and
// styles only from this origin, connections only to it (the proof file),
// forms only to it (the search), no inline script, no event handler
// attributes.
const pageCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"

func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", pageCSP)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
}

var staticTypes = map[string]string{
	"verify.js": "text/javascript; charset=utf-8",
	"ui.js":     "text/javascript; charset=utf-8",
	"game.js":   "text/javascript; charset=utf-8",
	"stats.js":  "text/javascript; charset=utf-8",
	"style.css": "text/css; charset=utf-8",
}

func (p *Pages) static(w http.ResponseWriter, r *http.Request) {
	name := r.PathValue("file")
	ct, ok := staticTypes[name]
	if !ok {
		http.NotFound(w, r)
		return
	}
	b, err := webFS.ReadFile("web/" + name)
	if err != nil {
		http.NotFound(w, r)
		return
	}
	securityHeaders(w.Header())
	w.Header().Set("Content-Type", ct)
	w.Header().Set("Cache-Control", "public, max-age=300")
	w.Write(b)
}

// game fetches a game for a handler; it writes the error response and
// returns false when there is none.
func (p *Pages) game(w http.ResponseWriter, r *http.Request, l verifier.Lang) (string, Game, bool) {
	id := r.PathValue("id")
	if !events.ValidGameID(id) {
		p.notFound(w, r, l)
		return "", Game{}, false
	}
	g, err := p.cfg.Games.Game(r.Context(), id)
	switch {
	case errors.Is(err, ErrNoGame):
		p.notFound(w, r, l)
		return "", Game{}, false
	case err != nil:
		p.log.Error("pages: reading a game", "game", id, "err", err)
		http.Error(w, "cannot read the game", http.StatusInternalServerError)
		return "", Game{}, false
	case g.Status == GameFinished && len(g.Bundle) == 0, g.Status != GameFinished && g.Status != GameInPlay:
		p.log.Error("pages: the game source returned an inconsistent game", "game", id, "status", int(g.Status))
		http.Error(w, "cannot read the game", http.StatusInternalServerError)
		return "", Game{}, false
	}
	return id, g, true
}

func (p *Pages) notFound(w http.ResponseWriter, r *http.Request, l verifier.Lang) {
	p.render(w, http.StatusNotFound, "notfound.tmpl", p.base(r, l, "NotFoundTitle"))
}

func (p *Pages) proof(w http.ResponseWriter, r *http.Request) {
	id, g, ok := p.game(w, r, English)
	if !ok {
		return
	}
	if g.Status != GameFinished {
		http.Error(w, "this game has no proof yet: its seed is revealed when it ends", http.StatusNotFound)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Disposition", fmt.Sprintf(`attachment; filename="zarlog-%s.json"`, id))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", CacheBundle)
	w.Write(g.Bundle)
}

func (p *Pages) checkPy(w http.ResponseWriter, r *http.Request) {
	_, g, ok := p.game(w, r, English)
	if !ok {
		return
	}
	if g.Status != GameFinished {
		http.Error(w, "this game has no proof yet: its seed is revealed when it ends", http.StatusNotFound)
		return
	}
	ev, err := verifier.Parse(g.Bundle)
	if err != nil {
		p.log.Error("pages: the game's bundle does not parse", "game", r.PathValue("id"), "err", err)
		http.Error(w, "the proof file of this game cannot be read", http.StatusInternalServerError)
		return
	}
	prog, err := PythonChecker(ev)
	if err != nil {
		http.Error(w, "no checker for this game", http.StatusInternalServerError)
		return
	}
	h := w.Header()
	h.Set("Content-Type", "text/x-python; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.Write(prog)
}

func (p *Pages) auditorFile(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", auditorCSP(p.auditor))
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	w.Write(p.auditor)
}

// render executes a template into a buffer first, so that a template error
// is a clean 500 and not half a page.
func (p *Pages) render(w http.ResponseWriter, status int, name string, data any) {
	var b bytes.Buffer
	if err := p.tmpl.ExecuteTemplate(&b, name, data); err != nil {
		p.log.Error("pages: rendering", "template", name, "err", err)
		http.Error(w, "cannot render the page", http.StatusInternalServerError)
		return
	}
	securityHeaders(w.Header())
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b.Bytes())
}

// base is what every page template gets.
type base struct {
	Lang   verifier.Lang
	Dir    string // "rtl" for Arabic
	Title  string
	T      func(key string, args ...any) string
	Path   string // the page's path, for the language links
	Query  string // extra query parameters kept by the language links
	Origin string
	LogKey string
	// OriginLTR is Origin in a left-to-right isolate (U+2066 … U+2069),
	// for use inside a sentence of any direction.
	OriginLTR string
	Langs     []langLink
	Messages  string // the verifier's messages in Lang, as JSON, for the scripts
}

type langLink struct {
	Lang    verifier.Lang
	Name    string
	Href    string
	Current bool
}

var langNames = map[verifier.Lang]string{English: "English", Turkish: "Türkçe", Arabic: "العربية"}

func (p *Pages) base(r *http.Request, l verifier.Lang, title string, args ...any) base {
	b := base{Lang: l, Dir: "ltr", Path: r.URL.Path, Origin: p.cfg.Origin, LogKey: p.cfg.LogKey, OriginLTR: ltr(p.cfg.Origin),
		T: func(key string, args ...any) string { return text(l, key, args...) }}
	if l == Arabic {
		b.Dir = "rtl"
	}
	b.Title = text(l, title, args...)
	for _, x := range verifier.Langs() {
		b.Langs = append(b.Langs, langLink{Lang: x, Name: langNames[x], Href: r.URL.Path + "?lang=" + string(x), Current: x == l})
	}
	b.Messages = messagesJSON(l)
	return b
}

// messagesJSON returns the verifier's messages and the browser's own in
// language l as a JSON object of id → [text], the form ui.js renders.
func messagesJSON(l verifier.Lang) string {
	out := map[string][1]string{}
	for _, t := range scriptTexts() {
		out[t.Name()] = [1]string{t.In(l)}
	}
	b, err := json.Marshal(out)
	if err != nil {
		panic("publisher: encoding the messages: " + err.Error()) // strings only
	}
	return string(b)
}

func langIndex(l verifier.Lang) int {
	switch l {
	case Turkish:
		return 1
	case Arabic:
		return 2
	}
	return 0
}

// The languages, under shorter names.
const (
	English = verifier.English
	Turkish = verifier.Turkish
	Arabic  = verifier.Arabic
)

var templateFuncs = template.FuncMap{
	"add":    func(a, b int) int { return a + b },
	"ltr":    ltr,
	"idents": idents,
}

// identRE matches what a sentence of the verifier names but does not say
// in words: a flag (--log-key), a field path (log.entries[3], rolls[2]),
// a scheme (tavlarena-v1), a format (dice-proof-v1) and the verifier's
// name (zarlog-verify, which as code never breaks at its hyphen).
var identRE = regexp.MustCompile(`--[a-z][a-z-]*|\blog\.entries\[\d+\]|\brolls\[\d+\]|\b[a-z]+(?:-[a-z]+)*-v1\b|\bzarlog-verify\b`)

// idents writes s as HTML with every identifier of identRE in a
// left-to-right code element, so that in an Arabic sentence
// "--expected-commitment" stays as it is typed instead of turning into
// "expected-commitment--".
//
// Every dice pair, score and percentage is put in a left-to-right isolate
// too, a pair kept on one line (keepNumbers): the verifier's sentences name
// rolls ("the record says 3-4").
func idents(s string) template.HTML {
	s = keepNumbers(s, true)
	var b strings.Builder
	last := 0
	for _, m := range identRE.FindAllStringIndex(s, -1) {
		b.WriteString(template.HTMLEscapeString(s[last:m[0]]))
		b.WriteString(`<code class="ident" dir="ltr">` + template.HTMLEscapeString(s[m[0]:m[1]]) + `</code>`)
		last = m[1]
	}
	b.WriteString(template.HTMLEscapeString(s[last:]))
	return template.HTML(b.String())
}

// ltr puts s in a left-to-right isolate (LRI … PDI), so that a key, a code
// or a number inside a sentence reads the same in a right-to-left
// language: the isolate keeps its characters in their order and keeps the
// sentence's punctuation out of it.
func ltr(s string) string {
	if s == "" {
		return ""
	}
	return "\u2066" + s + "\u2069"
}
