package api

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base32"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"regexp"
	"runtime/debug"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/go-chi/httprate"
	"github.com/google/uuid"

	"backpressure/internal/game"
)

// ctxKey types the request context's keys; each has a typed accessor.
type ctxKey int

const (
	keyRequest ctxKey = iota
	keyPlayer
)

// requestInfo is what the outer middleware learns about a request as it
// passes through the inner ones (the player, once authenticated), so the
// access log can name it.
type requestInfo struct {
	id     string
	logger *slog.Logger
	client string // set by noteClient
	player uuid.UUID
}

func infoFrom(ctx context.Context) *requestInfo {
	info, _ := ctx.Value(keyRequest).(*requestInfo)
	return info
}

// requestID returns the request's id, "" outside a request.
func requestID(ctx context.Context) string {
	if info := infoFrom(ctx); info != nil {
		return info.id
	}
	return ""
}

// loggerFrom returns the request's logger (with its request id).
func loggerFrom(ctx context.Context) *slog.Logger {
	if info := infoFrom(ctx); info != nil && info.logger != nil {
		return info.logger
	}
	return slog.New(slog.DiscardHandler)
}

func (s *server) logger(ctx context.Context) *slog.Logger {
	if info := infoFrom(ctx); info != nil && info.logger != nil {
		return info.logger
	}
	return s.log
}

// playerFrom returns the authenticated player, if any.
func playerFrom(ctx context.Context) (game.Player, bool) {
	p, ok := ctx.Value(keyPlayer).(game.Player)
	return p, ok
}

// validRequestID accepts a client's X-Request-Id only if it is short and
// plain, so that it cannot forge log lines or carry anything large.
var validRequestID = regexp.MustCompile(`^[A-Za-z0-9._-]{1,64}$`)

var idEncoding = base32.StdEncoding.WithPadding(base32.NoPadding)

func newRequestID() string {
	var b [10]byte
	_, _ = rand.Read(b[:])
	return strings.ToLower(idEncoding.EncodeToString(b[:]))
}

// observe is the outermost middleware: it assigns the request id, recovers
// panics, and records every request in the access log and the metrics by
// route pattern and status. It never logs headers, query strings or bodies,
// so tokens cannot leak into logs.
func (s *server) observe(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		id := r.Header.Get("X-Request-Id")
		if !validRequestID.MatchString(id) {
			id = newRequestID()
		}
		accessLog := s.log.With("request_id", id)
		info := &requestInfo{id: id, logger: accessLog}
		w.Header().Set("X-Request-Id", id)
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		r = r.WithContext(context.WithValue(r.Context(), keyRequest, info))
		defer func() {
			rec := recover()
			if rec == http.ErrAbortHandler {
				// A response cut off on purpose (its client stopped
				// reading): logged like any other, then passed on so
				// that the server closes the connection.
				defer panic(rec)
			} else if rec != nil {
				info.logger.ErrorContext(r.Context(), "panic", "panic", fmt.Sprint(rec), "stack", string(debug.Stack()))
				if ww.Status() == 0 {
					s.writeError(ww, r, fmt.Errorf("panic: %v", rec))
				}
			}
			status := ww.Status()
			if status == 0 {
				status = http.StatusOK
			}
			route := chi.RouteContext(r.Context()).RoutePattern()
			if route == "" || (status == http.StatusNotFound && strings.HasSuffix(route, "/*")) {
				route = "unmatched"
			}
			elapsed := time.Since(start)
			s.metrics.observeRequest(r.Method, route, status, elapsed)
			attrs := []any{
				slog.String("method", r.Method),
				slog.String("route", route),
				slog.String("path", r.URL.Path),
				slog.Int("status", status),
				slog.Int("bytes", ww.BytesWritten()),
				slog.Float64("duration_ms", float64(elapsed.Microseconds())/1000),
				slog.String("client", info.client),
			}
			if info.player != uuid.Nil {
				attrs = append(attrs, slog.String("player_id", info.player.String()))
			}
			level := slog.LevelInfo
			if status >= 500 {
				level = slog.LevelWarn
			}
			// accessLog, not info.logger: that one has player_id already.
			accessLog.Log(r.Context(), level, "request", attrs...)
		}()
		next.ServeHTTP(ww, r)
	})
}

// clientIP is the client's address as decided by the ClientIPFrom*
// middleware (the TCP peer unless a trusted proxy says otherwise).
func clientIP(r *http.Request) string {
	if ip := middleware.GetClientIP(r.Context()); ip != "" {
		return ip
	}
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		return r.RemoteAddr
	}
	return host
}

// clientGroup is the address every per-address limit counts a request
// against: the client's IPv4 address, or the /64 network of its IPv6
// address, which one subscriber (one home, one server) usually holds whole,
// so that walking through its addresses buys no more of any limit.
func clientGroup(r *http.Request) string { return addressGroup(clientIP(r)) }

// addressGroup is clientGroup of an address as text; text that is not an
// address stands for itself.
func addressGroup(addr string) string {
	ip, err := netip.ParseAddr(addr)
	if err != nil {
		return addr
	}
	ip = ip.Unmap().WithZone("")
	if ip.Is4() {
		return ip.String()
	}
	return netip.PrefixFrom(ip, 64).Masked().String()
}

// noteClient records the client address for the access log.
func noteClient(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if info := infoFrom(r.Context()); info != nil {
			info.client = clientIP(r)
		}
		next.ServeHTTP(w, r)
	})
}

// clientIPMiddleware decides the client address once per request.
func (s *server) clientIPMiddleware() func(http.Handler) http.Handler {
	if len(s.cfg.TrustedProxies) > 0 {
		return middleware.ClientIPFromXFF(s.cfg.TrustedProxies...)
	}
	return middleware.ClientIPFromRemoteAddr
}

// authenticate reads an optional bearer token. No header: the request goes
// on anonymously. A header that is malformed or names no player: 401, even
// on public routes, so that a client never silently loses its identity.
func (s *server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := r.Header.Get("Authorization")
		if h == "" {
			next.ServeHTTP(w, r)
			return
		}
		scheme, token, ok := strings.Cut(h, " ")
		token = strings.TrimSpace(token)
		if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
			s.writeError(w, r, errorf(game.EUNAUTHORIZED, "use the header Authorization: Bearer <token>"))
			return
		}
		hash := game.HashToken(token)
		var p game.Player
		if s.adminHash != nil && subtle.ConstantTimeCompare(hash, s.adminHash) == 1 {
			p = configAdmin
		} else {
			var err error
			p, err = s.store.PlayerByTokenHash(r.Context(), hash)
			if game.ErrorCode(err) == game.ENOTFOUND {
				err = errorf(game.EUNAUTHORIZED, "the token is not valid")
			}
			if err != nil {
				s.writeError(w, r, err)
				return
			}
		}
		if info := infoFrom(r.Context()); info != nil {
			info.player = p.ID
			info.logger = info.logger.With("player_id", p.ID.String())
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), keyPlayer, p)))
	})
}

// requirePlayer answers 401 to anonymous requests.
func (s *server) requirePlayer(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, ok := playerFrom(r.Context()); !ok {
			s.writeError(w, r, errorf(game.EUNAUTHORIZED, "this needs a player token: create a player with POST /v1/players"))
			return
		}
		next.ServeHTTP(w, r)
	})
}

// requireRole answers 403 to players without one of the roles (admins
// always pass).
func (s *server) requireRole(roles ...game.Role) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			p, ok := playerFrom(r.Context())
			if !ok {
				s.writeError(w, r, errorf(game.EUNAUTHORIZED, "this needs a player token"))
				return
			}
			allowed := p.Role == game.RoleAdmin
			for _, role := range roles {
				allowed = allowed || p.Role == role
			}
			if !allowed {
				s.writeError(w, r, errorf(game.EFORBIDDEN, "this needs the %s role", roles[0]))
				return
			}
			next.ServeHTTP(w, r)
		})
	}
}

// rateLimit returns a limiter of n requests per window keyed by key, or a
// pass-through when n is 0. A request key returns "" passes unlimited.
func (s *server) rateLimit(name string, n int, key func(r *http.Request) string) func(http.Handler) http.Handler {
	if n <= 0 {
		return func(next http.Handler) http.Handler { return next }
	}
	window := s.cfg.RateLimitWindow
	limiter := httprate.NewRateLimiter(n, window,
		httprate.WithKeyFuncs(func(r *http.Request) (string, error) { return key(r), nil }),
		httprate.WithLimitHandler(func(w http.ResponseWriter, r *http.Request) {
			s.metrics.RateLimited.WithLabelValues(name).Inc()
			s.writeError(w, r, errorf(game.ERATELIMIT, "too many requests (%s limit: %d per %s); retry after the time in Retry-After", name, n, window))
		}))
	return func(next http.Handler) http.Handler {
		limited := limiter.Handler(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if key(r) == "" {
				next.ServeHTTP(w, r)
				return
			}
			limited.ServeHTTP(w, r)
		})
	}
}

func keyByAddress(r *http.Request) string { return "ip:" + clientGroup(r) }

func keyByPlayer(r *http.Request) string {
	if p, ok := playerFrom(r.Context()); ok {
		return "player:" + p.ID.String()
	}
	return ""
}

func keyByPlayerOrAddress(r *http.Request) string {
	if k := keyByPlayer(r); k != "" {
		return k
	}
	return keyByAddress(r)
}

// errOverloaded is the refusal of a request beyond the in-flight limit.
var errOverloaded = errorf(eBusy, "the server is at capacity; retry after the time in Retry-After")

// limitInFlight sheds load: a request that finds MaxInFlight others in progress is refused
// at once with 503 and Retry-After instead of waiting in memory. (chi's Throttle does the
// same but answers in plain text; every error here is problem+json.)
func (s *server) limitInFlight(next http.Handler) http.Handler {
	slots := make(chan struct{}, s.cfg.MaxInFlight)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case slots <- struct{}{}:
		default:
			s.metrics.shed.Inc()
			s.writeError(w, r, errOverloaded)
			return
		}
		s.metrics.inFlight.Inc()
		defer func() {
			s.metrics.inFlight.Dec()
			<-slots
		}()
		next.ServeHTTP(w, r)
	})
}
