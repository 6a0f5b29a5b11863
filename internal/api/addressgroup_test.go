package api

import (
	"net/http/httptest"
	"testing"
)

// Per-address limits count an IPv6 client by its /64: walking through the addresses of
// one's own network buys no more streams, requests in flight or rate.
func TestClientGroup(t *testing.T) {
	for _, tt := range []struct{ remote, want string }{
		{"192.0.2.7:5000", "192.0.2.7"},
		{"[::ffff:192.0.2.7]:5000", "192.0.2.7"},
		{"[2001:db8:1:2::1]:5000", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:ffff:ffff:ffff:ffff]:80", "2001:db8:1:2::/64"},
		{"[fe80::1%eth0]:80", "fe80::/64"},
		{"[2001:db8:1:3::1]:5000", "2001:db8:1:3::/64"},
		{"not an address", "not an address"},
	} {
		r := httptest.NewRequest("GET", "/", nil)
		r.RemoteAddr = tt.remote
		if got := clientGroup(r); got != tt.want {
			t.Errorf("clientGroup(%q) = %q, want %q", tt.remote, got, tt.want)
		}
	}
	a, b := httptest.NewRequest("GET", "/", nil), httptest.NewRequest("GET", "/", nil)
	a.RemoteAddr, b.RemoteAddr = "[2001:db8:1:2::1]:1", "[2001:db8:1:2::2]:1"
	if keyByAddress(a) != keyByAddress(b) {
		t.Errorf("two addresses of one /64 have rate keys %q and %q", keyByAddress(a), keyByAddress(b))
	}
}
