package memstore_test

import (
	"testing"

	"backpressure/internal/store/memstore"
	"backpressure/internal/store/storetest"
)

func TestContract(t *testing.T) {
	storetest.Run(t, func(t *testing.T) storetest.Store { return memstore.New() })
}
