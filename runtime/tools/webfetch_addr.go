package tools

import "net/netip"

// The addresses web_fetch refuses: what net/netip classifies itself
// (loopback, private, link-local, multicast, unspecified), the cloud
// metadata endpoints, every entry of IANA's IPv4 and IPv6 special-purpose
// address registries that is not globally reachable, and IPv6 addresses
// outside global unicast (2000::/3). Addresses that embed an IPv4 address a
// translator would reach (NAT64, 6to4, IPv4-mapped) are judged by that
// IPv4 address.

// addrRange is a refused range and the reason given for it, phrased to
// follow "which is".
type addrRange struct {
	prefix netip.Prefix
	reason string
}

func refused(prefix, reason string) addrRange {
	return addrRange{netip.MustParsePrefix(prefix), reason}
}

var (
	metadataV4 = netip.MustParseAddr("169.254.169.254")
	metadataV6 = netip.MustParseAddr("fd00:ec2::254")
	// nat64 (RFC 6052's well-known prefix) and sixToFour (RFC 3056) carry
	// the IPv4 address they lead to: 64:ff9b::a.b.c.d, 2002:aabb:ccdd::/48.
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	// globalUnicast6 is IANA's global unicast space; the rest of the IPv6
	// space is reserved, local or multicast.
	globalUnicast6 = netip.MustParsePrefix("2000::/3")
)

// refused4 and refused6 are searched in order: a narrower range comes
// before a wider one that holds it, so its own reason is given.
var refused4 = []addrRange{
	refused("0.0.0.0/8", "a reserved"), // "this network"
	refused("100.64.0.0/10", "a carrier-grade NAT"),
	refused("192.0.0.0/24", "an IETF protocol assignment"),
	refused("192.0.2.0/24", "a documentation (TEST-NET-1)"),
	refused("198.51.100.0/24", "a documentation (TEST-NET-2)"),
	refused("203.0.113.0/24", "a documentation (TEST-NET-3)"),
	refused("198.18.0.0/15", "a benchmarking"),
	refused("192.88.99.0/24", "a deprecated 6to4 relay anycast"),
	refused("240.0.0.0/4", "a reserved"), // 255.255.255.255 included
}

var refused6 = []addrRange{
	refused("64:ff9b:1::/48", "a local-use NAT64"),
	refused("::/96", "an IPv4-compatible (deprecated)"),
	refused("::/8", "a reserved"),
	refused("100::/64", "a discard-only"),
	refused("100:0:0:1::/64", "a dummy"),
	refused("2001::/32", "a Teredo"),
	refused("2001:db8::/32", "a documentation"),
	refused("2001::/23", "an IETF protocol assignment"),
	refused("3fff::/20", "a documentation"),
	refused("5f00::/16", "an SRv6 segment identifier"),
	refused("fec0::/10", "a site-local"),
}

// blockedReason says why ip must not be fetched ("" when it is public),
// phrased to follow "which is".
func blockedReason(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case nat64.Contains(ip):
		b := ip.As16()
		return blockedReason(netip.AddrFrom4([4]byte(b[12:16])))
	case sixToFour.Contains(ip):
		b := ip.As16()
		return blockedReason(netip.AddrFrom4([4]byte(b[2:6])))
	}
	switch {
	case !ip.IsValid():
		return "an invalid"
	case ip == metadataV4 || ip == metadataV6:
		return "a cloud metadata"
	case ip.IsLoopback():
		return "a loopback"
	case ip.IsUnspecified():
		return "an unspecified"
	case ip.IsPrivate():
		return "a private"
	case ip.IsLinkLocalUnicast():
		return "a link-local"
	case ip.IsMulticast():
		return "a multicast"
	}
	ranges := refused4
	if ip.Is6() {
		ranges = refused6
	}
	for _, r := range ranges {
		if r.prefix.Contains(ip) {
			return r.reason
		}
	}
	if ip.Is6() && !globalUnicast6.Contains(ip) {
		return "a reserved"
	}
	return ""
}
