package service_test

import (
	"fmt"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/crawlcheck/verifier/internal/issuer/service"
)

// heapInUse is the live heap after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}

// TestSlowBodyHoldsOnlyWhatArrived (F1): bodies that declare 32 MiB and
// send two bytes hold about two bytes each, not the 32 MiB declared, while
// they trickle in.
func TestSlowBodyHoldsOnlyWhatArrived(t *testing.T) {
	e := newEnv(t, allowLoopback(), service.Config{})
	addr := strings.TrimPrefix(e.api, "http://")
	before := heapInUse()
	const conns, declared = 6, 32 << 20
	for i := 0; i < conns; i++ {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		fmt.Fprintf(c, "POST /api/v1/mcp/lock/check HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n{\"", declared)
	}
	time.Sleep(500 * time.Millisecond)
	if grew := int64(heapInUse()) - int64(before); grew > 8<<20 {
		t.Fatalf("%d slow bodies of 2 bytes hold %d MiB", conns, grew>>20)
	}
}
