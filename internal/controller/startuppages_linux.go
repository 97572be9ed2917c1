//go:build linux

package controller

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// releaseStartupPages unmaps the pages of the executable's read-only file
// mappings (its code, read-only data and symbol tables) from the process,
// and returns how many bytes of them were resident before. The kernel
// keeps them in its page cache; the next access to one maps it again with a
// minor fault. Called once start-up is over, it leaves resident only what
// the controller then runs: the package initializers, flag parsing and
// client set-up of a Kubernetes program touch most of its binary once.
// Measured on the real-cluster benchmark (5,000 pairs, hack/bench-real.sh):
// 48 MiB of the 107 MB binary were resident after start-up, and 7.4 MiB of
// them were referenced during the whole load that followed.
//
// Only mappings of the executable that are read-only, private and hold no
// anonymous (copied-on-write) page are released, so no content can change.
func releaseStartupPages() (int64, error) {
	regions, err := executableReadOnlyRegions()
	if err != nil {
		return 0, fmt.Errorf("release start-up pages: %w", err)
	}
	var released int64
	for _, r := range regions {
		if _, _, errno := syscall.Syscall(syscall.SYS_MADVISE, r.start, r.end-r.start, syscall.MADV_DONTNEED); errno != 0 {
			return released, fmt.Errorf("release start-up pages: madvise %#x-%#x: %w", r.start, r.end, errno)
		}
		released += r.rss
	}
	return released, nil
}

// executableReadOnlyRegions returns the mappings of the running
// executable that readOnlyRegions keeps, read from /proc/self/smaps.
func executableReadOnlyRegions() ([]region, error) {
	exe, err := os.Readlink("/proc/self/exe")
	if err != nil {
		return nil, err
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readOnlyRegions(f, exe)
}

// region is one mapping of /proc/PID/smaps and its resident bytes.
type region struct {
	start, end uintptr
	rss        int64
}

// readOnlyRegions parses smaps and returns the mappings of path that are
// read-only and private (r-xp, r--p) and have no anonymous page.
func readOnlyRegions(smaps io.Reader, path string) ([]region, error) {
	var out []region
	var cur *region // the current mapping, if it qualifies so far
	var anon bool
	flush := func() {
		if cur != nil && !anon {
			out = append(out, *cur)
		}
		cur, anon = nil, false
	}
	sc := bufio.NewScanner(smaps)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if !strings.HasSuffix(fields[0], ":") { // a mapping's header: "start-end perms offset dev inode path"
			flush()
			if len(fields) < 6 || (fields[1] != "r-xp" && fields[1] != "r--p") || strings.Join(fields[5:], " ") != path {
				continue
			}
			start, end, ok := strings.Cut(fields[0], "-")
			s, err1 := strconv.ParseUint(start, 16, 64)
			e, err2 := strconv.ParseUint(end, 16, 64)
			if !ok || err1 != nil || err2 != nil || e <= s {
				return nil, fmt.Errorf("smaps: bad mapping %q", line)
			}
			cur = &region{start: uintptr(s), end: uintptr(e)}
			continue
		}
		if cur == nil || len(fields) < 2 {
			continue
		}
		switch fields[0] {
		case "Rss:":
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				return nil, fmt.Errorf("smaps: bad line %q", line)
			}
			cur.rss = kb << 10
		case "Anonymous:":
			anon = fields[1] != "0"
		}
	}
	flush()
	return out, sc.Err()
}
