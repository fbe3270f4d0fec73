package witness

import (
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// Content types of the responses.
const (
	contentTypeText = "text/plain; charset=utf-8"
	contentTypeSize = "text/x.tlog.size" // the body of a 409, per C2SP tlog-witness
)

// Handler returns the witness's HTTP API, with the witness's submission and
// monitoring prefixes both at the root (mount it under another prefix with
// http.StripPrefix):
//
//	POST /add-checkpoint         C2SP tlog-witness add-checkpoint
//	GET  /<origin hash>/checkpoint  the latest cosigned checkpoint of a log (404 if none)
//	GET  /healthz                200 "ok", or 503 once closed or after a failed state write
//
// add-checkpoint answers 200 with the cosignature line, 400 for a malformed
// request (ErrMalformed), 403 (ErrForbidden), 404 for an unknown origin
// (ErrUnknownLog), 409 with the witness's size as "<size>\n" and Content-Type
// text/x.tlog.size (ErrConflict), 413 for a body over MaxRequestSize, 422
// (ErrInconsistent), 500 if the state could not be stored. Other methods get
// 405, other paths 404. Error bodies are one line of text saying why.
func (w *Witness) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("POST /add-checkpoint", w.serveAddCheckpoint)
	mux.HandleFunc("GET /{origin}/checkpoint", w.serveCheckpoint)
	mux.HandleFunc("GET /healthz", w.serveHealth)
	return mux
}

func (w *Witness) serveAddCheckpoint(rw http.ResponseWriter, r *http.Request) {
	start := time.Now()
	code := w.addCheckpoint(rw, r)
	w.metrics.requests.WithLabelValues(strconv.Itoa(code)).Inc()
	w.metrics.duration.Observe(time.Since(start).Seconds())
}

// addCheckpoint answers one add-checkpoint request and returns the status.
func (w *Witness) addCheckpoint(rw http.ResponseWriter, r *http.Request) int {
	body, err := io.ReadAll(http.MaxBytesReader(rw, r.Body, int64(MaxRequestSize)))
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			return httpError(rw, http.StatusRequestEntityTooLarge, fmt.Errorf("request body larger than %d bytes", MaxRequestSize))
		}
		return httpError(rw, http.StatusBadRequest, fmt.Errorf("reading request: %w", err))
	}
	req, err := ParseRequest(body)
	if err != nil {
		return httpError(rw, http.StatusBadRequest, err)
	}
	line, err := w.AddCheckpoint(r.Context(), req.OldSize, req.Proof, req.Checkpoint)
	var conflict *ConflictError
	switch {
	case err == nil:
		rw.Header().Set("Content-Type", contentTypeText)
		rw.WriteHeader(http.StatusOK)
		rw.Write(line)
		return http.StatusOK
	case errors.As(err, &conflict):
		rw.Header().Set("Content-Type", contentTypeSize)
		rw.WriteHeader(http.StatusConflict)
		fmt.Fprintf(rw, "%d\n", conflict.Size)
		return http.StatusConflict
	case errors.Is(err, ErrMalformed):
		return httpError(rw, http.StatusBadRequest, err)
	case errors.Is(err, ErrUnknownLog):
		return httpError(rw, http.StatusNotFound, err)
	case errors.Is(err, ErrForbidden):
		return httpError(rw, http.StatusForbidden, err)
	case errors.Is(err, ErrInconsistent):
		return httpError(rw, http.StatusUnprocessableEntity, err)
	default:
		return httpError(rw, http.StatusInternalServerError, err)
	}
}

// httpError writes err as a one-line text response and returns code.
func httpError(rw http.ResponseWriter, code int, err error) int {
	rw.Header().Set("Content-Type", contentTypeText)
	rw.Header().Set("X-Content-Type-Options", "nosniff")
	rw.WriteHeader(code)
	fmt.Fprintln(rw, err.Error())
	return code
}

func (w *Witness) serveCheckpoint(rw http.ResponseWriter, r *http.Request) {
	l, ok := w.byHash[r.PathValue("origin")]
	if !ok {
		httpError(rw, http.StatusNotFound, fmt.Errorf("no log with origin hash %q", truncate(r.PathValue("origin"))))
		return
	}
	c := l.latest.Load()
	if c == nil {
		httpError(rw, http.StatusNotFound, fmt.Errorf("no checkpoint of %q cosigned yet", l.origin))
		return
	}
	rw.Header().Set("Content-Type", contentTypeText)
	rw.Header().Set("Cache-Control", "no-cache")
	rw.Write(c.note)
}

func (w *Witness) serveHealth(rw http.ResponseWriter, r *http.Request) {
	if !w.Healthy() {
		httpError(rw, http.StatusServiceUnavailable, errors.New("unhealthy: closed, or the last state write failed"))
		return
	}
	rw.Header().Set("Content-Type", contentTypeText)
	io.WriteString(rw, "ok\n")
}
