package bindertest_test

import (
	"context"
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volbind/volbind/binder/bindertest"
)

func TestListNodes(t *testing.T) {
	ctx := context.Background()
	srv := bindertest.New()
	for _, name := range []string{"node-b", "node-a"} {
		if _, err := srv.CreateNode(ctx, &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}}); err != nil {
			t.Fatalf("CreateNode(%q): %v", name, err)
		}
	}
	nodes, err := srv.ListNodes(ctx)
	if err != nil || len(nodes) != 2 || nodes[0].Name != "node-a" || nodes[1].Name != "node-b" {
		t.Fatalf("ListNodes() = %v, %v; want node-a, node-b", nodes, err)
	}
	nodes[0].Labels = map[string]string{"mutated": "yes"}
	if got, err := srv.GetNode(ctx, "node-a"); err != nil || got.Labels["mutated"] != "" {
		t.Errorf("GetNode(node-a) = %v, %v; the listed node is not a copy", got, err)
	}
	cancelled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := srv.ListNodes(cancelled); !errors.Is(err, context.Canceled) {
		t.Errorf("ListNodes(cancelled) error = %v, want context.Canceled", err)
	}
}
