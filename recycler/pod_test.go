package recycler_test

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/utils/ptr"

	"github.com/volbind/volbind/recycler"
	"github.com/volbind/volbind/recycler/recyclertest"
)

func TestCanRecycle(t *testing.T) {
	withSource := func(s v1.PersistentVolumeSource) *v1.PersistentVolume {
		pv := nfsPV("pv1", "1Gi")
		pv.Spec.PersistentVolumeSource = s
		return pv
	}
	tests := []struct {
		name       string
		pv         *v1.PersistentVolume
		wantErr    bool
		wantInText string
	}{
		{name: "nfs", pv: nfsPV("pv1", "1Gi")},
		{name: "hostPath", pv: hostPathPV("pv1", "1Gi")},
		{name: "nil", pv: nil, wantErr: true, wantInText: "nil volume"},
		{name: "no name", pv: nfsPV("", "1Gi"), wantErr: true, wantInText: "empty name"},
		{name: "name too long for the pod", pv: nfsPV(strings.Repeat("a", 250), "1Gi"), wantErr: true, wantInText: "recycler pod name"},
		{name: "csi", pv: withSource(v1.PersistentVolumeSource{CSI: &v1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: "vol-1"}}), wantErr: true, wantInText: "csi ebs.csi.aws.com"},
		{name: "local", pv: withSource(v1.PersistentVolumeSource{Local: &v1.LocalVolumeSource{Path: "/mnt/disk1"}}), wantErr: true, wantInText: "local"},
		{name: "iscsi", pv: withSource(v1.PersistentVolumeSource{ISCSI: &v1.ISCSIPersistentVolumeSource{TargetPortal: "10.0.0.1", IQN: "iqn", Lun: 0}}), wantErr: true, wantInText: "iscsi"},
		{name: "no source", pv: withSource(v1.PersistentVolumeSource{}), wantErr: true, wantInText: "not supported"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := recycler.CanRecycle(tc.pv)
			if (err != nil) != tc.wantErr {
				t.Fatalf("CanRecycle() = %v, want error %v", err, tc.wantErr)
			}
			if !tc.wantErr {
				return
			}
			if !errors.Is(err, recycler.ErrUnsupportedVolume) {
				t.Errorf("errors.Is(%v, ErrUnsupportedVolume) = false, want true", err)
			}
			if !strings.Contains(err.Error(), tc.wantInText) {
				t.Errorf("error %q does not contain %q", err, tc.wantInText)
			}

			// Recycle refuses the volume the same way, without an API call.
			h := newHarness(t, recycler.Config{})
			if err := h.recycle(context.Background(), tc.pv); !errors.Is(err, recycler.ErrUnsupportedVolume) {
				t.Errorf("Recycle() = %v, want ErrUnsupportedVolume", err)
			}
			if _, err := h.r.PodFor(tc.pv); !errors.Is(err, recycler.ErrUnsupportedVolume) {
				t.Errorf("PodFor() = %v, want ErrUnsupportedVolume", err)
			}
			if _, err := h.r.Timeout(tc.pv); !errors.Is(err, recycler.ErrUnsupportedVolume) {
				t.Errorf("Timeout() = %v, want ErrUnsupportedVolume", err)
			}
			want := map[recyclertest.Verb]int{recyclertest.Create: 0, recyclertest.Get: 0, recyclertest.Delete: 0, recyclertest.Watch: 0}
			if diff := cmp.Diff(want, calls(h.pods)); diff != "" {
				t.Errorf("calls (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNewValidatesTemplate(t *testing.T) {
	valid := func(edit func(*v1.Pod)) *v1.Pod {
		p := recycler.DefaultPodTemplate()
		edit(p)
		return p
	}
	tests := []struct {
		name       string
		template   *v1.Pod
		wantInText string // "" means valid
	}{
		{name: "default", template: recycler.DefaultPodTemplate()},
		{name: "custom image and namespace", template: valid(func(p *v1.Pod) {
			p.Namespace = "recycling"
			p.Spec.Containers[0].Image = "registry.example.com/scrubber:v2"
		})},
		{name: "mounted by an init container only", template: valid(func(p *v1.Pod) {
			p.Spec.InitContainers = []v1.Container{{Name: "scrub", Image: "busybox", VolumeMounts: p.Spec.Containers[0].VolumeMounts}}
			p.Spec.Containers[0].VolumeMounts = nil
		})},
		{name: "restart policy OnFailure", template: valid(func(p *v1.Pod) { p.Spec.RestartPolicy = v1.RestartPolicyOnFailure })},
		{name: "empty restart policy", template: valid(func(p *v1.Pod) { p.Spec.RestartPolicy = "" })},
		{name: "no volume", template: valid(func(p *v1.Pod) { p.Spec.Volumes = nil }), wantInText: "no volume"},
		{name: "no container", template: valid(func(p *v1.Pod) { p.Spec.Containers = nil }), wantInText: "no container"},
		{name: "first volume not mounted", template: valid(func(p *v1.Pod) {
			p.Spec.Volumes = append([]v1.Volume{{Name: "scratch"}}, p.Spec.Volumes...)
		}), wantInText: `no container mounts the first volume "scratch"`},
		{name: "restart policy Always", template: valid(func(p *v1.Pod) { p.Spec.RestartPolicy = v1.RestartPolicyAlways }), wantInText: "restart policy Always"},
		{name: "invalid namespace", template: valid(func(p *v1.Pod) { p.Namespace = "Not_Valid" }), wantInText: `namespace "Not_Valid"`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r, err := recycler.New(recyclertest.New(), recycler.Config{PodTemplate: tc.template})
			if tc.wantInText == "" {
				if err != nil || r == nil {
					t.Fatalf("New() = %v, %v, want a Recycler", r, err)
				}
				return
			}
			if !errors.Is(err, recycler.ErrInvalidTemplate) {
				t.Fatalf("New() error = %v, want ErrInvalidTemplate", err)
			}
			if !strings.Contains(err.Error(), tc.wantInText) {
				t.Errorf("error %q does not contain %q", err, tc.wantInText)
			}
		})
	}
	if _, err := recycler.New(nil, recycler.Config{}); err == nil {
		t.Error("New(nil) = nil error, want an error")
	}
}

func TestPodFor(t *testing.T) {
	custom := recycler.DefaultPodTemplate()
	custom.Name = "ignored"
	custom.GenerateName = "pv-recycler-"
	custom.Namespace = "recycling"
	custom.Labels = map[string]string{"app": "scrubber"}
	custom.Annotations = map[string]string{"team": "storage"}
	custom.Spec.RestartPolicy = ""
	custom.Spec.Containers[0].Image = "registry.example.com/scrubber:v2"
	custom.Spec.Volumes[0].VolumeSource = v1.VolumeSource{EmptyDir: &v1.EmptyDirVolumeSource{}}

	pods := recyclertest.New()
	r, err := recycler.New(pods, recycler.Config{PodTemplate: custom})
	if err != nil {
		t.Fatal(err)
	}
	// New copied the template: changing it now changes nothing.
	custom.Spec.Containers[0].Image = "changed"

	pv := hostPathPV("pv1", "2Gi")
	got, err := r.PodFor(pv)
	if err != nil {
		t.Fatal(err)
	}
	want := recycler.DefaultPodTemplate()
	want.Name = "recycler-for-pv1"
	want.Namespace = "recycling"
	want.Labels = map[string]string{"app": "scrubber"}
	want.Annotations = map[string]string{"team": "storage", recycler.AnnVolume: "pv1", recycler.AnnVolumeUID: "pv-uid-pv1"}
	want.Spec.RestartPolicy = v1.RestartPolicyNever
	want.Spec.Containers[0].Image = "registry.example.com/scrubber:v2"
	want.Spec.Volumes[0].VolumeSource = v1.VolumeSource{HostPath: &v1.HostPathVolumeSource{Path: "/data/pv1"}}
	want.Spec.ActiveDeadlineSeconds = ptr.To[int64](60 + 2*30)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("PodFor() (-want +got):\n%s", diff)
	}

	// Recycle creates exactly that pod.
	var created *v1.Pod
	pods.OnCreate(func(p *v1.Pod) { created = p })
	pods.FinishOnCreate(&v1.PodStatus{Phase: v1.PodSucceeded})
	if err := r.Recycle(context.Background(), pv); err != nil {
		t.Fatalf("Recycle() = %v", err)
	}
	created.UID, created.ResourceVersion = "", ""
	if diff := cmp.Diff(want, created); diff != "" {
		t.Errorf("created pod (-want +got):\n%s", diff)
	}
}

func TestDefaultPodTemplate(t *testing.T) {
	p := recycler.DefaultPodTemplate()
	if p.Namespace != metav1.NamespaceDefault || p.Spec.RestartPolicy != v1.RestartPolicyNever {
		t.Errorf("namespace, restart policy = %q, %q, want default, Never", p.Namespace, p.Spec.RestartPolicy)
	}
	c := p.Spec.Containers[0]
	wantArgs := []string{"-c", `test -e /scrub && find /scrub -mindepth 1 -delete && test -z "$(ls -A /scrub)" || exit 1`}
	if c.Image != recycler.DefaultImage || !strings.HasPrefix(c.Image, "busybox:") ||
		!cmp.Equal([]string{"/bin/sh"}, c.Command) || !cmp.Equal(wantArgs, c.Args) {
		t.Errorf("container = %s %v %q, want busybox running the scrub script", c.Image, c.Command, c.Args)
	}
	wantMounts := []v1.VolumeMount{{Name: p.Spec.Volumes[0].Name, MountPath: "/scrub"}}
	if diff := cmp.Diff(wantMounts, c.VolumeMounts); diff != "" {
		t.Errorf("mounts (-want +got):\n%s", diff)
	}
	// Every call returns a new copy.
	p.Spec.Containers[0].Image = "changed"
	if got := recycler.DefaultPodTemplate().Spec.Containers[0].Image; got != recycler.DefaultImage {
		t.Errorf("DefaultPodTemplate() image = %q after a caller changed its copy", got)
	}
	if got := recycler.PodName("pv-1"); got != "recycler-for-pv-1" {
		t.Errorf("PodName(pv-1) = %q, want recycler-for-pv-1", got)
	}
}

func TestTimeoutFor(t *testing.T) {
	withCapacity := func(q string) *v1.PersistentVolume { return nfsPV("pv1", q) }
	huge := nfsPV("pv1", "1Gi")
	huge.Spec.Capacity[v1.ResourceStorage] = *resource.NewQuantity(math.MaxInt64, resource.BinarySI)
	noCapacity := nfsPV("pv1", "1Gi")
	noCapacity.Spec.Capacity = nil
	nfs := recycler.Timeout{Minimum: recycler.DefaultNFSMinimumTimeout, PerGiB: recycler.DefaultNFSTimeoutPerGiB}
	tests := []struct {
		name    string
		timeout recycler.Timeout
		pv      *v1.PersistentVolume
		want    time.Duration
	}{
		{"nil volume", nfs, nil, 300 * time.Second},
		{"no capacity", nfs, noCapacity, 300 * time.Second},
		{"below 1Gi", nfs, withCapacity("1023Mi"), 300 * time.Second},
		{"1Gi", nfs, withCapacity("1Gi"), 330 * time.Second},
		{"decimal 100G is 93 whole GiB", nfs, withCapacity("100G"), 300*time.Second + 93*30*time.Second},
		{"1Ti", nfs, withCapacity("1Ti"), 300*time.Second + 1024*30*time.Second},
		{"overflow saturates", nfs, huge, time.Duration(math.MaxInt64)},
		{"zero increment", recycler.Timeout{Minimum: time.Minute}, withCapacity("10Gi"), time.Minute},
		{"negative minimum counts as zero", recycler.Timeout{Minimum: -time.Hour, PerGiB: time.Second}, withCapacity("10Gi"), 10 * time.Second},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.timeout.For(tc.pv); got != tc.want {
				t.Errorf("For() = %v, want %v", got, tc.want)
			}
		})
	}
}
