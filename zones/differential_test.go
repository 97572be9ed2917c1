package zones

import (
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/sets"
	volumehelpers "k8s.io/cloud-provider/volume/helpers"
)

var seedFlag = flag.Uint64("zones.seed", 0, "seed of the randomized tests (0 = from the clock)")

// testRand returns a random source for a randomized test and logs its seed;
// rerun a failure with -zones.seed=<seed>.
func testRand(t testing.TB) (*rand.Rand, uint64) {
	t.Helper()
	seed := *seedFlag
	if seed == 0 {
		seed = uint64(time.Now().UnixNano())
	}
	t.Logf("seed %d (rerun with -zones.seed=%d)", seed, seed)
	return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), seed
}

// zonePool are the zones random inputs draw from: real names, names whose
// sort order differs from their numeric order, and one-letter names.
var zonePool = []string{
	"us-east-1a", "us-east-1b", "us-east-1c", "us-east-1d", "europe-west1-b", "europe-west1-c",
	"z1", "z2", "z10", "a", "b",
}

// randomZones returns up to max distinct zones from zonePool.
func randomZones(rng *rand.Rand, max int) []string {
	n := rng.IntN(max + 1)
	perm := rng.Perm(len(zonePool))
	out := make([]string, 0, n)
	for _, i := range perm[:n] {
		out = append(out, zonePool[i])
	}
	return out
}

// randomClaimName returns a claim name of one of the shapes the hash
// treats differently: StatefulSet claims, name-ordinal, no ordinal, odd
// dashes, and ordinals at and beyond the uint32 limits.
func randomClaimName(rng *rand.Rand) string {
	words := []string{"data", "logs", "www", "henley", "pg", "my-app", "x"}
	word := func() string { return words[rng.IntN(len(words))] }
	ordinals := []string{"0", "1", "2", "3", "7", "12", "007", "2147483648", "4294967294", "4294967295", "4294967296", "99999999999", "+1", "-1", ""}
	ordinal := func() string {
		if rng.IntN(2) == 0 {
			return strconv.Itoa(rng.IntN(40))
		}
		return ordinals[rng.IntN(len(ordinals))]
	}
	switch rng.IntN(6) {
	case 0:
		return word()
	case 1:
		return word() + "-" + ordinal()
	case 2:
		return word() + "-" + word() + "-" + ordinal()
	case 3:
		return word() + "--" + ordinal()
	case 4:
		return word() + "-" + word() + "-"
	default:
		return fmt.Sprintf("%s-%s-%d", word(), word(), rng.Uint32())
	}
}

// TestChooseZonesMatchesCloudProvider is the differential test of
// ChooseZones against cloud-provider's ChooseZonesForVolume on thousands of
// random inputs. The only allowed difference: where the helper's uint32
// arithmetic wraps round to an empty choice, ChooseZones returns
// ErrNoZones.
func TestChooseZonesMatchesCloudProvider(t *testing.T) {
	t.Parallel()
	rng, seed := testRand(t)
	for i := range 20_000 {
		zones := randomZones(rng, 7)
		name := randomClaimName(rng)
		replicas := uint32(rng.IntN(8))

		want := volumehelpers.ChooseZonesForVolume(sets.NewString(zones...), name, replicas)
		got, err := ChooseZones(sets.New(zones...), name, replicas)
		if err != nil {
			if !errors.Is(err, ErrNoZones) || want.Len() != 0 || len(zones) == 0 || replicas == 0 {
				t.Fatalf("seed %d case %d: ChooseZones(%v, %q, %d) error %v; ChooseZonesForVolume = %v",
					seed, i, zones, name, replicas, err, want.List())
			}
			continue
		}
		if !got.Equal(sets.Set[string](want)) {
			t.Fatalf("seed %d case %d: ChooseZones(%v, %q, %d) = %v, ChooseZonesForVolume = %v",
				seed, i, zones, name, replicas, sets.List(got), want.List())
		}
	}
}

// selectInput is one random input of SelectZonesForVolume.
type selectInput struct {
	req                   Request
	hasZone, hasZones     bool
	zoneParam             string
	zonesParam            sets.Set[string]
	allowedTopologiesDesc string
}

func randomSelectInput(rng *rand.Rand) selectInput {
	var in selectInput
	in.req.ClaimName = randomClaimName(rng)
	in.req.Replicas = 1
	if rng.IntN(2) == 0 {
		in.req.Replicas = uint32(2 + rng.IntN(3))
	}
	if rng.IntN(5) > 0 {
		in.req.ZonesWithNodes = sets.New(randomZones(rng, 6)...)
	}

	params := map[string]string{}
	if rng.IntN(4) == 0 {
		params["type"] = "pd-ssd"
	}
	keyCase := func(k string) string {
		if rng.IntN(3) == 0 {
			return strings.ToUpper(k[:1]) + k[1:]
		}
		return k
	}
	switch rng.IntN(8) {
	case 0, 7:
		in.zoneParam = zonePool[rng.IntN(len(zonePool))]
		in.hasZone = true
		params[keyCase("zone")] = in.zoneParam
	case 1, 6:
		zs := randomZones(rng, 5)
		if len(zs) == 0 {
			zs = []string{"us-east-1a"}
		}
		in.zonesParam = sets.New(zs...)
		in.hasZones = true
		sep := ","
		if rng.IntN(2) == 0 {
			sep = ", "
		}
		params[keyCase("zones")] = strings.Join(zs, sep)
	case 2:
		in.zoneParam, in.hasZone = "us-east-1a", true
		in.zonesParam, in.hasZones = sets.New("us-east-1a", "us-east-1b"), true
		params["zone"], params["zones"] = in.zoneParam, "us-east-1a,us-east-1b"
	}

	var terms []v1.TopologySelectorTerm
	if rng.IntN(5) < 2 {
		for range 1 + rng.IntN(3) {
			var term v1.TopologySelectorTerm
			for range rng.IntN(3) {
				key := ZoneLabel
				switch rng.IntN(20) {
				case 0:
					key = "kubernetes.io/hostname"
				case 1, 2, 3, 4, 5:
					key = BetaZoneLabel
				}
				vals := randomZones(rng, 3)
				if len(vals) == 0 {
					vals = []string{"z1"}
				}
				term.MatchLabelExpressions = append(term.MatchLabelExpressions, v1.TopologySelectorLabelRequirement{Key: key, Values: vals})
			}
			terms = append(terms, term)
		}
	}
	if len(params) > 0 || len(terms) > 0 || rng.IntN(2) == 0 {
		in.req.Class = class(params, terms...)
	}
	in.allowedTopologiesDesc = fmt.Sprintf("%+v", terms)

	if rng.IntN(5) < 2 {
		labels := map[string]string{"kubernetes.io/hostname": "n"}
		// Mostly a zone the request allows, as the scheduler guarantees.
		zone := zonePool[rng.IntN(len(zonePool))]
		candidates := sets.List(in.req.ZonesWithNodes)
		if allowed, err := ZonesFromAllowedTopologies(terms); err == nil && allowed.Len() > 0 {
			candidates = sets.List(allowed)
		}
		if len(candidates) > 0 && rng.IntN(10) < 7 {
			zone = candidates[rng.IntN(len(candidates))]
		}
		switch rng.IntN(10) {
		case 0:
			// no zone label
		case 1, 2:
			labels[BetaZoneLabel] = zone
		case 3:
			labels[ZoneLabel] = zone
			labels[BetaZoneLabel] = zonePool[rng.IntN(len(zonePool))]
		default:
			labels[ZoneLabel] = zone
		}
		in.req.SelectedNode = testNode("n", labels)
	}
	return in
}

// TestSelectZonesMatchesCloudProvider is the differential test of
// SelectZones against cloud-provider's SelectZonesForVolume on thousands of
// random inputs covering every branch: zone and zones parameters (alone,
// together, with mixed-case keys), allowedTopologies with several terms
// and both zone keys (and unsupported keys), selected nodes with GA, beta,
// both or no zone labels, and zones with nodes. Both must fail on the same
// inputs and otherwise choose the same zones; the one allowed difference is
// where the helper's uint32 arithmetic wraps round and it returns fewer
// zones than replicas, SelectZones returns ErrNoZones.
func TestSelectZonesMatchesCloudProvider(t *testing.T) {
	t.Parallel()
	rng, seed := testRand(t)
	branches := map[string]int{}
	for i := range 20_000 {
		in := randomSelectInput(rng)
		req := in.req
		var allowed []v1.TopologySelectorTerm
		if req.Class != nil {
			allowed = req.Class.AllowedTopologies
		}
		// The helper modifies zonesWithNodes; give it a copy.
		want, wantErr := volumehelpers.SelectZonesForVolume(in.hasZone, in.hasZones, in.zoneParam,
			sets.NewString(sets.List(in.zonesParam)...), sets.NewString(sets.List(req.ZonesWithNodes)...),
			req.SelectedNode, allowed, req.ClaimName, req.Replicas)
		got, err := SelectZones(req)

		describe := func() string {
			var node map[string]string
			if req.SelectedNode != nil {
				node = req.SelectedNode.Labels
			}
			var params map[string]string
			if req.Class != nil {
				params = req.Class.Parameters
			}
			return fmt.Sprintf("seed %d case %d: claim %q replicas %d zonesWithNodes %v params %v allowedTopologies %s node %v",
				seed, i, req.ClaimName, req.Replicas, sets.List(req.ZonesWithNodes), params, in.allowedTopologiesDesc, node)
		}
		switch {
		case wantErr != nil:
			branches["error"]++
			if err == nil {
				t.Fatalf("%s\nSelectZones = %v, helper error %v", describe(), sets.List(got), wantErr)
			}
		case uint32(want.Len()) < req.Replicas:
			branches["wrapped"]++
			if !errors.Is(err, ErrNoZones) {
				t.Fatalf("%s\nSelectZones = %v, %v; helper wrapped round to %v, want ErrNoZones", describe(), sets.List(got), err, want.List())
			}
		default:
			branches["zones"]++
			if err != nil {
				t.Fatalf("%s\nSelectZones error %v, helper = %v", describe(), err, want.List())
			}
			if !got.Equal(sets.Set[string](want)) {
				t.Fatalf("%s\nSelectZones = %v, helper = %v", describe(), sets.List(got), want.List())
			}
		}
	}
	t.Logf("outcomes: %v", branches)
	for _, b := range []string{"error", "zones"} {
		if branches[b] < 1000 {
			t.Errorf("only %d cases ended in %q; the generator does not cover the helper", branches[b], b)
		}
	}
}
