package publisher

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestParseHiddenNames reads the three kinds of entries and refuses
// anything else, naming the line.
func TestParseHiddenNames(t *testing.T) {
	ayse := labelUUID("player/Ayşe")
	h, err := ParseHiddenNames([]byte("# names to hide\n\nmallory\ntavla-east " + strings.ToUpper(ayse.String()) + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		emitter string
		seat    string
		hasSeat bool
		want    bool
	}{
		{"tavla-east", "player/Ayşe", true, true},
		{"tavla-east", "player/Mehmet", true, false},
		{"tavla-east", "player/Ayşe", false, false},
		{"mallory", "player/Mehmet", true, true},
		{"mallory", "", false, true},
		{"other", "player/Ayşe", true, false},
	} {
		if got := h.Hides(c.emitter, labelUUID(c.seat), c.hasSeat); got != c.want {
			t.Errorf("Hides(%s, %s, %v) = %v, want %v", c.emitter, c.seat, c.hasSeat, got, c.want)
		}
	}
	if all, err := ParseHiddenNames([]byte("*\n")); err != nil || !all.Hides("any", labelUUID("x"), true) || !all.Hides("any", labelUUID("x"), false) {
		t.Errorf("*: %v", err)
	}
	var none *HiddenNames
	if none.Hides("tavla-east", ayse, true) {
		t.Error("nil hides a name")
	}
	for _, bad := range []string{"Tavla-East", "tavla-east not-a-uuid", "tavla-east " + ayse.String() + " extra", "* tavla-east", "-lead"} {
		if _, err := ParseHiddenNames([]byte("# ok\n" + bad + "\n")); err == nil || !strings.Contains(err.Error(), "line 2") {
			t.Errorf("%q: %v, want an error naming line 2", bad, err)
		}
	}
}

func FuzzParseHiddenNames(f *testing.F) {
	f.Add([]byte("*\nmallory\ntavla-east 5830ee4d-958f-4449-98bc-13ad18d0ccc2\n# x\n"))
	f.Add([]byte("tavla-east\tNOT\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, err := ParseHiddenNames(b)
		if err == nil && h == nil {
			t.Fatal("no error and no names")
		}
		h.Hides("tavla-east", labelUUID("x"), true)
	})
}

// TestHiddenNamesOnPages: a name the operator hides is in no page's words:
// not in the game page's players, rolls and result, not in the lists, not
// in the heading of the player's page, which says "A player"; the other
// player's name still shows. (The game page's Python checker still holds
// the logged settings, which it must hash.)
func TestHiddenNamesOnPages(t *testing.T) {
	f := testFixture(t)
	hidden, err := ParseHiddenNames([]byte(testEmitter + " " + f.players["Ayşe"].String() + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPages(Config{Games: f.games, Index: f.index, LogKey: f.vkey, HiddenNames: hidden})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	p.Register(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, path := range []string{"/", "/games/" + f.played[0], "/players/" + testEmitter + "/" + f.players["Ayşe"].String(), "/players/" + testEmitter + "/" + f.players["Mehmet"].String()} {
		resp, body := get(t, srv.URL+path)
		// The Python checker holds the logged settings, byte for byte, to
		// recompute the commitment from them: the log's bytes, as the proof
		// file holds them (docs/PRIVACY.md).
		if i := strings.Index(body, `<pre class="program"`); i >= 0 {
			j := strings.Index(body[i:], "</pre>")
			body = body[:i] + body[i+j:]
		}
		if resp.StatusCode != http.StatusOK || strings.Contains(body, "Ayşe") {
			t.Errorf("%s: %d, shows the hidden name: %v", path, resp.StatusCode, strings.Contains(body, "Ayşe"))
		}
		if path == "/games/"+f.played[0] && !strings.Contains(body, "Mehmet") {
			t.Errorf("%s: the other player's name is hidden too", path)
		}
	}
	if _, body := get(t, srv.URL+"/players/"+testEmitter+"/"+f.players["Ayşe"].String()); !strings.Contains(body, "<h1>\u2068A player\u2069: the dice of every game</h1>") {
		t.Error("the hidden player's page does not say \"A player\" in its heading")
	}
}
