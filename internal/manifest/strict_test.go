package manifest

import (
	"errors"
	"fmt"
	"strings"
	"testing"
)

const validPV = `apiVersion: v1
kind: PersistentVolume
metadata:
  name: pv1
spec:
  capacity:
    storage: 1Gi
  accessModes: [ReadWriteOnce]
  hostPath:
    path: /tmp/pv1
`

// TestManifestErrorsNameTheProblem: every way a manifest can be wrong
// fails loading with an error naming the file, the document, the object
// and the field, and never a Go type.
func TestManifestErrorsNameTheProblem(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want []string // substrings of the error
	}{
		{name: "unknown field", in: strings.Replace(validPV, "capacity:", "capacityy:", 1),
			want: []string{"in.yaml: document 1 (PersistentVolume pv1)", `unknown field "spec.capacityy"`}},
		{name: "duplicate field", in: validPV + "  storageClassName: a\n  storageClassName: b\n",
			want: []string{"in.yaml: document 1 (PersistentVolume pv1)", "storageClassName"}},
		{name: "duplicate field in json", in: `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"pv1","name":"pv2"}}`,
			want: []string{"in.yaml: document 1 (PersistentVolume pv2)", `duplicate field "metadata.name"`}},
		{name: "bare scalar", in: "hello\n", want: []string{"in.yaml: document 1", `the document is the string "hello", not an object`}},
		{name: "list document", in: "- a\n- b\n", want: []string{"in.yaml: document 1", "the document is a list"}},
		{name: "wrong type", in: strings.Replace(validPV, "accessModes: [ReadWriteOnce]", "accessModes: ReadWriteOnce", 1),
			want: []string{"in.yaml: document 1 (PersistentVolume pv1)", `field "spec.accessModes": got a string, want a list`}},
		{name: "wrong quantity", in: strings.Replace(validPV, "storage: 1Gi", "storage: lots", 1),
			want: []string{"in.yaml: document 1 (PersistentVolume pv1)", "quantities must match"}},
		{name: "duplicate object", in: "apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: c\n  namespace: team-a\n---\n" +
			"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: c\n  namespace: team-a\n",
			want: []string{"in.yaml: document 2 (PersistentVolumeClaim team-a/c)", "the same object is defined in in.yaml: document 1"}},
		{name: "empty", in: "", want: []string{"in.yaml: no documents"}},
		{name: "separators only", in: "---\n---\n", want: []string{"in.yaml: no documents"}},
		{name: "unknown kind", in: "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n",
			want: []string{"in.yaml: document 1 (Widget w)", `unknown kind "Widget"`, "-allow-unknown"}},
		{name: "apiVersion v2", in: strings.Replace(validPV, "apiVersion: v1", "apiVersion: v2", 1),
			want: []string{"in.yaml: document 1 (PersistentVolume pv1)", `apiVersion "v2"`}},
		{name: "list item", in: `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"a"},"spec":{"capacityy":1}}]}`,
			want: []string{"in.yaml: document 1 item 1 (PersistentVolume a)", `unknown field "spec.capacityy"`}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := Load("in.yaml", strings.NewReader(tc.in), &Objects{})
			var me *Error
			if !errors.As(err, &me) {
				t.Fatalf("Load = %v, want a *Error", err)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			for _, goish := range []string{"Go ", "struct", "v1.", "[]v1", "interface"} {
				if strings.Contains(err.Error(), goish) {
					t.Errorf("error %q names a Go type (%q)", err, goish)
				}
			}
		})
	}
}

// TestInvalidObjectsAreListed: objects kube-apiserver would reject fail
// loading, all of them named with their file, document and fields.
func TestInvalidObjectsAreListed(t *testing.T) {
	t.Parallel()
	in := strings.Join([]string{
		strings.Replace(validPV, "storage: 1Gi", "storage: \"0\"", 1),
		strings.Replace(validPV, "accessModes: [ReadWriteOnce]", "", 1),
		strings.Replace(validPV, "  hostPath:\n    path: /tmp/pv1\n", "", 1),
		strings.Replace(validPV, "name: pv1", "name: Bad_Name!", 1),
		"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: c\nspec:\n  accessModes: [ReadWriteOnce]\n",
		"apiVersion: v1\nkind: PersistentVolumeClaim\nmetadata:\n  name: s\nspec:\n  accessModes: [ReadWriteOnce]\n  resources:\n    requests:\n      storage: 1Gi\n" +
			"  selector:\n    matchExpressions:\n    - {key: tier, operator: Near}\n",
	}, "---\n")
	// Names must differ to pass the duplicate check.
	for i := 1; i <= 3; i++ {
		in = strings.Replace(in, "name: pv1\n", fmt.Sprintf("name: pv%d-x\n", i+10), 1)
	}
	_, err := LoadFiles([]string{"-"}, strings.NewReader(in), Options{})
	var ie *InvalidObjectsError
	if !errors.As(err, &ie) {
		t.Fatalf("LoadFiles = %v, want an *InvalidObjectsError", err)
	}
	wantContains(t, "error", err.Error(),
		"6 invalid object(s)",
		"-: document 1: PersistentVolume \"pv11-x\" is invalid: spec.capacity[storage]",
		"-: document 2: PersistentVolume \"pv12-x\" is invalid: spec.accessModes: Required value",
		"-: document 3: PersistentVolume \"pv13-x\" is invalid: spec: Required value: must specify a volume type",
		"-: document 4: PersistentVolume \"Bad_Name!\" is invalid: metadata.name",
		"-: document 5: PersistentVolumeClaim \"c\" is invalid: spec.resources[storage]: Required value",
		`-: document 6: PersistentVolumeClaim "s" is invalid: spec.selector.matchExpressions[0].operator: Invalid value: "Near"`,
	)
}

// TestInvalidObjectsErrorIsBounded: the error names the first maxListed
// objects and counts the others.
func TestInvalidObjectsErrorIsBounded(t *testing.T) {
	t.Parallel()
	e := &InvalidObjectsError{}
	for i := range maxListed + 5 {
		e.Problems = append(e.Problems, fmt.Sprintf("problem %d", i))
	}
	msg := e.Error()
	if !strings.Contains(msg, fmt.Sprintf("problem %d", maxListed-1)) || strings.Contains(msg, fmt.Sprintf("problem %d", maxListed)) ||
		!strings.Contains(msg, "... and 5 more") {
		t.Errorf("Error() = %q, want the first %d problems and a count of 5 more", msg, maxListed)
	}
}
