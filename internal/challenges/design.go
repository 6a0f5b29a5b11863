package challenges

import "backpressure/internal/sim"

// ParseDesign decodes a player's design strictly: unknown fields, duplicate keys and wrong
// types are all reported, each with its JSON path. Whether the design suits a level is
// Evaluate's business.
func ParseDesign(data []byte) (sim.Design, error) {
	var ps Problems
	var d sim.Design
	if len(data) > MaxDesignBytes {
		ps.addf("", "is %d bytes; a design may have at most %d", len(data), MaxDesignBytes)
		return d, ps
	}
	decodeStrict(data, &d, "", &ps)
	return d, ps.err()
}
