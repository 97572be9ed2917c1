package manifest

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func names[T interface{ GetName() string }](objs []T) []string {
	out := []string{}
	for _, o := range objs {
		out = append(out, o.GetName())
	}
	return out
}

func TestLoadManifestFiles(t *testing.T) {
	t.Parallel()
	got, err := LoadFiles([]string{"../../examples/cluster.yaml", "../../examples/list.json", "../../examples/pending.yaml"}, nil, Options{})
	if err != nil {
		t.Fatalf("LoadFiles: %v", err)
	}
	if diff := cmp.Diff([]string{"pv-small", "pv-medium", "pv-large", "pv-json", "local-a", "small", "medium"}, names(got.Volumes)); diff != "" {
		t.Errorf("volumes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"data-small", "data-medium", "data-reserved", "data-huge", "shared", "app-data", "cache", "logs", "scratch", "archive"}, names(got.Claims)); diff != "" {
		t.Errorf("claims (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"manual", "local", "standard"}, names(got.Classes)); diff != "" {
		t.Errorf("classes (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"node-a"}, names(got.Nodes)); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	if got.Claims[4].Namespace != "team-a" || got.Claims[0].Namespace != "default" {
		t.Errorf("claim namespaces = %q, %q; want team-a, default", got.Claims[4].Namespace, got.Claims[0].Namespace)
	}
	if len(got.Warnings) != 1 || !strings.Contains(got.Warnings[0], "cluster.yaml: document 9") || !strings.Contains(got.Warnings[0], "ConfigMap") {
		t.Errorf("warnings = %q, want one naming cluster.yaml document 9 and ConfigMap", got.Warnings)
	}
}

func TestLoadManifests(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		in        string
		volumes   int
		claims    int
		classes   int
		nodes     int
		pods      int
		warnings  int
		wantErr   string // substring; "" means no error
		wantDocNo int
		allow     bool // allowUnknown
	}{
		{name: "empty", in: "", wantErr: "no documents"},
		{name: "separators only", in: "---\n---\n", wantErr: "no documents"},
		{name: "comments only", in: "# nothing\n---\n# here\n", wantErr: "no documents"},
		{name: "json stream", in: `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"a"}}
{"apiVersion":"v1","kind":"PersistentVolumeClaim","metadata":{"name":"b"}}`, volumes: 1, claims: 1},
		{name: "unknown group is an error", in: "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n---\napiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: a\n", wantErr: `(Widget w): unknown kind "Widget" of apiVersion "example.com/v1" (-allow-unknown skips it)`, wantDocNo: 1},
		{name: "unknown group is skipped with -allow-unknown", in: "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n---\napiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: a\n", volumes: 1, warnings: 1, allow: true},
		{name: "apiVersion v2 is an error", in: "apiVersion: v2\nkind: PersistentVolume\nmetadata:\n  name: a\n", wantErr: `unknown kind "PersistentVolume" of apiVersion "v2"`, wantDocNo: 1},
		{name: "known but unused kind is skipped", in: "apiVersion: v1\nkind: Service\nmetadata:\n  name: s\n", warnings: 1},
		{name: "malformed yaml", in: "apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: a\n---\nkind: [unclosed\n", wantErr: "document 2", wantDocNo: 2},
		{name: "wrong field type", in: "apiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: a\nspec:\n  capacity: 12\n", wantErr: "document 1", wantDocNo: 1},
		{name: "no kind", in: "metadata:\n  name: a\n", wantErr: "apiVersion and kind are required", wantDocNo: 1},
		{name: "typed list", in: `{"apiVersion":"v1","kind":"PersistentVolumeClaimList","items":[{"metadata":{"name":"a"}},{"metadata":{"name":"b","namespace":"x"}}]}`, claims: 2},
		{name: "list in a list", in: `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"a"}}]},{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c"}}]}`, volumes: 1, warnings: 1},
		{name: "typed list of an unused kind", in: `{"apiVersion":"v1","kind":"ServiceList","items":[{"metadata":{"name":"a"}}]}`, warnings: 1},
		{name: "other objects", in: "apiVersion: storage.k8s.io/v1\nkind: StorageClass\nmetadata:\n  name: c\nprovisioner: x\n---\napiVersion: v1\nkind: Node\nmetadata:\n  name: node-1\n---\napiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-1\n", classes: 1, nodes: 1, pods: 1},
		{name: "comment-only documents are not counted", in: "# a comment\n---\n---\napiVersion: v1\nkind: PersistentVolume\nmetadata:\n  name: a\n---\nkind: [\n", wantErr: "document 2", wantDocNo: 2},
		{name: "malformed json", in: `{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"a"}} {"apiVersion": `, wantErr: "document 2", wantDocNo: 2},
		{name: "list with bad item", in: `{"apiVersion":"v1","kind":"List","items":[{"apiVersion":"v1","kind":"PersistentVolume","metadata":{"name":"a"}},{"apiVersion":"v1","kind":"PersistentVolume","spec":"x"}]}`, wantErr: "item 2", wantDocNo: 1},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			out := &Objects{allowUnknown: tc.allow}
			err := Load("in.yaml", strings.NewReader(tc.in), out)
			if tc.wantErr != "" {
				var me *Error
				if !errors.As(err, &me) || !strings.Contains(err.Error(), tc.wantErr) || me.File != "in.yaml" || me.Doc != tc.wantDocNo {
					t.Fatalf("Load error = %v, want a Error for in.yaml document %d containing %q", err, tc.wantDocNo, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Load: %v", err)
			}
			got := []int{len(out.Volumes), len(out.Claims), len(out.Classes), len(out.Nodes), len(out.Pods), len(out.Warnings)}
			want := []int{tc.volumes, tc.claims, tc.classes, tc.nodes, tc.pods, tc.warnings}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("volumes, claims, classes, nodes, pods, warnings (-want +got):\n%s\nwarnings: %q", diff, out.Warnings)
			}
			for _, c := range out.Claims {
				if c.Namespace == "" {
					t.Errorf("claim %s has no namespace, want %q", c.Name, "default")
				}
			}
		})
	}
}

func TestLoadManifestFilesMissing(t *testing.T) {
	t.Parallel()
	if _, err := LoadFiles([]string{"does-not-exist.yaml"}, nil, Options{}); err == nil || !strings.Contains(err.Error(), "does-not-exist.yaml") {
		t.Fatalf("LoadFiles(missing) error = %v, want one naming the file", err)
	}
}

func TestLoadManifestFilesStdin(t *testing.T) {
	t.Parallel()
	got, err := LoadFiles([]string{"-"}, strings.NewReader("kind: StorageClass\napiVersion: storage.k8s.io/v1\nmetadata:\n  name: from-stdin\nprovisioner: example.com/x\n"), Options{})
	if err != nil || len(got.Classes) != 1 || got.Classes[0].Name != "from-stdin" {
		t.Fatalf("LoadFiles(-) = %v, %v; want the class from-stdin", got, err)
	}
}
