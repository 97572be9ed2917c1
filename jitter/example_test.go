package jitter_test

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/volbind/volbind/jitter"
	"k8s.io/client-go/util/workqueue"
	"k8s.io/utils/clock"
)

func ExampleEvery() {
	ctx, cancel := context.WithCancel(context.Background())
	runs := 0
	// Every millisecond, plus up to 10% jitter, on the real clock; the
	// third run cancels the loop.
	jitter.Every(ctx, clock.RealClock{}, time.Millisecond, 0.1, func(context.Context) {
		runs++
		if runs == 3 {
			cancel()
		}
	})
	fmt.Println("runs:", runs)
	// Output:
	// runs: 3
}

func ExampleResync() {
	q := workqueue.NewTypedDelayingQueue[string]()
	defer q.ShutDown()
	r, err := jitter.NewResync[string](q.Add, jitter.StringHash, jitter.ResyncConfig{Period: 100 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	keys := []string{"default/data", "default/logs", "prod/db"}
	for _, k := range keys {
		r.Add(k)
	}
	// Each key has its own stable offset within the period.
	for _, k := range keys {
		fmt.Printf("%s at %v\n", k, r.Offset(k))
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		r.Run(ctx)
	}()
	// A worker sees every key within a period.
	var got []string
	for len(got) < len(keys) {
		k, _ := q.Get()
		got = append(got, k)
		q.Done(k)
	}
	cancel()
	<-done
	slices.Sort(got)
	fmt.Println(got)
	// Output:
	// default/data at 89.2ms
	// default/logs at 99.4ms
	// prod/db at 33.8ms
	// [default/data default/logs prod/db]
}

// A Sweep resyncs keys that a sharded store holds already: it asks for one
// shard's keys at a time and keeps none itself.
func ExampleSweep() {
	shards := [][]string{{"default/data"}, {"default/logs", "prod/db"}, nil, {"prod/cache"}}
	keys := func(shard int, dst []string) []string { return append(dst, shards[shard]...) }
	q := workqueue.NewTypedDelayingQueue[string]()
	defer q.ShutDown()
	s, err := jitter.NewSweep(len(shards), keys, q.Add, jitter.ResyncConfig{Period: 100 * time.Millisecond})
	if err != nil {
		fmt.Println(err)
		return
	}
	// Each shard has its slot of the period.
	for i := range shards {
		fmt.Printf("shard %d at %v\n", i, s.Offset(i))
	}

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.Run(ctx)
	}()
	// A worker sees every key within a period.
	var got []string
	for len(got) < 4 {
		k, _ := q.Get()
		got = append(got, k)
		q.Done(k)
	}
	cancel()
	<-done
	slices.Sort(got)
	fmt.Println(got)
	// Output:
	// shard 0 at 0s
	// shard 1 at 25ms
	// shard 2 at 50ms
	// shard 3 at 75ms
	// [default/data default/logs prod/cache prod/db]
}
