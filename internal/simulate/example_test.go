package simulate

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"

	"github.com/volbind/volbind/internal/manifest"
)

// "volbind simulate -f" binds the cluster of a manifest file on the
// embedded API; -o json gives the report as JSON.
func Example_simulateManifests() {
	var stdout bytes.Buffer
	err := Run(context.Background(), []string{"-f", "../../examples/cluster.yaml", "-o", "json"}, nil, &stdout, io.Discard)
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

// Pods without a node are scheduled through binder/scheduling onto the
// manifests' nodes, so their WaitForFirstConsumer claims bind; the report
// says why the others wait, in kube-scheduler's words.
func Example_simulatePods() {
	var stdout bytes.Buffer
	err := Run(context.Background(), []string{"-f", "../../examples/statefulset.yaml", "-o", "json", "-dump-objects", "-"}, nil, &stdout, io.Discard)
	if err != nil {
		fmt.Println(err)
		return
	}
	dec := json.NewDecoder(&stdout)
	var r report
	if err := dec.Decode(&r); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d of %d pods scheduled, %d of %d claims bound\n", r.Pods.Scheduled, r.Pods.Total, r.ClaimsBound, r.Claims)
	for _, p := range r.Pods.Unscheduled {
		fmt.Printf("%s pending: %s\n", p.Name, p.Message)
	}
	// The dumped objects: where each pod runs, and its claim's volume.
	back := &manifest.Objects{}
	if err := manifest.Load("dump", io.MultiReader(dec.Buffered(), &stdout), back); err != nil {
		fmt.Println(err)
		return
	}
	volumeOf := map[string]string{}
	for _, c := range back.Claims {
		volumeOf[c.Name] = c.Spec.VolumeName
	}
	for _, p := range back.Pods {
		fmt.Printf("%s on %q, claim %s on volume %q\n", p.Name, p.Spec.NodeName, p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName,
			volumeOf[p.Spec.Volumes[0].PersistentVolumeClaim.ClaimName])
	}
	// Output:
	// 2 of 3 pods scheduled, 2 of 3 claims bound
	// default/db-2 pending: 0/2 nodes are available: 2 node(s) didn't find available persistent volumes to bind.
	// db-0 on "node-b", claim data-db-0 on volume "local-b"
	// db-1 on "node-a", claim data-db-1 on volume "local-a"
	// db-2 on "", claim data-db-2 on volume ""
}
