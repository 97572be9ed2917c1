package nodepool

import (
	"sync"
	"testing"
	"time"

	testingclock "k8s.io/utils/clock/testing"
)

func TestBootLimiter(t *testing.T) {
	t.Parallel()
	m5 := Shape{InstanceType: "m5", CapacityType: CapacitySpot, Zone: "a"}
	m5b := Shape{InstanceType: "m5", CapacityType: CapacitySpot, Zone: "b"}
	m5any := Shape{InstanceType: "m5", CapacityType: CapacitySpot}
	m5od := Shape{InstanceType: "m5", CapacityType: CapacityOnDemand, Zone: "a"}
	type step struct {
		advance time.Duration
		mark    *Shape
		check   Shape
		want    bool
	}
	tests := []struct {
		name  string
		ttl   time.Duration
		steps []step
	}{
		{"default is 3 minutes", 0, []step{
			{mark: &m5, check: m5, want: true},
			{advance: 3*time.Minute - time.Nanosecond, check: m5, want: true},
			{advance: time.Nanosecond, check: m5, want: false},
		}},
		{"configured time", time.Second, []step{
			{mark: &m5, check: m5, want: true},
			{advance: time.Second, check: m5, want: false},
		}},
		{"shapes are distinct", 0, []step{
			{mark: &m5, check: m5b, want: false},
			{check: m5od, want: false},
			{check: m5any, want: false},
		}},
		{"no zone means every zone", 0, []step{
			{mark: &m5any, check: m5, want: true},
			{check: m5b, want: true},
			{check: m5od, want: false},
		}},
		{"marking again does not extend", time.Minute, []step{
			{mark: &m5, check: m5, want: true},
			{advance: 30 * time.Second, mark: &m5, check: m5, want: true},
			{advance: 30 * time.Second, check: m5, want: false},
			{mark: &m5, check: m5, want: true},
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			clk := testingclock.NewFakePassiveClock(fakeNow)
			l := NewBootLimiter(BootLimiterConfig{Clock: clk, UnavailableFor: tc.ttl})
			for i, st := range tc.steps {
				clk.SetTime(clk.Now().Add(st.advance))
				if st.mark != nil {
					l.MarkUnavailable(*st.mark)
				}
				if got := l.Unavailable(st.check); got != st.want {
					t.Errorf("step %d: Unavailable(%+v) = %v, want %v", i, st.check, got, st.want)
				}
			}
		})
	}
}

func TestBootLimiterNodeAndLen(t *testing.T) {
	t.Parallel()
	clk := testingclock.NewFakePassiveClock(fakeNow)
	l := NewBootLimiter(BootLimiterConfig{Clock: clk})
	l.MarkNodeUnavailable(newNode("n", nodeType("c5"), zoneNode("a")), DefaultCapacityTypeKey)
	if !l.Unavailable(Shape{InstanceType: "c5", CapacityType: CapacityOnDemand, Zone: "a"}) {
		t.Errorf("node's shape (unlabelled capacity = on-demand) not unavailable")
	}
	l.MarkUnavailable(Shape{InstanceType: "x"})
	if got := l.Len(); got != 2 {
		t.Errorf("Len() = %d, want 2", got)
	}
	clk.SetTime(fakeNow.Add(DefaultUnavailableFor))
	if got := l.Len(); got != 0 {
		t.Errorf("Len() after expiry = %d, want 0", got)
	}
}

func TestBootLimiterConcurrent(t *testing.T) {
	t.Parallel()
	l := NewBootLimiter(BootLimiterConfig{})
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			sh := Shape{InstanceType: string(rune('a' + i))}
			for range 100 {
				l.MarkUnavailable(sh)
				if !l.Unavailable(sh) {
					t.Errorf("shape %v not unavailable right after marking", sh)
					return
				}
			}
		})
	}
	wg.Wait()
	if got := l.Len(); got != 8 {
		t.Errorf("Len() = %d, want 8", got)
	}
}
