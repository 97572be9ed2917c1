package bindertest

import "github.com/volbind/volbind/internal/dedup"

// internParts says which parts of a version the Server shares with equal
// stored ones: the parts a write took from the version before are shared
// with it already.
type internParts = dedup.Parts

const (
	internMetaSpec = dedup.MetaSpec
	internStatus   = dedup.Status
	internAll      = dedup.All
)

// share shares the maps of obj's parts with equal ones already stored
// (internal/dedup); obj is a version about to be stored that no one else
// holds yet. The table has its own lock: writes share before they take
// s.mu.
func (s *Server) share(obj object, parts internParts) {
	s.intern.Share(obj, parts)
}
