package tools

import (
	"context"
	"net/netip"
	"strings"
	"testing"
)

// TestBlockedRanges covers every refused range at its edges, and the
// public addresses just outside them.
func TestBlockedRanges(t *testing.T) {
	tests := []struct {
		ip, want string
	}{
		// IPv4 special-purpose registry.
		{"0.0.0.1", "a reserved"},
		{"0.255.255.255", "a reserved"},
		{"1.0.0.0", ""},
		{"100.64.0.0", "a carrier-grade NAT"},
		{"192.0.0.0", "an IETF protocol assignment"},
		{"192.0.0.170", "an IETF protocol assignment"}, // NAT64 discovery
		{"192.0.0.255", "an IETF protocol assignment"},
		{"192.0.1.0", ""},
		{"192.0.2.0", "a documentation (TEST-NET-1)"},
		{"192.0.2.255", "a documentation (TEST-NET-1)"},
		{"192.0.3.0", ""},
		{"198.51.100.0", "a documentation (TEST-NET-2)"},
		{"198.51.100.255", "a documentation (TEST-NET-2)"},
		{"198.51.101.0", ""},
		{"203.0.113.0", "a documentation (TEST-NET-3)"},
		{"203.0.113.255", "a documentation (TEST-NET-3)"},
		{"203.0.114.0", ""},
		{"198.17.255.255", ""},
		{"198.18.0.0", "a benchmarking"},
		{"198.19.255.255", "a benchmarking"},
		{"198.20.0.0", ""},
		{"192.88.99.1", "a deprecated 6to4 relay anycast"},
		{"192.88.100.0", ""},
		{"239.255.255.255", "a multicast"},
		{"240.0.0.0", "a reserved"},
		{"255.255.255.255", "a reserved"},
		{"127.0.0.1", "a loopback"},
		{"10.255.255.255", "a private"},
		{"169.254.0.1", "a link-local"},
		{"169.254.169.254", "a cloud metadata"},

		// IPv4 inside IPv6: mapped, compatible, translated.
		{"::ffff:127.0.0.1", "a loopback"},
		{"::ffff:192.168.0.1", "a private"},
		{"::ffff:198.18.0.1", "a benchmarking"},
		{"::ffff:8.8.8.8", ""},
		{"::127.0.0.1", "an IPv4-compatible (deprecated)"},
		{"::10.0.0.1", "an IPv4-compatible (deprecated)"},
		{"::8.8.8.8", "an IPv4-compatible (deprecated)"},
		{"::ffff:0:10.0.0.1", "a reserved"}, // SIIT IPv4-translated
		{"64:ff9b::10.0.0.1", "a private"},
		{"64:ff9b::127.0.0.1", "a loopback"},
		{"64:ff9b::169.254.169.254", "a cloud metadata"},
		{"64:ff9b::192.0.2.1", "a documentation (TEST-NET-1)"},
		{"64:ff9b::8.8.8.8", ""},
		{"64:ff9b:1::", "a local-use NAT64"},
		{"64:ff9b:1::808:808", "a local-use NAT64"},
		{"64:ff9b:1:ffff:ffff:ffff:ffff:ffff", "a local-use NAT64"},
		{"2002:a00:1::", "a private"},       // 6to4 of 10.0.0.1
		{"2002:c0a8:101::1", "a private"},   // 6to4 of 192.168.1.1
		{"2002:c612:1::", "a benchmarking"}, // 6to4 of 198.18.0.1
		{"2002:808:808::", ""},              // 6to4 of 8.8.8.8

		// IPv6 special-purpose registry and the space outside 2000::/3.
		{"::2", "an IPv4-compatible (deprecated)"},
		{"::1:0:0:0", "a reserved"},
		{"100::", "a discard-only"},
		{"100::ffff:ffff:ffff:ffff", "a discard-only"},
		{"100:0:0:1::1", "a dummy"},
		{"2001::", "a Teredo"},
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", "a Teredo"},
		{"2001:0:ffff:ffff:ffff:ffff:ffff:ffff", "a Teredo"},
		{"2001:2::1", "an IETF protocol assignment"}, // benchmarking
		{"2001:1ff:ffff::", "an IETF protocol assignment"},
		{"2001:200::1", ""}, // the first allocated block after 2001::/23
		{"2001:db8::1", "a documentation"},
		{"2001:db8:ffff:ffff:ffff:ffff:ffff:ffff", "a documentation"},
		{"2001:db9::1", ""},
		{"3fff::1", "a documentation"},
		{"3fff:fff:ffff::", "a documentation"},
		{"3fff:1000::", ""},
		{"5f00::1", "an SRv6 segment identifier"},
		{"fec0::1", "a site-local"},
		{"feff:ffff::1", "a site-local"},
		{"fe80::1", "a link-local"},
		{"febf::1", "a link-local"},
		{"fc00::1", "a private"},
		{"ff0e::1", "a multicast"},
		{"4000::1", "a reserved"},
		{"8000::1", "a reserved"},
		{"1fff:ffff::1", "a reserved"},
		{"2606:4700::1111", ""},
		{"2a00:1450:4001::", ""},
	}
	for _, tt := range tests {
		if got := blockedReason(netip.MustParseAddr(tt.ip)); got != tt.want {
			t.Errorf("blockedReason(%s) = %q, want %q", tt.ip, got, tt.want)
		}
	}
}

// TestWebFetchRefusesNewRanges goes through Run: literals are refused at
// dial time and a name resolving into a refused range is refused by name,
// before any connection.
func TestWebFetchRefusesNewRanges(t *testing.T) {
	tool := &WebFetch{lookup: func(_ context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("198.18.0.7")}, nil
	}}
	for u, want := range map[string]string{
		"http://[::127.0.0.1]/":          "::7f00:1 is an IPv4-compatible (deprecated) address",
		"http://[::ffff:192.0.2.1]/":     "192.0.2.1 is a documentation (TEST-NET-1) address",
		"http://[64:ff9b::7f00:1]/":      "64:ff9b::7f00:1 is a loopback address",
		"http://[64:ff9b:1::a00:1]/":     "is a local-use NAT64 address",
		"http://[fec0::1]/":              "fec0::1 is a site-local address",
		"http://[2001:0:4136:e378::1]/":  "is a Teredo address",
		"http://[2002:c0a8:101::1]/":     "is a private address",
		"http://203.0.113.9/":            "203.0.113.9 is a documentation (TEST-NET-3) address",
		"http://198.51.100.1:8080/":      "198.51.100.1 is a documentation (TEST-NET-2) address",
		"http://benchmark.example.test/": "benchmark.example.test resolves to 198.18.0.7, which is a benchmarking address",
	} {
		r := run(t, tool, fetchArgs(t, u))
		wantErr(t, r, want)
		wantErr(t, r, "refusing to fetch")
	}
}

// TestWebFetchDialControlNewRanges checks the socket-address check, the one
// that holds whatever a name resolved to earlier.
func TestWebFetchDialControlNewRanges(t *testing.T) {
	tool := &WebFetch{}
	for _, addr := range []string{
		"[::a00:1]:80", "[64:ff9b::a00:1]:443", "[64:ff9b:1::1]:80", "[fec0::1]:80",
		"[2001::1]:80", "[2002:a00:1::]:80", "192.0.2.1:80", "198.51.100.1:80",
		"203.0.113.1:80", "198.18.0.1:80", "198.19.255.255:443",
	} {
		err := tool.control("tcp", addr, nil)
		if err == nil || !strings.Contains(err.Error(), "address") {
			t.Errorf("control(%s) = %v, want refused", addr, err)
		}
	}
	for _, addr := range []string{"[2002:808:808::1]:443", "[64:ff9b::808:808]:443", "198.20.0.1:80"} {
		if err := tool.control("tcp", addr, nil); err != nil {
			t.Errorf("control(%s) = %v, want allowed", addr, err)
		}
	}
}
