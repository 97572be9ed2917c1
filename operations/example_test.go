package operations_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/volbind/volbind/operations"
	testingclock "k8s.io/utils/clock/testing"
)

func ExampleMap() {
	m := operations.New(operations.Config{})
	defer m.Shutdown()

	name := operations.VolumeOpName("delete", "pv-1", "6f1c2a4e")
	release := make(chan struct{})
	err := m.Run(context.Background(), name, func(ctx context.Context) error {
		<-release // delete the volume in the storage backend
		return nil
	})
	fmt.Println("first:", err)

	// The next sync of pv-1 comes while the delete is still running.
	err = m.Run(context.Background(), name, func(ctx context.Context) error { return nil })
	fmt.Println("second:", errors.Is(err, operations.ErrAlreadyRunning), m.IsPending(name))

	close(release)
	if err := m.Wait(context.Background()); err != nil {
		fmt.Println(err)
	}
	fmt.Println("pending after Wait:", m.IsPending(name))
	// Output:
	// first: <nil>
	// second: true true
	// pending after Wait: false
}

func ExampleMap_backoff() {
	fc := testingclock.NewFakeClock(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	m := operations.New(operations.Config{Clock: fc})
	defer m.Shutdown()

	name := operations.ClaimOpName("provision", "default", "data", "0a2b")
	fail := func(context.Context) error { return errors.New("backend unavailable") }
	_ = m.Run(context.Background(), name, fail)
	_ = m.Wait(context.Background())

	err := m.Run(context.Background(), name, fail)
	var backoff *operations.BackoffError
	if errors.As(err, &backoff) {
		fmt.Println("refused until", backoff.Until.Format(time.TimeOnly+".000"), "after:", backoff.LastError)
	}

	fc.Step(operations.DefaultInitialDelay + time.Millisecond)
	fmt.Println("after the backoff:", m.Run(context.Background(), name, func(context.Context) error { return nil }))
	_ = m.Wait(context.Background())
	// Output:
	// refused until 00:00:00.500 after: backend unavailable
	// after the backoff: <nil>
}

func ExampleLocks() {
	var locks operations.Locks // the zero value is ready to use

	// SetUp of a starting pod holds the volume...
	locks.Lock("pvc-1")
	// ...so TearDown of a dying pod on the same volume must wait,
	fmt.Println("TearDown may start:", locks.TryLock("pvc-1"))
	// while another volume is independent.
	fmt.Println("other volume:", locks.TryLock("pvc-2"))
	locks.Unlock("pvc-2")
	locks.Unlock("pvc-1")
	fmt.Println("after SetUp:", locks.TryLock("pvc-1"))
	locks.Unlock("pvc-1")
	// Output:
	// TearDown may start: false
	// other volume: true
	// after SetUp: true
}

func ExampleVolumeOpName() {
	fmt.Println(operations.VolumeOpName("delete", "pv-1", "6f1c2a4e"))
	fmt.Println(operations.ClaimOpName("provision", "default", "data", "0a2b"))
	// Output:
	// delete-pv-1[6f1c2a4e]
	// provision-default/data[0a2b]
}
