package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
)

// "volbind simulate -f" binds the cluster of a manifest file on the
// embedded API; -o json gives the report as JSON.
func Example_simulateManifests() {
	var stdout bytes.Buffer
	err := run(context.Background(), []string{"simulate", "-f", "../../examples/cluster.yaml", "-o", "json"}, nil, &stdout, io.Discard)
	if err != nil {
		fmt.Println(err)
		return
	}
	var r report
	if err := json.Unmarshal(stdout.Bytes(), &r); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d of %d claims bound, %.0f API writes per binding, invariants broken: %d\n",
		r.ClaimsBound, r.Claims, r.WritesPerBinding, len(r.Violations))
	for _, pr := range r.PendingReasons {
		fmt.Printf("pending: %d (%s)\n", pr.Claims, pr.Reason)
	}
	// Output:
	// 3 of 4 claims bound, 4 API writes per binding, invariants broken: 0
	// pending: 1 (NoEvent)
}

// The default scenario of "volbind simulate": 10,000 volumes and claims
// over 3 zones and 3 storage classes, the same for the same -seed.
func Example_defaultScenario() {
	objs, exp := defaultScenario().generate()
	fmt.Printf("%d classes, %d nodes, %d volumes, %d claims\n", len(objs.Classes), len(objs.Nodes), len(objs.Volumes), len(objs.Claims))
	fmt.Printf("bindable: %d\n", exp.Bindable)
	for _, why := range slices.Sorted(maps.Keys(exp.Unbindable)) {
		fmt.Printf("unbindable (%s): %d\n", why, exp.Unbindable[why])
	}
	// Output:
	// 3 classes, 3 nodes, 10000 volumes, 10000 claims
	// bindable: 9810
	// unbindable (no-class): 67
	// unbindable (taken): 64
	// unbindable (too-large): 59
}
