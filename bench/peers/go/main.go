// The Go peer's make+encode and decode+accept on the same payloads as codec_bench.
// Needs the Go SDK module from the module proxy (see bench/compare_peers.sh).
package main

import (
	"encoding/json"
	"fmt"
	"os"
	"time"

	babelqueue "github.com/babelqueue/babelqueue-go"
)

func perCall(fn func()) float64 {
	n := 1
	for {
		start := time.Now()
		for i := 0; i < n; i++ {
			fn()
		}
		el := time.Since(start)
		if el > 500*time.Millisecond {
			return float64(el.Nanoseconds()) / float64(n)
		}
		n *= 2
	}
}

func main() {
	small := map[string]any{"order_id": 1042, "amount": 99.9, "currency": "EUR",
		"customer": map[string]any{"id": 7, "email": "a@b.c"},
		"items":    []any{map[string]any{"sku": "A-1", "qty": 2}, map[string]any{"sku": "B-2", "qty": 1}}}
	items := []any{}
	for i := 0; i < 120; i++ {
		items = append(items, map[string]any{"sku": fmt.Sprintf("SKU-%d", 100000+i), "qty": i%7 + 1,
			"price": 19.99 + float64(i), "title": fmt.Sprintf("Item number %d — naïve café", i), "tags": []any{"a", "b"}})
	}
	large := map[string]any{"order_id": 1042, "customer": map[string]any{"id": 7, "email": "a@b.c"}, "items": items}
	out := map[string]float64{}
	for name, data := range map[string]map[string]any{"small": small, "large_16k": large} {
		env, _ := babelqueue.Make("urn:babel:orders:created", data, babelqueue.WithQueue("orders"))
		body, _ := env.Encode()
		out["make_encode/"+name] = perCall(func() {
			e, _ := babelqueue.Make("urn:babel:orders:created", data, babelqueue.WithQueue("orders"))
			_, _ = e.Encode()
		})
		out["decode_accept/"+name] = perCall(func() {
			e, _ := babelqueue.Decode(body)
			_ = e.Accepts()
		})
		out["bytes/"+name] = float64(len(body))
	}
	_ = json.NewEncoder(os.Stdout).Encode(out)
}
