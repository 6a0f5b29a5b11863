package sim

import (
	"hash/fnv"
	"sort"
	"strconv"
)

// ringVirtualNodes is how many points each backend owns on a consistent-hash ring. With 64
// the shares of equal backends typically differ by ±10–20%: a skew that players can see.
const ringVirtualNodes = 64

// ringShares returns each backend's share of a consistent-hash ring built from their ids:
// the fraction of the key space whose next point clockwise belongs to the backend.
func ringShares(ids []string) []float64 {
	type point struct {
		h     uint64
		owner int
	}
	points := make([]point, 0, len(ids)*ringVirtualNodes)
	for i, id := range ids {
		for v := 0; v < ringVirtualNodes; v++ {
			f := fnv.New64a()
			f.Write([]byte(id + "#" + strconv.Itoa(v)))
			points = append(points, point{f.Sum64(), i})
		}
	}
	sort.Slice(points, func(a, b int) bool {
		if points[a].h != points[b].h {
			return points[a].h < points[b].h
		}
		return points[a].owner < points[b].owner
	})
	shares := make([]float64, len(ids))
	const space = float64(1<<63) * 2
	for k, p := range points {
		prev := points[(k+len(points)-1)%len(points)].h
		arc := p.h - prev // wraps around for the first point
		shares[p.owner] += float64(arc) / space
	}
	return shares
}

// setRingWeights gives every consistent-hash balancer node its children's ring shares.
func (m *model) setRingWeights() {
	for i := range m.nodes {
		nd := &m.nodes[i]
		if nd.split != splitRing || len(nd.children) == 0 {
			continue
		}
		ids := make([]string, len(nd.children))
		for k, ch := range nd.children {
			ids[k] = m.comps[m.nodes[ch].comp].id
		}
		nd.weights = ringShares(ids)
	}
}
