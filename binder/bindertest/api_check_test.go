package bindertest_test

import (
	"github.com/volbind/volbind/binder"
	"github.com/volbind/volbind/binder/bindertest"
	"github.com/volbind/volbind/recycler"
)

// The Server implements the APIs of the binder and the recycler, and is the
// binder's NodeGetter.
var (
	_ binder.API        = (*bindertest.Server)(nil)
	_ binder.NodeGetter = (*bindertest.Server)(nil)
	_ recycler.PodAPI   = (*bindertest.Server)(nil)
)
