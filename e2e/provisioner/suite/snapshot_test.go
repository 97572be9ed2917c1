//go:build e2e && linux

package suite

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// state is what a case left on the API server at one checkpoint, without
// names, UIDs, resourceVersions and timestamps: per object ("claim data",
// "volume pvc-<uid of data>", "events"), its fields by path.
type state map[string]map[string]string

// results are the states of every checkpoint: binder -> case -> checkpoint.
// All methods are safe for concurrent use.
type results struct {
	// mu guards m.
	mu sync.Mutex
	m  map[string]map[string]map[string]state
}

func (r *results) put(binder, tc, checkpoint string, s state) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.m == nil {
		r.m = map[string]map[string]map[string]state{}
	}
	if r.m[binder] == nil {
		r.m[binder] = map[string]map[string]state{}
	}
	if r.m[binder][tc] == nil {
		r.m[binder][tc] = map[string]state{}
	}
	r.m[binder][tc][checkpoint] = s
}

// checkpoint reads the case's claims, volumes and events back from the API
// server and records them, normalized, under name.
func (e *env) checkpoint(name string) {
	e.t.Helper()
	ctx := e.t.Context()
	uids := e.hist.claimNames()
	pairs := []string{e.ns, "NS"}
	for uid, claim := range uids {
		pairs = append(pairs, string(uid), "<uid of "+claim+">")
	}
	norm := strings.NewReplacer(pairs...).Replace
	s := state{}
	claims, err := e.cs.CoreV1().PersistentVolumeClaims(e.ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		e.t.Fatalf("list claims: %v", err)
	}
	for i := range claims.Items {
		c := &claims.Items[i]
		s["claim "+uids[c.UID]] = claimFields(c, norm)
	}
	vols, err := e.cs.CoreV1().PersistentVolumes().List(ctx, metav1.ListOptions{LabelSelector: testLabel + "=" + e.ns})
	if err != nil {
		e.t.Fatalf("list volumes: %v", err)
	}
	for i := range vols.Items {
		pv := &vols.Items[i]
		s["volume "+norm(pv.Name)] = volumeFields(pv, norm)
	}
	s["events"] = e.eventFields(ctx, norm)
	e.t.Logf("checkpoint %s: %d objects", name, len(s))
	caseName := e.t.Name()[strings.LastIndexByte(e.t.Name(), '/')+1:]
	recorded.put(e.binder.name, caseName, name, s)
}

// claimFields are the fields of a claim that a binder or a provisioner
// sets.
func claimFields(c *v1.PersistentVolumeClaim, norm func(string) string) map[string]string {
	f := map[string]string{
		"status.phase":        string(c.Status.Phase),
		"spec.volumeName":     norm(c.Spec.VolumeName),
		"metadata.finalizers": strings.Join(c.Finalizers, ","),
		"status.capacity":     c.Status.Capacity.Storage().String(),
		"status.accessModes":  fmt.Sprint(c.Status.AccessModes),
	}
	if c.Status.Capacity == nil {
		f["status.capacity"] = ""
	}
	for k, v := range c.Annotations {
		f["metadata.annotations["+k+"]"] = norm(v)
	}
	return f
}

// volumeFields are the fields of a volume that a binder or a provisioner
// sets.
func volumeFields(pv *v1.PersistentVolume, norm func(string) string) map[string]string {
	f := map[string]string{
		"status.phase":                       string(pv.Status.Phase),
		"status.message":                     norm(pv.Status.Message),
		"status.reason":                      pv.Status.Reason,
		"metadata.finalizers":                strings.Join(pv.Finalizers, ","),
		"metadata.deletionTimestamp":         fmt.Sprint(pv.DeletionTimestamp != nil),
		"spec.persistentVolumeReclaimPolicy": string(pv.Spec.PersistentVolumeReclaimPolicy),
		"spec.storageClassName":              norm(pv.Spec.StorageClassName),
		"spec.claimRef":                      "",
		"spec.nodeAffinity":                  "",
		"spec.source":                        "",
	}
	if r := pv.Spec.ClaimRef; r != nil {
		f["spec.claimRef"] = norm(fmt.Sprintf("%s %s %s/%s uid=%s", r.APIVersion, r.Kind, r.Namespace, r.Name, r.UID))
	}
	if a := pv.Spec.NodeAffinity; a != nil && a.Required != nil {
		f["spec.nodeAffinity"] = norm(fmt.Sprint(a.Required.NodeSelectorTerms))
	}
	switch {
	case pv.Spec.CSI != nil:
		f["spec.source"] = "csi " + pv.Spec.CSI.Driver
	case pv.Spec.GCEPersistentDisk != nil:
		f["spec.source"] = "gcePersistentDisk"
	}
	for k, v := range pv.Annotations {
		f["metadata.annotations["+k+"]"] = norm(v)
	}
	return f
}

// eventFields lists the events about the case's claims (in its namespace)
// and volumes (in "default") as "<kind> <name> <type> <reason>: <message>",
// each once: counts and sources are left out.
func (e *env) eventFields(ctx context.Context, norm func(string) string) map[string]string {
	e.t.Helper()
	volumes := map[string]bool{}
	for _, name := range e.hist.volumeNames() {
		volumes[name] = true
	}
	f := map[string]string{}
	for _, ns := range []string{e.ns, metav1.NamespaceDefault} {
		list, err := e.cs.CoreV1().Events(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			e.t.Fatalf("list events: %v", err)
		}
		for _, ev := range list.Items {
			o := ev.InvolvedObject
			if ns == metav1.NamespaceDefault && (o.Kind != "PersistentVolume" || !volumes[o.Name]) {
				continue
			}
			name := o.Name
			if o.Kind == "PersistentVolumeClaim" && o.UID != "" {
				name = string(o.UID)
			}
			f[norm(fmt.Sprintf("%s %s %s %s: %s", o.Kind, name, ev.Type, ev.Reason, ev.Message))] = "present"
		}
	}
	return f
}

// recorded are the checkpoints of every case of this test binary.
var recorded results

// difference is one field whose values differ between the binders.
type difference struct {
	tc, checkpoint, object, field string
	volbind, kcm                  string
}

// compare returns every field of every checkpoint whose value differs
// between the volbind and kcm results, and how many fields were compared
// per case. A checkpoint or case one binder lacks counts as different in
// every field.
func (r *results) compare() ([]difference, map[string]int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []difference
	compared := map[string]int{}
	vb, kcm := r.m["volbind"], r.m["kcm"]
	tcs := map[string]bool{}
	for tc := range vb {
		tcs[tc] = true
	}
	for tc := range kcm {
		tcs[tc] = true
	}
	for _, tc := range sortedKeys(tcs) {
		cps := map[string]bool{}
		for cp := range vb[tc] {
			cps[cp] = true
		}
		for cp := range kcm[tc] {
			cps[cp] = true
		}
		for _, cp := range sortedKeys(cps) {
			a, b := vb[tc][cp], kcm[tc][cp]
			objects := map[string]bool{}
			for o := range a {
				objects[o] = true
			}
			for o := range b {
				objects[o] = true
			}
			for _, o := range sortedKeys(objects) {
				fields := map[string]bool{}
				for f := range a[o] {
					fields[f] = true
				}
				for f := range b[o] {
					fields[f] = true
				}
				for _, f := range sortedKeys(fields) {
					compared[tc]++
					av, aok := a[o][f]
					bv, bok := b[o][f]
					if av != bv || aok != bok {
						out = append(out, difference{tc, cp, o, f, show(av, aok), show(bv, bok)})
					}
				}
			}
		}
	}
	return out, compared
}

// show is a field's value for the comparison table.
func show(v string, ok bool) string {
	switch {
	case !ok:
		return "(absent)"
	case v == "":
		return `""`
	}
	return v
}

func sortedKeys[V any](m map[string]V) []string {
	keys := slices.Collect(maps.Keys(m))
	sort.Strings(keys)
	return keys
}

// timestamp is for the comparison file's header.
func timestamp() string { return time.Now().UTC().Format("2006-01-02") }
