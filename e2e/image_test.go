//go:build e2e && linux

package e2e

import (
	"bufio"
	"debug/buildinfo"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// imageUID is the user of the image (distroless's nonroot), and the
// Deployment's runAsUser.
const imageUID = 65532

// imageVersion is the tag the tests stamp into the image's binary.
const imageVersion = "v0.0.0-e2e.1"

// sharedDir returns a new directory that the image's user may read, removed
// at cleanup (t.TempDir's parents are private to root).
func sharedDir(t *testing.T, pattern string) string {
	t.Helper()
	dir, err := os.MkdirTemp("", pattern)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// buildImageBinary builds volbind as the Dockerfile does
// (hack/build-volbind.sh), stamped with version, into a directory the
// image's user may read.
func buildImageBinary(t *testing.T, version string) string {
	t.Helper()
	bin := filepath.Join(sharedDir(t, "volbind-e2e-image-"), "volbind")
	build := exec.CommandContext(t.Context(), "../hack/build-volbind.sh", bin, version)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("hack/build-volbind.sh: %v\n%s", err, out)
	}
	return bin
}

// restricted returns the command that runs bin with args as the image runs
// in the example Deployment: as user and group 65532 without supplementary
// groups, without capabilities (drop ALL) or a way to gain privileges, on a
// root filesystem mounted read-only (in a mount namespace of its own).
func restricted(bin string, args ...string) *exec.Cmd {
	uid := fmt.Sprint(imageUID)
	script := `mount -o remount,bind,ro / && exec setpriv --reuid="$1" --regid="$1" --clear-groups --no-new-privs ` +
		`--inh-caps=-all --bounding-set=-all -- "$2" "${@:3}"`
	argv := append([]string{"--mount", "--propagation", "private", "--", "bash", "-c", script, "restricted", uid, bin}, args...)
	return exec.Command("unshare", argv...)
}

// checkRestricted checks that process pid runs as the image's user, with
// no capabilities, on a read-only root filesystem.
func checkRestricted(t *testing.T, pid int) {
	t.Helper()
	status, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"Uid":    fmt.Sprintf("%d\t%d\t%d\t%d", imageUID, imageUID, imageUID, imageUID),
		"Gid":    fmt.Sprintf("%d\t%d\t%d\t%d", imageUID, imageUID, imageUID, imageUID),
		"Groups": "", "CapEff": "0000000000000000", "CapBnd": "0000000000000000", "NoNewPrivs": "1",
	}
	for line := range strings.SplitSeq(string(status), "\n") {
		key, value, _ := strings.Cut(line, ":")
		if w, ok := want[key]; ok {
			if got := strings.TrimSpace(value); got != w {
				t.Errorf("process %d: %s = %q, want %q", pid, key, got, w)
			}
			delete(want, key)
		}
	}
	if len(want) > 0 {
		t.Errorf("process %d: /proc status lacks %v", pid, want)
	}
	mounts, err := os.Open(fmt.Sprintf("/proc/%d/mountinfo", pid))
	if err != nil {
		t.Fatal(err)
	}
	defer mounts.Close()
	sc := bufio.NewScanner(mounts)
	for sc.Scan() {
		// ID parent major:minor root mountpoint options ...
		f := strings.Fields(sc.Text())
		if len(f) > 5 && f[4] == "/" {
			if !strings.HasPrefix(f[5], "ro,") && f[5] != "ro" {
				t.Errorf("process %d: / is mounted %s, want read-only", pid, f[5])
			}
			return
		}
	}
	t.Errorf("process %d: no root filesystem in its mountinfo", pid)
}

// TestImageBinary checks the program as the Dockerfile builds it: static
// (no interpreter, no shared library: it runs on distroless/static),
// built with -trimpath and CGO_ENABLED=0, its --version the stamped tag,
// and it starts as the image's non-root user on a read-only root
// filesystem (TestKubeControllerManagerMetrics runs it as a controller
// that way). The Dockerfile builds with the same script, from
// distroless/static as that user.
func TestImageBinary(t *testing.T) {
	bin := buildImageBinary(t, imageVersion)

	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			t.Errorf("%s has a %v program header: not a static binary", bin, p.Type)
		}
	}
	if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
		t.Errorf("%s imports shared libraries %v (%v)", bin, libs, err)
	}
	info, err := buildinfo.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if settings["-trimpath"] != "true" || settings["CGO_ENABLED"] != "0" {
		t.Errorf("build settings -trimpath=%q CGO_ENABLED=%q, want true and 0", settings["-trimpath"], settings["CGO_ENABLED"])
	}

	for _, tc := range []struct{ flag, want string }{
		{"--version", "volbind " + imageVersion + "\n"},
		{"--version=raw", `GitVersion:"` + imageVersion + `"`},
	} {
		cmd := restricted(bin, "controller", tc.flag)
		out, err := cmd.CombinedOutput()
		if err != nil || !strings.Contains(string(out), tc.want) || (tc.flag == "--version" && string(out) != tc.want) {
			t.Errorf("volbind controller %s as user %d on a read-only root = %q (%v), want %q", tc.flag, imageUID, out, err, tc.want)
		}
	}

	raw, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	dockerfile := string(raw)
	for _, want := range []string{"hack/build-volbind.sh /out/volbind \"$VERSION\"", "FROM gcr.io/distroless/static", ":nonroot\n",
		fmt.Sprintf("USER %d:%d", imageUID, imageUID)} {
		if !strings.Contains(dockerfile, want) {
			t.Errorf("Dockerfile lacks %q", want)
		}
	}
}
