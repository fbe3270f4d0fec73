package publisher

import (
	"net/http"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// Instrument counts and times every request h serves, by the route that
// answered it (the http.ServeMux pattern, such as "GET /games/{id}", so the
// label's values are bounded; "none" for a request no pattern matched) and
// status: zarlog_http_requests_total{route,code} and
// zarlog_http_request_duration_seconds{route}. The pages, the read API and
// the admin listener are all served through it.
func Instrument(h http.Handler, reg prometheus.Registerer, listener string) (http.Handler, error) {
	requests := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name:        "zarlog_http_requests_total",
		Help:        "HTTP requests by route (the pattern that answered) and status.",
		ConstLabels: prometheus.Labels{"listener": listener},
	}, []string{"route", "code"})
	seconds := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:        "zarlog_http_request_duration_seconds",
		Help:        "Time to answer an HTTP request, by route.",
		ConstLabels: prometheus.Labels{"listener": listener},
		Buckets:     prometheus.ExponentialBuckets(100e-6, 4, 10),
	}, []string{"route"})
	if reg != nil {
		for _, c := range []prometheus.Collector{requests, seconds} {
			if err := reg.Register(c); err != nil {
				return nil, err
			}
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		sw := &statusWriter{ResponseWriter: w, code: http.StatusOK}
		h.ServeHTTP(sw, r)
		route := r.Pattern // set by the ServeMux that routed r
		if route == "" {
			route = "none"
		}
		requests.WithLabelValues(route, strconv.Itoa(sw.code)).Inc()
		seconds.WithLabelValues(route).Observe(time.Since(start).Seconds())
	}), nil
}

// statusWriter records the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	code  int
	wrote bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.code, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	w.wrote = true
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer
// (flushing, deadlines).
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
