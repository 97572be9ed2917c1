package chaos_test

import (
	"context"
	"fmt"

	"github.com/volbind/volbind/internal/chaos"
)

// Run one case: a cluster of 12 volumes and 12 claims, conflicts and
// errors on every verb, a crash at the Binder's 9th write (carried out)
// and churn, with informers. A failing run's Case.String() is the line
// that replays it.
func ExampleRun() {
	c, err := chaos.ParseCase("seed=5,objects=12,workers=4,available-delay=false,informers=true,async=false," +
		"classes=errors+churn+crash,churn=4,crash-at=9,crash-applied=true")
	if err != nil {
		panic(err)
	}
	res, err := chaos.Run(context.Background(), c)
	if err != nil {
		panic(err)
	}
	fmt.Println("Binders started:", res.Instances)
	fmt.Println("violations:", len(res.Violations))
	// Output:
	// Binders started: 2
	// violations: 0
}
