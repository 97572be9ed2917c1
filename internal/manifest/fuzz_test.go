package manifest

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// FuzzLoadManifests feeds manifest decoding arbitrary input, seeded with
// the examples and known bad shapes. It must not panic; an error must be
// a *Error that names no Go type; what loads must be objects with
// a name, claims and pods with a namespace.
func FuzzLoadManifests(f *testing.F) {
	for _, name := range []string{"../../examples/cluster.yaml", "../../examples/list.json", "../../examples/pending.yaml"} {
		data, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(string(data))
	}
	for _, seed := range []string{
		"", "---\n", "hello\n", "- a\n- b\n", "42\n", "{}", "null", "[1, 2]",
		validPV, strings.Replace(validPV, "capacity:", "capacityy:", 1),
		strings.Replace(validPV, "accessModes: [ReadWriteOnce]", "accessModes: ReadWriteOnce", 1),
		strings.Replace(validPV, "storage: 1Gi", "storage: lots", 1),
		validPV + "  storageClassName: a\n  storageClassName: b\n",
		`{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"List","items":[null]}]}`,
		`{"apiVersion":"v1","kind":"PersistentVolumeClaimList","items":[{"metadata":{"name":"a"}}]}`,
		"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata: {name: c}\nspec:\n  selector:\n    matchExpressions: [{key: tier, operator: Near}]\n",
		"apiVersion: example.com/v1\nkind: Widget\n",
		"apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, image: i}]}\n",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		out := &Objects{}
		err := Load("fuzz.yaml", strings.NewReader(in), out)
		if err != nil {
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("error %v (%T) is not a *Error", err, err)
			}
			for _, goish := range []string{"Go struct", "Go value", "of type v1.", "interface {"} {
				if strings.Contains(err.Error(), goish) {
					t.Fatalf("error %q names a Go type", err)
				}
			}
			return
		}
		for _, pvc := range out.Claims {
			if pvc.Namespace == "" {
				t.Fatalf("claim %q has no namespace", pvc.Name)
			}
		}
		for _, pod := range out.Pods {
			if pod.Namespace == "" {
				t.Fatalf("pod %q has no namespace", pod.Name)
			}
		}
		// Validation must not panic on whatever decoded.
		_ = out.validate()
	})
}
