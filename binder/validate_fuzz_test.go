package binder

import (
	"errors"
	"testing"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/volbind/volbind/binder/bindertest"
)

// FuzzValidateClaim feeds the Binder's claim check user input: the
// storage request, an access mode and a label selector requirement. It
// must not panic, must refuse only with an *InvalidObjectError, and must
// accept every claim kube-apiserver accepts (bindertest.Validate).
func FuzzValidateClaim(f *testing.F) {
	for _, s := range []struct{ qty, mode, key, op, value string }{
		{"10Gi", "ReadWriteOnce", "tier", "In", "fast"},
		{"1", "ReadWriteOncePod", "topology.kubernetes.io/zone", "NotIn", "us-east-1a"},
		{"500M", "ReadOnlyMany", "app", "Exists", ""},
		{"0", "ReadWriteMany", "app", "DoesNotExist", ""},
		{"-1Gi", "ReadSometimes", "tier", "Near", "x"},
		{"1.5Ti", "ReadWriteOnce", "bad key", "In", "bad value!"},
		{"1e3", "ReadWriteOnce", "example.com/disk", "In", ""},
		{"9223372036854775807", "ReadWriteOnce", "", "", ""},
	} {
		f.Add(s.qty, s.mode, s.key, s.op, s.value)
	}
	f.Fuzz(func(t *testing.T, qty, mode, key, op, value string) {
		q, err := resource.ParseQuantity(qty)
		if err != nil {
			return // manifests with unparsable quantities do not decode
		}
		pvc := newPVC("claim1", "1Gi")
		pvc.Spec.Resources.Requests[v1.ResourceStorage] = q
		pvc.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.PersistentVolumeAccessMode(mode)}
		req := metav1.LabelSelectorRequirement{Key: key, Operator: metav1.LabelSelectorOperator(op)}
		if value != "" {
			req.Values = []string{value}
		}
		pvc.Spec.Selector = &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{req}}
		checkAgainstAPI(t, validateClaim(pvc), bindertest.Validate(pvc))
	})
}

// FuzzValidateVolume is FuzzValidateClaim for a volume's capacity and
// access mode.
func FuzzValidateVolume(f *testing.F) {
	for _, s := range []struct{ qty, mode string }{
		{"10Gi", "ReadWriteOnce"}, {"0", "ReadWriteOnce"}, {"-5", "ReadOnlyMany"}, {"1m", "ReadWriteMany"},
		{"100Ti", "ReadWriteOncePod"}, {"1Ki", "ReadSometimes"}, {"0.5", ""},
	} {
		f.Add(s.qty, s.mode)
	}
	f.Fuzz(func(t *testing.T, qty, mode string) {
		q, err := resource.ParseQuantity(qty)
		if err != nil {
			return
		}
		pv := newPV("pv1", "1Gi")
		pv.Spec.Capacity[v1.ResourceStorage] = q
		pv.Spec.AccessModes = []v1.PersistentVolumeAccessMode{v1.PersistentVolumeAccessMode(mode)}
		checkAgainstAPI(t, validateVolume(pv), bindertest.Validate(pv))
	})
}

// checkAgainstAPI checks the Binder's verdict against the API's.
func checkAgainstAPI(t *testing.T, binderErr, apiErr error) {
	t.Helper()
	var ie *InvalidObjectError
	if binderErr != nil && (!errors.As(binderErr, &ie) || !errors.Is(binderErr, ErrInvalidObject) || ie.Problem == "") {
		t.Fatalf("Binder error %v is not an *InvalidObjectError with a problem", binderErr)
	}
	if apiErr == nil && binderErr != nil {
		t.Fatalf("the API accepts the object, the Binder refuses it: %v", binderErr)
	}
}
