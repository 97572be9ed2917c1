//go:build linux

package controller

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestReadOnlyRegions(t *testing.T) {
	t.Parallel()
	const smaps = `00400000-00600000 r-xp 00000000 fe:00 42   /usr/bin/volbind
Rss:                1024 kB
Anonymous:             0 kB
VmFlags: rd ex mr mw me
00600000-00700000 r--p 00200000 fe:00 42   /usr/bin/volbind
Rss:                  8 kB
Anonymous:             0 kB
00700000-00710000 r--p 00300000 fe:00 42   /usr/bin/volbind
Rss:                  4 kB
Anonymous:             4 kB
00710000-00720000 rw-p 00310000 fe:00 42   /usr/bin/volbind
Rss:                  4 kB
Anonymous:             0 kB
00800000-00900000 r-xp 00000000 fe:00 43   /usr/lib/libc.so.6
Rss:                 64 kB
Anonymous:             0 kB
7f0000000000-7f0000100000 rw-p 00000000 00:00 0
Rss:                 64 kB
Anonymous:            64 kB
`
	got, err := readOnlyRegions(strings.NewReader(smaps), "/usr/bin/volbind")
	if err != nil {
		t.Fatal(err)
	}
	// The code and the untouched read-only data; not the page the loader
	// copied (Anonymous), the writable data, another file or anonymous memory.
	want := []region{{start: 0x400000, end: 0x600000, rss: 1024 << 10}, {start: 0x600000, end: 0x700000, rss: 8 << 10}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(region{})); diff != "" {
		t.Errorf("readOnlyRegions (-want +got):\n%s", diff)
	}
	if _, err := readOnlyRegions(strings.NewReader("zz-00400000 r-xp 0 fe:00 42 /usr/bin/volbind\n"), "/usr/bin/volbind"); err == nil {
		t.Errorf("readOnlyRegions(bad address): no error")
	}
}

// TestReleaseStartupPages releases the test binary's own pages: they stop
// being resident, and the program goes on running from them.
func TestReleaseStartupPages(t *testing.T) {
	resident := func() int64 {
		regions, err := executableReadOnlyRegions()
		if err != nil {
			t.Fatal(err)
		}
		var n int64
		for _, r := range regions {
			n += r.rss
		}
		return n
	}
	before := resident()
	if before == 0 {
		t.Fatal("no resident read-only mapping of the executable found in /proc/self/smaps")
	}
	released, err := releaseStartupPages()
	if err != nil {
		t.Fatal(err)
	}
	after := resident()
	if released < before/2 || after > before/2 {
		t.Errorf("resident read-only pages of the executable: %d bytes before, %d after, %d reported released; want most of them gone",
			before, after, released)
	}
}
