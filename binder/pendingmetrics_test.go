package binder

import (
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	v1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/component-helpers/storage/volume"
	"k8s.io/utils/ptr"
)

// TestPendingClaimAge: volbind_binder_pending_claim_max_age_seconds is the
// age of the oldest Pending claim per namespace and class, at the time of
// the scrape; Bound and Lost claims and claims waiting for their first
// consumer are left out, a claim whose node was selected is not.
func TestPendingClaimAge(t *testing.T) {
	t.Parallel()
	created := func(ago time.Duration) pvcOpt {
		return func(pvc *v1.PersistentVolumeClaim) {
			pvc.CreationTimestamp = metav1.NewTime(time.Unix(1_000_000, 0).Add(-ago))
		}
	}
	e := newEnv(t,
		newClass("gold", storagev1.VolumeBindingImmediate, false),
		newClass("late", storagev1.VolumeBindingWaitForFirstConsumer, false),
		newPVC("old", "1Gi", pvcClass(ptr.To("gold")), created(10*time.Minute)),
		newPVC("young", "1Gi", pvcClass(ptr.To("gold")), created(2*time.Minute)),
		newPVC("unclassed", "1Gi", created(time.Minute)),
		newPVC("bound", "1Gi", pvcClass(ptr.To("gold")), pvcBound("pv1"), created(time.Hour)),
		newPVC("lost", "1Gi", pvcClass(ptr.To("gold")), pvcPhase(v1.ClaimLost), created(time.Hour)),
		newPVC("no-consumer", "1Gi", pvcClass(ptr.To("late")), created(time.Hour)),
		newPVC("scheduled", "1Gi", pvcClass(ptr.To("late")), created(20*time.Minute), func(pvc *v1.PersistentVolumeClaim) {
			pvc.Annotations = map[string]string{volume.AnnSelectedNode: "node1"}
		}),
	)
	reg := prometheus.NewRegistry()
	e.newBinder(Config{Registerer: reg})

	const want = `
# HELP volbind_binder_pending_claim_max_age_seconds Age of the oldest Pending claim of the namespace and storage class, from its creation. Claims of a WaitForFirstConsumer class that no pod has been scheduled for yet wait by design and are left out.
# TYPE volbind_binder_pending_claim_max_age_seconds gauge
volbind_binder_pending_claim_max_age_seconds{namespace="default",storage_class=""} 60
volbind_binder_pending_claim_max_age_seconds{namespace="default",storage_class="gold"} 600
volbind_binder_pending_claim_max_age_seconds{namespace="default",storage_class="late"} 1200
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "volbind_binder_pending_claim_max_age_seconds"); err != nil {
		t.Error(err)
	}
	e.fc.Step(time.Minute)
	if _, got, _ := sample(t, reg, "volbind_binder_pending_claim_max_age_seconds", "namespace=default", "storage_class=gold"); got != 660 {
		t.Errorf("age a minute later = %v, want 660", got)
	}
}
