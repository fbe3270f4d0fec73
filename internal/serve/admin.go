package serve

// The admin listener: what an operator reads while the service runs, and
// nobody else. It listens on its own address (loopback by default) and
// every request must carry the admin token (DIR/admin.token, created on the
// first run with mode 0600) as "Authorization: Bearer <token>".
//
//	GET /rejected?emitter=E&since=T&from=S&limit=N   the rejected store's records (JSON)
//	GET /rejected/summary                            its counters, by code and by emitter (JSON)
//	GET /metrics                                     Prometheus (as on the public listener)
//	GET /healthz, /readyz                            as on the public listener
//	GET /debug/pprof/...                             the Go runtime's profiles (net/http/pprof):
//	                                                 heap, goroutine, allocs, profile?seconds=N
//	                                                 (N at most the listener's write timeout), trace

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/zarlog/zarlog/ledger"
)

// DefaultAdminAddr is the admin listener's default address: loopback only,
// on a port that none of zarlog's other listeners use by default (serve's
// HTTP 8080, mirror's 8081, witness's 8090), so they run side by side.
const DefaultAdminAddr = "127.0.0.1:9081"

// MaxRejectedPage is the most records one /rejected request returns.
const MaxRejectedPage = 1000

// A RejectedRecord is one record of the rejected store as the admin API and
// `zarlog rejected --json` show it.
type RejectedRecord struct {
	Seq     uint64    `json:"seq"`
	Time    time.Time `json:"time"`
	Emitter string    `json:"emitter"`
	ID      string    `json:"id,omitempty"`
	MsgID   string    `json:"msg_id,omitempty"`
	Size    int       `json:"size"`
	SHA256  string    `json:"sha256"`
	Code    string    `json:"code"`
	Field   string    `json:"field,omitempty"`
	Reason  string    `json:"reason"`
	// Data is the input's bytes as stored (its first ledger.MaxRejectedData).
	Data []byte `json:"data"`
}

// A RejectedPage is the answer of GET /rejected.
type RejectedPage struct {
	Records []RejectedRecord `json:"records"`
	// Next is the from of the next page; absent at the end of the store.
	Next *uint64 `json:"next,omitempty"`
}

// A RejectedSummary is the answer of GET /rejected/summary.
type RejectedSummary struct {
	Stored  uint64            `json:"stored"`
	Bytes   uint64            `json:"bytes"`
	Dropped uint64            `json:"dropped"`
	Codes   map[string]uint64 `json:"codes"`
	// Emitters are the quota namespaces; "" is every input whose emitter
	// the log has no key for.
	Emitters map[string]EmitterRejected `json:"emitters"`
}

// EmitterRejected is one namespace of RejectedSummary.
type EmitterRejected struct {
	Stored    uint64     `json:"stored"`
	Bytes     uint64     `json:"bytes"`
	OverQuota uint64     `json:"over_quota"`
	FirstID   string     `json:"first_over_quota_id,omitempty"`
	LastID    string     `json:"last_over_quota_id,omitempty"`
	FirstTime *time.Time `json:"first_over_quota_time,omitempty"`
	LastTime  *time.Time `json:"last_over_quota_time,omitempty"`
}

func summaryOf(s ledger.RejectedSummary) RejectedSummary {
	out := RejectedSummary{Stored: s.Next - s.First, Bytes: s.Bytes, Dropped: s.Dropped, Codes: map[string]uint64{}, Emitters: map[string]EmitterRejected{}}
	for c, n := range s.Counts {
		out.Codes[string(c)] = n
	}
	for name, e := range s.Emitters {
		r := EmitterRejected{Stored: e.Stored, Bytes: e.Bytes, OverQuota: e.OverQuota, FirstID: e.FirstID, LastID: e.LastID}
		if !e.FirstTime.IsZero() {
			r.FirstTime, r.LastTime = &e.FirstTime, &e.LastTime
		}
		out.Emitters[name] = r
	}
	return out
}

func recordOf(r ledger.Rejection) RejectedRecord {
	return RejectedRecord{Seq: r.Seq, Time: r.Time.UTC(), Emitter: r.Emitter, ID: r.ID, MsgID: r.MsgID, Size: r.Size,
		SHA256: hex.EncodeToString(r.Hash[:]), Code: string(r.Code), Field: r.Field, Reason: r.Reason, Data: r.Data}
}

// AdminHandler returns the admin listener's handler over ledger l: the
// routes of the file's doc, each refused with 401 without the token.
func AdminHandler(l *ledger.Ledger, token string, reg prometheus.Gatherer, health, ready func(r *http.Request) error) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /rejected", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		emitter, hasEmitter := q.Get("emitter"), q.Has("emitter")
		var since time.Time
		if v := q.Get("since"); v != "" {
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				http.Error(w, "since: not an RFC 3339 time: "+v, http.StatusBadRequest)
				return
			}
			since = t
		}
		from, err := uintParam(q.Get("from"), 0)
		if err != nil {
			http.Error(w, "from: "+err.Error(), http.StatusBadRequest)
			return
		}
		limit, err := uintParam(q.Get("limit"), 100)
		if err != nil || limit == 0 || limit > MaxRejectedPage {
			http.Error(w, fmt.Sprintf("limit: want 1…%d", MaxRejectedPage), http.StatusBadRequest)
			return
		}
		page := RejectedPage{Records: []RejectedRecord{}}
		// Scan in chunks, filtering, until the page is full or the store ends.
		for uint64(len(page.Records)) < limit {
			recs, err := l.Rejected(r.Context(), from, 256)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			if len(recs) == 0 {
				break
			}
			for _, rec := range recs {
				from = rec.Seq + 1
				if hasEmitter && rec.Emitter != emitter || rec.Time.Before(since) {
					continue
				}
				page.Records = append(page.Records, recordOf(rec))
				if uint64(len(page.Records)) == limit {
					break
				}
			}
			if len(recs) < 256 && uint64(len(page.Records)) < limit {
				break
			}
		}
		if sum, err := l.RejectedSummary(); err == nil && from < sum.Next {
			page.Next = &from
		}
		writeJSON(w, page)
	})
	mux.HandleFunc("GET /rejected/summary", func(w http.ResponseWriter, r *http.Request) {
		s, err := l.RejectedSummary()
		if err != nil {
			http.Error(w, err.Error(), http.StatusServiceUnavailable)
			return
		}
		writeJSON(w, summaryOf(s))
	})
	if reg != nil {
		mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	}
	probe := func(check func(*http.Request) error) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			if check != nil {
				if err := check(r); err != nil {
					http.Error(w, "unhealthy: "+err.Error(), http.StatusServiceUnavailable)
					return
				}
			}
			w.Write([]byte("ok\n"))
		}
	}
	mux.HandleFunc("GET /healthz", probe(health))
	mux.HandleFunc("GET /readyz", probe(ready))
	// The runtime's profiles, as an operator expects to find them on a
	// Go service's private listener (behind the token like the rest).
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
	want := []byte("Bearer " + token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "no-store")
		if subtle.ConstantTimeCompare([]byte(r.Header.Get("Authorization")), want) != 1 {
			w.Header().Set("WWW-Authenticate", `Bearer realm="zarlog admin"`)
			http.Error(w, "the admin API needs the admin token: Authorization: Bearer <DIR/admin.token>", http.StatusUnauthorized)
			return
		}
		mux.ServeHTTP(w, r)
	})
}

func uintParam(v string, def uint64) (uint64, error) {
	if v == "" {
		return def, nil
	}
	return strconv.ParseUint(v, 10, 64)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	b, err := json.Marshal(v)
	if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Write(append(b, '\n'))
}

// loadOrCreateToken returns the admin token in path, creating it (32
// random bytes in hex, mode 0600) on the first run. A token file readable
// by others is refused.
func loadOrCreateToken(path string, rnd func([]byte) error) (token string, created bool, err error) {
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		var b [32]byte
		if err := rnd(b[:]); err != nil {
			return "", false, fmt.Errorf("serve: drawing the admin token: %w", err)
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			return "", false, fmt.Errorf("serve: %w", err)
		}
		if err := writeKey(path, hex.EncodeToString(b[:])); err != nil {
			return "", false, err
		}
		created = true
	}
	b, err := ReadSecretFile(path)
	if err != nil {
		return "", false, fmt.Errorf("serve: the admin token: %w", err)
	}
	token = strings.TrimSpace(string(b))
	if len(token) < 16 {
		return "", false, fmt.Errorf("serve: the admin token in %s is shorter than 16 characters", path)
	}
	return token, created, nil
}

func randRead(b []byte) error { _, err := rand.Read(b); return err }
