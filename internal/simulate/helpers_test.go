package simulate

import "github.com/volbind/volbind/internal/testhelp"

// The assertions this package's tests share with the other commands'.
var (
	wantContains = testhelp.WantContains
	parsed       = testhelp.Parsed
	poll         = testhelp.Poll
)
