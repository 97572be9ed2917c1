package chaos

import (
	"errors"
	"math/rand/v2"
	"sync"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/volbind/volbind/binder/bindertest"
)

// readFaults fails reads right after successful storage calls
// (FailedReads): the next read of the volume a Delete, Recycle or
// Provision call was for, and of its claim, fails with an internal error
// or a timeout, when the Binder reads again to check or record what the
// call did. A nil readFaults arms nothing.
type readFaults struct {
	srv *bindertest.Server

	// mu guards the fields below.
	mu      sync.Mutex
	rng     *rand.Rand
	stopped bool
	disarm  []func()
}

func newReadFaults(srv *bindertest.Server, seed int64) *readFaults {
	return &readFaults{srv: srv, rng: rand.New(rand.NewPCG(uint64(seed), 0x4ead))}
}

// afterReclaim arms the failed reads after a Delete or Recycle of pv.
func (f *readFaults) afterReclaim(pv *v1.PersistentVolume) {
	ns, name := "", ""
	if ref := pv.Spec.ClaimRef; ref != nil {
		ns, name = ref.Namespace, ref.Name
	}
	f.after(pv.Name, ns, name)
}

// after arms a failed read of the named volume and, when claim is not
// empty, of the claim namespace/claim.
func (f *readFaults) after(volume, namespace, claim string) {
	if f == nil {
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.stopped {
		return
	}
	faults := []bindertest.Fault{f.faultLocked(bindertest.KindVolume, "", volume)}
	if claim != "" {
		faults = append(faults, f.faultLocked(bindertest.KindClaim, namespace, claim))
	}
	for _, flt := range faults {
		f.disarm = append(f.disarm, f.srv.ArmFaults(flt))
	}
}

// faultLocked returns a fault that fails the next read of one object.
func (f *readFaults) faultLocked(kind bindertest.Kind, namespace, name string) bindertest.Fault {
	flt := bindertest.Fault{Verb: bindertest.VerbGet, Kind: kind, Namespace: namespace, Name: name}
	if f.rng.IntN(2) == 0 {
		flt.Timeout = true
	} else {
		flt.Err = apierrors.NewInternalError(errors.New("chaos: injected read failure"))
	}
	return flt
}

// stop removes the faults not fired yet and arms no more.
func (f *readFaults) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stopped = true
	for _, d := range f.disarm {
		d()
	}
	f.disarm = nil
}
