//go:build e2e && linux

package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/internal/explain"
)

// TestExplain runs `volbind explain` against the API server, for a pending
// claim that would bind, one that nothing can satisfy and a pending pod,
// and checks the verdicts, the exit statuses and the volumes and nodes
// named; then a Binder runs and binds the first claim to the volume the
// explanation named, and leaves the second Pending.
func TestExplain(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	bin := buildVolbind(t)
	local := f.class + "-local"
	f.createManualClass(f.class, storagev1.VolumeBindingImmediate)
	f.createManualClass(local, storagev1.VolumeBindingWaitForFirstConsumer)
	nodes := f.createNodes(2)
	nodeA, nodeB := nodes[0].Name, nodes[1].Name

	onB := f.volume("local-b", 10)
	onB.Spec.StorageClassName = local
	onB.Spec.PersistentVolumeSource = v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/disk0"}}
	onB.Spec.NodeAffinity = hostAffinity(nodeB)
	f.create(f.volume("small", 1), f.volume("medium", 8), f.volume("large", 50), onB)
	// No controller runs yet: mark the volumes Available as one would.
	for _, name := range []string{"small", "medium", "large", "local-b"} {
		pv := f.getVolume(f.ns + "-" + name)
		pv.Status.Phase = v1.VolumeAvailable
		if _, err := f.cs.CoreV1().PersistentVolumes().UpdateStatus(ctx, pv, metav1.UpdateOptions{}); err != nil {
			t.Fatalf("mark volume %s Available: %v", pv.Name, err)
		}
	}
	db := f.claim("db", 5)
	db.Spec.StorageClassName = &local
	f.create(f.claim("data", 5), f.claim("huge", 100), db)
	pod := f.podUsing("db-0", "db")
	if _, err := f.cs.CoreV1().Pods(f.ns).Create(ctx, pod, metav1.CreateOptions{}); err != nil {
		t.Fatalf("create pod: %v", err)
	}
	t.Cleanup(func() {
		if err := f.cs.CoreV1().Pods(f.ns).Delete(context.Background(), pod.Name, deleteNow()); err != nil {
			t.Errorf("delete pod: %v", err)
		}
	})

	var data explain.ClaimExplanation
	runExplain(t, bin, 0, &data, "pvc", f.ns+"/data")
	if data.Verdict != explain.WouldBind || data.Volume != f.ns+"-medium" {
		t.Errorf("claim data: verdict %s, volume %q (%s); want WouldBind, %s-medium", data.Verdict, data.Volume, data.Summary, f.ns)
	}
	var huge explain.ClaimExplanation
	runExplain(t, bin, 1, &huge, "pvc", "huge", "-n", f.ns)
	if huge.Verdict != explain.Unsatisfiable || len(huge.Candidates) == 0 ||
		huge.Candidates[0].Volume != f.ns+"-large" || huge.Candidates[0].Detail != "capacity 50Gi < request 100Gi" {
		t.Errorf("claim huge: verdict %s, candidates %+v; want Unsatisfiable, %s-large first (50Gi < 100Gi)", huge.Verdict, huge.Candidates, f.ns)
	}
	var x explain.PodExplanation
	runExplain(t, bin, 0, &x, "pod", f.ns+"/db-0", "--node", nodeA+","+nodeB)
	if x.Verdict != explain.Schedulable || !slices.Equal(x.FitNodes, []string{nodeB}) || len(x.Nodes) != 2 {
		t.Fatalf("pod db-0: verdict %s, fits on %v; want Schedulable on %s only", x.Verdict, x.FitNodes, nodeB)
	}
	if r := x.Nodes[0].Reasons; len(r) != 1 || r[0].Kind != "NoMatchingVolume" || len(r[0].Candidates) == 0 ||
		r[0].Candidates[0].Volume != f.ns+"-local-b" || r[0].Candidates[0].Rule != explain.NodeAffinity {
		t.Errorf("pod db-0 on %s: reasons %+v; want NoMatchingVolume, %s-local-b rejected by node affinity", nodeA, r, f.ns)
	}
	if c := x.Nodes[1].Claims; len(c) != 1 || c[0].Action != "bind" || c[0].Volume != f.ns+"-local-b" {
		t.Errorf("pod db-0 on %s: claims %+v; want db bound to %s-local-b", nodeB, c, f.ns)
	}

	t.Run("kubectl plugin", func(t *testing.T) {
		kubectl, err := exec.LookPath("kubectl")
		if err != nil {
			t.Skip("no kubectl on $PATH")
		}
		// Installed as a kubectl plugin: kubectl finds kubectl-volbind on
		// $PATH and passes it the environment, $KUBECONFIG included.
		dir := t.TempDir()
		if err := os.Symlink(bin, filepath.Join(dir, "kubectl-volbind")); err != nil {
			t.Fatal(err)
		}
		cmd := exec.CommandContext(t.Context(), kubectl, "volbind", "explain", "pvc", f.ns+"/huge", "-o", "json")
		cmd.Env = append(os.Environ(), "PATH="+dir+string(os.PathListSeparator)+os.Getenv("PATH"), "KUBECONFIG="+testCluster.kubeconfig)
		var viaKubectl explain.ClaimExplanation
		decodeExplain(t, cmd, 1, &viaKubectl)
		if viaKubectl.Verdict != explain.Unsatisfiable {
			t.Errorf("kubectl volbind explain pvc huge: verdict %s, want Unsatisfiable", viaKubectl.Verdict)
		}
	})

	// What happens: the Binder binds data as explained and leaves huge.
	startBinder(t, binder.Config{})
	f.waitBound(1, time.Minute)
	if got := f.getClaim("data").Spec.VolumeName; got != data.Volume {
		t.Errorf("claim data bound to %q, explained %q", got, data.Volume)
	}
	if c := f.getClaim("huge"); c.Spec.VolumeName != "" || c.Status.Phase != v1.ClaimPending {
		t.Errorf("claim huge: volume %q, phase %s; want none, Pending", c.Spec.VolumeName, c.Status.Phase)
	}
}

// runExplain runs `volbind explain ARGS -o json` against the test cluster,
// checks its exit status and decodes its answer into out.
func runExplain(t *testing.T, bin string, code int, out any, args ...string) {
	t.Helper()
	args = append([]string{"explain"}, append(args, "--kubeconfig", testCluster.kubeconfig, "-o", "json")...)
	decodeExplain(t, exec.CommandContext(t.Context(), bin, args...), code, out)
}

// decodeExplain runs cmd, a `volbind explain ... -o json`, checks its exit
// status and decodes its answer into out.
func decodeExplain(t *testing.T, cmd *exec.Cmd, code int, out any) {
	t.Helper()
	stdout, err := cmd.Output()
	got := 0
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		got = ee.ExitCode()
	case err != nil:
		t.Fatalf("%v: %v", cmd.Args, err)
	}
	if got != code {
		t.Fatalf("%v: exit status %d, want %d\n%s", cmd.Args, got, code, stdout)
	}
	if err := json.Unmarshal(stdout, out); err != nil {
		t.Fatalf("%v: %v\n%s", cmd.Args, err, stdout)
	}
}

// createManualClass creates a StorageClass without provisioner, deleted at the
// end of the test.
func (f *fixture) createManualClass(name string, mode storagev1.VolumeBindingMode) {
	f.t.Helper()
	sc := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: "kubernetes.io/no-provisioner", VolumeBindingMode: &mode}
	if _, err := f.cs.StorageV1().StorageClasses().Create(f.t.Context(), sc, metav1.CreateOptions{}); err != nil {
		f.t.Fatalf("create StorageClass %s: %v", name, err)
	}
	f.t.Cleanup(func() {
		if err := f.cs.StorageV1().StorageClasses().Delete(context.Background(), name, deleteNow()); err != nil {
			f.t.Errorf("delete StorageClass %s: %v", name, err)
		}
	})
}
