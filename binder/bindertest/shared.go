package bindertest

import (
	v1 "k8s.io/api/core/v1"
)

// SharedVolumes returns the stored version of every PersistentVolume,
// sorted by name, without copying them: they are shared with the Server
// (and with every handler and watch that received them) and must not be
// modified. Later writes store new versions and leave these as they are.
// Use it to read a large store without doubling it; Volumes returns copies
// the caller owns.
func (s *Server) SharedVolumes() []*v1.PersistentVolume {
	return listShared[*v1.PersistentVolume](s, KindVolume)
}

// SharedClaims returns the stored version of every PersistentVolumeClaim,
// sorted by namespace/name, without copying them; see SharedVolumes.
func (s *Server) SharedClaims() []*v1.PersistentVolumeClaim {
	return listShared[*v1.PersistentVolumeClaim](s, KindClaim)
}

func listShared[T object](s *Server, kind Kind) []T {
	s.mu.RLock()
	objs := s.sortedLocked(kind)
	s.mu.RUnlock()
	out := make([]T, len(objs))
	for i, o := range objs {
		out[i] = o.(T)
	}
	return out
}
