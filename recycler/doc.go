// Package recycler scrubs released PersistentVolumes whose reclaim policy is
// Recycle, as kube-controller-manager's NFS and HostPath recyclers do: it
// runs a pod that mounts the volume and deletes everything on it, waits for
// the pod to succeed or fail, and deletes the pod.
//
// A Recycler (New, or NewForClientset for a client-go clientset) talks to
// pods through PodAPI, a four-call interface users wire to their own client;
// ClientsetPods adapts kubernetes.Interface, binder/bindertest's in-memory
// API implements it too, and recyclertest holds a small fake for tests.
//
// Recycle blocks for one volume:
//
//   - The pod is built from Config.PodTemplate (default DefaultPodTemplate: a
//     busybox container running ScrubScript on the volume mounted at /scrub;
//     New rejects a template that cannot work with ErrInvalidTemplate). Its
//     first volume gets the PersistentVolume's source; PodFor shows the pod
//     Recycle would create. Only NFS (server and path) and HostPath (path)
//     sources are supported; CanRecycle tells whether a volume is, and
//     Recycle returns an ErrUnsupportedVolume error for any other source.
//   - The pod's name, PodName(volume), depends only on the volume's name, so
//     a controller restarted in the middle of a recycle gets AlreadyExists
//     and adopts the running pod instead of starting a second one. It adopts
//     it only when the pod's annotations AnnVolume and AnnVolumeUID name this
//     volume and the pod mounts the volume's source; any other pod of that
//     name is left alone and reported as a *ForeignPodError.
//   - The pod is followed through WatchPod events, not polling. A watch that
//     ends early is opened again and the pod read once more, so no change is
//     missed; watches that keep failing, or ending at once without news, are
//     retried after a pause that doubles from 0.5 s to 30 s.
//   - The wait is bounded by a minimum plus an increment per whole GiB of
//     capacity (Timeout; Kubernetes' defaults: NFS 300 s + 30 s/GiB,
//     HostPath 60 s + 30 s/GiB), measured on Config.Clock; the same limit
//     is set as the pod's activeDeadlineSeconds.
//   - The pod is deleted before Recycle returns, whatever the outcome, with
//     a context not cancelled with the caller's. A failed pod's reason and
//     message come back in a *PodFailedError, a timeout as a *TimeoutError.
//
// Recycle starts no goroutine of its own and stops its watch before it
// returns. It does not change the PersistentVolume: marking it Available
// again, or Failed with the error's message, is the caller's job.
//
// It is for authors of controllers that reclaim Recycle volumes themselves;
// the binder uses it as its VolumeRecycler, and recyclertest fakes its
// PodAPI for their tests.
package recycler
