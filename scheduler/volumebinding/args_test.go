package volumebinding

import (
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
)

func TestDecodeArgs(t *testing.T) {
	a, err := decodeArgs(nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if a.bindTimeout != 600*time.Second || len(a.shape) != 2 {
		t.Errorf("defaults = %v, %v; want 600s and the two-point shape", a.bindTimeout, a.shape)
	}
	a, err = decodeArgs(&runtime.Unknown{Raw: []byte(`{"bindTimeoutSeconds": 30}`), ContentType: runtime.ContentTypeJSON}, false)
	if err != nil {
		t.Fatal(err)
	}
	if a.bindTimeout != 30*time.Second || len(a.shape) != 0 {
		t.Errorf("decoded = %v, %v; want 30s, no shape without StorageCapacityScoring", a.bindTimeout, a.shape)
	}
	for _, raw := range []string{`{"bindTimeoutSeconds": -1}`, `{"shape": [{"utilization": 50, "score": 11}]}`, `{"bindTimeoutSeconds": "x"}`} {
		if _, err := decodeArgs(&runtime.Unknown{Raw: []byte(raw), ContentType: runtime.ContentTypeJSON}, true); err == nil {
			t.Errorf("decodeArgs(%s) did not fail", raw)
		}
	}
}
