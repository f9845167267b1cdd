package service

import (
	"container/list"
	"net"
	"net/http"
	"net/netip"
	"sync"

	"golang.org/x/time/rate"
)

// maxLimiters bounds the clients and tenants the service keeps a rate
// limiter for; past it the least recently used one is forgotten. Wiping
// the whole table instead (as before issue 37, F11) let a client over its
// limit start afresh by sending from 10,000 other addresses.
const maxLimiters = 10000

// limiters is the rate limiters by key, least recently used evicted.
type limiters struct {
	mu    sync.Mutex
	order *list.List // of *limiterEntry, most recently used first
	byKey map[string]*list.Element
}

type limiterEntry struct {
	key string
	lim *rate.Limiter
}

// get answers key's limiter, made with perSecond and burst when new.
func (l *limiters) get(key string, perSecond float64, burst int) *rate.Limiter {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.byKey == nil {
		l.order, l.byKey = list.New(), map[string]*list.Element{}
	}
	if e, ok := l.byKey[key]; ok {
		l.order.MoveToFront(e)
		return e.Value.(*limiterEntry).lim
	}
	if l.order.Len() >= maxLimiters {
		oldest := l.order.Back()
		l.order.Remove(oldest)
		delete(l.byKey, oldest.Value.(*limiterEntry).key)
	}
	lim := rate.NewLimiter(rate.Limit(perSecond), burst)
	l.byKey[key] = l.order.PushFront(&limiterEntry{key, lim})
	return lim
}

// clientOf is the client a request comes from, as the rate limits count
// clients: its remote address's IPv4 /24 or IPv6 /64. One subscriber holds
// a whole /64 (2^64 addresses, each a limiter of its own when keyed by the
// address), and a /24 is the least an IPv4 network hands out; an IPv4
// address mapped into IPv6 is its IPv4 /24.
func clientOf(r *http.Request) string {
	host, _, err := net.SplitHostPort(r.RemoteAddr)
	if err != nil {
		host = r.RemoteAddr
	}
	a, err := netip.ParseAddr(host)
	if err != nil {
		return host
	}
	a = a.Unmap().WithZone("")
	bits := 64
	if a.Is4() {
		bits = 24
	}
	p, _ := a.Prefix(bits)
	return p.String()
}
