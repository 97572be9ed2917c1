package cli

import (
	"fmt"
	"io"
	"runtime/debug"

	apimachineryversion "k8s.io/apimachinery/pkg/version"
	"k8s.io/component-base/version"
)

// Version is component-base's version information with the module
// version of the build filled in: "go install ...@v1.2.3" records v1.2.3
// in the binary, while component-base's GitVersion is only set by -ldflags.
func Version() apimachineryversion.Info {
	v := version.Get()
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return v
	}
	if v.GitVersion == "" || v.GitVersion == "v0.0.0-master+$Format:%H$" {
		v.GitVersion = bi.Main.Version // "(devel)" when built from a checkout
	}
	for _, s := range bi.Settings {
		switch {
		case s.Key == "vcs.revision" && v.GitCommit == "$Format:%H$":
			v.GitCommit = s.Value
		case s.Key == "vcs.time" && v.BuildDate == "1970-01-01T00:00:00Z":
			v.BuildDate = s.Value
		case s.Key == "vcs.modified" && v.GitTreeState == "":
			v.GitTreeState = map[string]string{"true": "dirty", "false": "clean"}[s.Value]
		}
	}
	return v
}

// PrintVersion writes the version as kube-controller-manager's --version
// does: "volbind vX.Y.Z", or the whole structure for --version=raw.
func PrintVersion(w io.Writer, mode string) {
	if mode == "raw" {
		fmt.Fprintf(w, "%#v\n", Version())
		return
	}
	fmt.Fprintf(w, "volbind %s\n", Version().GitVersion)
}
