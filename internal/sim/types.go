package sim

import "encoding/json"

// Kind names a component type. The set is closed: a design naming any other kind is invalid.
type Kind string

// Component kinds the engine models. Each is a pool of workers with its own routing rule (see doc.go).
const (
	KindLoadBalancer  Kind = "load_balancer"
	KindAPIGateway    Kind = "api_gateway"
	KindAppService    Kind = "app_service"
	KindContainerPool Kind = "container_pool"
	KindServerless    Kind = "serverless"
	KindCache         Kind = "cache"
	KindCDN           Kind = "cdn"
	KindDatabase      Kind = "database"
	KindQueue         Kind = "queue"
)

// Kinds lists every component kind in a fixed order (documentation, schema, catalogs).
var kinds = []Kind{
	KindLoadBalancer, KindAPIGateway, KindAppService, KindContainerPool, KindServerless,
	KindCache, KindCDN, KindDatabase, KindQueue,
}

// Kinds returns every component kind in a fixed order.
func Kinds() []Kind { return append([]Kind(nil), kinds...) }

// Design is a player's architecture: components and the calls between them.
type Design struct {
	Components []Component `json:"components"`
	Edges      []Edge      `json:"edges"`
}

// Component is one box of the diagram. Params are decoded and checked against the kind's
// parameter table (params.go); unknown names are errors, missing ones take documented defaults.
type Component struct {
	ID     string                     `json:"id"`
	Type   Kind                       `json:"type"`
	Params map[string]json.RawMessage `json:"params,omitempty"`
}

// Edge is a call from one component to another. Whether the caller waits for the answer
// (synchronous) follows from the callee's kind: a hand-off to a queue is asynchronous.
type Edge struct {
	From string `json:"from"`
	To   string `json:"to"`
}

// Class is a request class: each follows its own path through the graph.
type Class int

// Request classes, in the order used by Mix and by per-class arrays.
const (
	ClassStatic Class = iota
	ClassRead
	ClassWrite
	ClassAsyncWrite
	numClasses
)

var classNames = [numClasses]string{"static", "read", "write", "async_write"}

func (c Class) String() string {
	if c >= 0 && c < numClasses {
		return classNames[c]
	}
	return "unknown"
}
