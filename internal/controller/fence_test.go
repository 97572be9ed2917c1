package controller

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/client-go/kubernetes/fake"
	k8stesting "k8s.io/client-go/testing"
	"k8s.io/client-go/tools/leaderelection"
)

// fakeLeaseDuration is the lease duration of the fakeHolder's Lease.
const fakeLeaseDuration = 15 * time.Second

// fakeHolder is a leaseHolder whose Lease of fakeLeaseDuration was
// renewed age ago, as the elector's Check sees it.
type fakeHolder struct {
	leader bool
	age    time.Duration
}

func (h fakeHolder) IsLeader() bool { return h.leader }

func (h fakeHolder) Check(tolerance time.Duration) error {
	if h.leader && h.age > fakeLeaseDuration+tolerance {
		return errors.New("failed election to renew leadership")
	}
	return nil
}

func TestLeaseFence(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		holder  fakeHolder
		wantErr bool
	}{
		{name: "just renewed", holder: fakeHolder{leader: true, age: time.Second}},
		{name: "renewed within the deadline less a retry period", holder: fakeHolder{leader: true, age: 8 * time.Second}},
		{name: "renewed within the deadline, not within it less a retry period", holder: fakeHolder{leader: true, age: 9 * time.Second}, wantErr: true},
		{name: "about to expire", holder: fakeHolder{leader: true, age: 11 * time.Second}, wantErr: true},
		{name: "expired", holder: fakeHolder{leader: true, age: 20 * time.Second}, wantErr: true},
		{name: "not the leader", holder: fakeHolder{age: time.Second}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := newLeaseFence(tc.holder, fakeLeaseDuration, 10*time.Second, 2*time.Second).Allow(t.Context())
			if (err != nil) != tc.wantErr {
				t.Errorf("Allow = %v, want error %v", err, tc.wantErr)
			}
			if !tc.holder.leader && !errors.Is(err, errNotLeader) {
				t.Errorf("Allow = %v, want errNotLeader", err)
			}
		})
	}
}

// TestLeaseFenceOnElector: the fence of a real elector allows while it
// leads and refuses once its renewals fail, at the latest when it stops
// leading.
func TestLeaseFenceOnElector(t *testing.T) {
	t.Parallel()
	cs := fake.NewClientset()
	var unreachable atomic.Bool
	cs.PrependReactor("update", "leases", func(k8stesting.Action) (bool, runtime.Object, error) {
		if unreachable.Load() {
			return true, nil, errors.New("injected: the API server is unreachable")
		}
		return false, nil, nil
	})
	o := testControllerOptions(true)
	o.LeaseDuration, o.RenewDeadline, o.RetryPeriod = 600*time.Millisecond, 300*time.Millisecond, 20*time.Millisecond
	c := &controller{cs: cs, o: o}
	var fence *leaseFence
	refusedBeforeStop := make(chan bool, 1)
	le, err := leaderelection.NewLeaderElector(c.leaderElectionConfig(leaderelection.LeaderCallbacks{
		OnStartedLeading: func(context.Context) {},
		OnStoppedLeading: func() {
			refusedBeforeStop <- fence.Allow(context.Background()) != nil
		},
	}))
	if err != nil {
		t.Fatal(err)
	}
	fence = newLeaseFence(le, o.LeaseDuration, o.RenewDeadline, o.RetryPeriod)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() {
		defer close(done)
		le.Run(ctx)
	}()
	defer func() { cancel(); <-done }()
	poll(t, "leading", func(context.Context) bool { return le.IsLeader() })
	if err := fence.Allow(ctx); err != nil {
		t.Fatalf("Allow while leading = %v, want nil", err)
	}
	unreachable.Store(true)
	poll(t, "fence refuses", func(ctx context.Context) bool { return fence.Allow(ctx) != nil })
	<-done
	if !<-refusedBeforeStop {
		t.Errorf("the fence allowed when the elector stopped leading")
	}
}
