package dashboard

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"
)

//go:embed assets/index.html assets/app.js assets/style.css
var assets embed.FS

// MaxStreams bounds the event streams open at once on one page; one more is
// answered 503 (nothing unauthenticated costs memory beyond this bound).
const MaxStreams = 16

// minInterval is the least time between two events of one stream: a fast
// run's rounds are coalesced, the latest state always sent.
const minInterval = 200 * time.Millisecond

// securityHeaders are set on every answer: no other origin may be loaded
// (the page's script and style sheet are its own, embedded), the page is
// never framed, nothing is cached.
func securityHeaders(h http.Header) {
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
}

// handler serves b's page: / (index.html), /app.js, /style.css, /state
// (the state as JSON) and /events (server-sent events: the state at once,
// then at every change, at most every minInterval; when the board is closed,
// the last state and an "end" event).
func handler(b *board) http.Handler {
	streams := make(chan struct{}, MaxStreams)
	files := map[string]string{"/": "assets/index.html", "/app.js": "assets/app.js", "/style.css": "assets/style.css"}
	types := map[string]string{"/": "text/html; charset=utf-8", "/app.js": "text/javascript; charset=utf-8", "/style.css": "text/css; charset=utf-8"}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		securityHeaders(w.Header())
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		switch p := r.URL.Path; p {
		case "/state":
			data, _ := b.snapshot()
			w.Header().Set("Content-Type", "application/json")
			w.Write(data)
		case "/events":
			select {
			case streams <- struct{}{}:
				defer func() { <-streams }()
			default:
				http.Error(w, "too many open event streams", http.StatusServiceUnavailable)
				return
			}
			stream(w, r, b)
		default:
			name, ok := files[p]
			if !ok {
				http.NotFound(w, r)
				return
			}
			data, err := assets.ReadFile(name)
			if err != nil {
				http.Error(w, err.Error(), http.StatusInternalServerError)
				return
			}
			w.Header().Set("Content-Type", types[p])
			w.Write(data)
		}
	})
}

// stream sends the state as server-sent events until the client goes away
// or the board is closed.
func stream(w http.ResponseWriter, r *http.Request, b *board) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	send := func() (<-chan struct{}, bool) {
		data, changed := b.snapshot()
		_, err := fmt.Fprintf(w, "event: state\ndata: %s\n\n", data)
		fl.Flush()
		return changed, err == nil
	}
	end := func() {
		send()
		fmt.Fprint(w, "event: end\ndata: {}\n\n")
		fl.Flush()
	}
	for {
		changed, ok := send()
		if !ok {
			return
		}
		select {
		case <-changed:
		case <-b.closed:
			end()
			return
		case <-r.Context().Done():
			return
		}
		select {
		case <-time.After(minInterval):
		case <-b.closed:
			end()
			return
		case <-r.Context().Done():
			return
		}
	}
}

// Page is a role's page (*ServerBoard or *ShufflerBoard).
type Page interface {
	Handler() http.Handler
	Close()
}

// Serve serves page on ln until ctx is done; then the page is closed (its
// event streams send the last state and end) and the server shut down. The
// listener is the caller's, so ":0" can be resolved before serving.
func Serve(ctx context.Context, ln net.Listener, page Page) error {
	srv := &http.Server{Handler: page.Handler(), ReadHeaderTimeout: 5 * time.Second, MaxHeaderBytes: 16 << 10,
		IdleTimeout: time.Minute}
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		<-ctx.Done()
		page.Close()
		sctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		srv.Shutdown(sctx)
	}()
	err := srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) {
		<-stopped
		return nil
	}
	return err
}

// CheckOperatorAddr refuses an address a shuffler's operator-only endpoint
// (its page, its Prometheus metrics: both carry the dummy count) would
// listen on beyond loopback, unless exposed acknowledges it (flag names the
// flag being checked, ack the acknowledging flag, for the error). Loopback
// is 127.0.0.0/8, ::1 or "localhost"; an empty host (":9090") listens on
// every interface and is refused like any other.
func CheckOperatorAddr(addr, flag, ack string, exposed bool) error {
	if addr == "" || exposed {
		return nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("%s %q: %w", flag, addr, err)
	}
	if IsLoopback(host) {
		return nil
	}
	where := host
	if where == "" {
		where = "every interface"
	}
	return fmt.Errorf("%s %s listens on %s, beyond loopback: the shuffler's dummy count is for its operator only (a published dummy count breaks privacy: docs/proofs/dummy-reports.md); bind 127.0.0.1, or add %s if only the shuffler's operator can reach that address", flag, addr, where, ack)
}

// IsLoopback reports whether host (of host:port) is a loopback address.
func IsLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
