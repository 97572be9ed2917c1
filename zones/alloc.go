package zones

import (
	"fmt"
	"math"
	"strconv"

	"k8s.io/apimachinery/pkg/api/resource"
)

// Unit is a provider's allocation unit, in bytes: volumes are created in
// whole units (AWS EBS and GCE PD sizes are whole GiB). The zero Unit means
// GiB. Any positive byte count is a valid Unit; the constants below are the
// common ones.
type Unit int64

// Common allocation units.
const (
	Byte Unit = 1
	KB   Unit = 1000
	KiB  Unit = 1 << 10
	MB   Unit = 1000 * KB
	MiB  Unit = 1 << 20
	GB   Unit = 1000 * MB
	GiB  Unit = 1 << 30
	TB   Unit = 1000 * GB
	TiB  Unit = 1 << 40
)

// DefaultUnit is the allocation unit used when none is given: GiB, the
// unit of AWS EBS and GCE PD sizes.
const DefaultUnit = GiB

// Bytes returns the number of bytes in one unit; DefaultUnit's for the zero
// Unit.
func (u Unit) Bytes() int64 {
	if u == 0 {
		return int64(DefaultUnit)
	}
	return int64(u)
}

// named reports whether the unit has a name of its own ("GiB").
func (u Unit) named() bool {
	switch u.Bytes() {
	case int64(Byte), int64(KB), int64(KiB), int64(MB), int64(MiB), int64(GB), int64(GiB), int64(TB), int64(TiB):
		return true
	}
	return false
}

// String returns the unit's name ("GiB", "MB") or its size in bytes
// ("4096B") for other units.
func (u Unit) String() string {
	switch u.Bytes() {
	case int64(Byte):
		return "B"
	case int64(KB):
		return "KB"
	case int64(KiB):
		return "KiB"
	case int64(MB):
		return "MB"
	case int64(MiB):
		return "MiB"
	case int64(GB):
		return "GB"
	case int64(GiB):
		return "GiB"
	case int64(TB):
		return "TB"
	case int64(TiB):
		return "TiB"
	}
	return strconv.FormatInt(int64(u), 10) + "B"
}

// binary reports whether the unit is a power of two bytes (KiB, MiB, GiB,
// ...) rather than a multiple of 1000 bytes, choosing how Quantity formats
// the allocated size.
func (u Unit) binary() bool {
	b := u.Bytes()
	return b >= 1024 && b&(b-1) == 0
}

// Allocation is a requested size rounded up to whole allocation units: the
// size a provider really allocates. Report it back (Quantity) as the
// volume's capacity rather than the requested size.
type Allocation struct {
	// Units is the number of whole units: the size to send to the
	// provider's API.
	Units int64
	// Unit is the allocation unit; never zero in a result of RoundUp.
	Unit Unit
}

// Bytes returns the allocated size in bytes, Units × Unit. RoundUp only
// returns allocations whose size fits an int64.
func (a Allocation) Bytes() int64 { return a.Units * a.Unit.Bytes() }

// Quantity returns the allocated size for a volume's spec.capacity: in
// binary SI for binary units (2 GiB is "2Gi") and decimal SI otherwise (2 GB
// is "2G"). The result is new and owned by the caller.
func (a Allocation) Quantity() resource.Quantity {
	format := resource.DecimalSI
	if a.Unit.binary() {
		format = resource.BinarySI
	}
	return *resource.NewQuantity(a.Bytes(), format)
}

// Int32 returns Units as an int32, for provider APIs whose size is a 32-bit
// count of units (the AWS EC2 API takes an int32 count of GiB). A count
// that does not fit gives an error wrapping ErrOverflow.
func (a Allocation) Int32() (int32, error) {
	if a.Units > math.MaxInt32 || a.Units < math.MinInt32 {
		return 0, fmt.Errorf("%w: %s is %d units, more than an int32 holds", ErrOverflow, a, a.Units)
	}
	return int32(a.Units), nil
}

// String formats the allocation as units and unit: "2GiB", or "3x4096B"
// for a unit without a name.
func (a Allocation) String() string {
	n := strconv.FormatInt(a.Units, 10)
	if a.Unit.named() {
		return n + a.Unit.String()
	}
	return n + "x" + a.Unit.String()
}

// RoundUp rounds size up to whole units of unit (DefaultUnit, GiB, when
// unit is zero) and returns the allocation: 1500Mi in GiB is 2 GiB, 1500Mi
// in MiB is 1500 MiB. A fractional byte count is rounded up to the next
// byte first. The unit count is the one cloud-provider's RoundUpToGiB,
// RoundUpToMiB, RoundUpToMB, ... return for the same size.
//
// A negative size or unit gives an error wrapping ErrInvalidSize. A size of
// math.MaxInt64 bytes or more, or one whose rounded-up size would not fit
// an int64 of bytes, gives an error wrapping ErrOverflow naming the size;
// it never wraps round. Use Allocation.Int32 for 32-bit provider APIs.
func RoundUp(size resource.Quantity, unit Unit) (Allocation, error) {
	if unit < 0 {
		return Allocation{}, fmt.Errorf("%w: allocation unit %d bytes is negative", ErrInvalidSize, int64(unit))
	}
	if unit == 0 {
		unit = DefaultUnit
	}
	if size.Sign() < 0 {
		return Allocation{}, fmt.Errorf("%w: size %s is negative", ErrInvalidSize, size.String())
	}
	// Value would silently saturate beyond int64; refuse first, as
	// cloud-provider does (CmpInt64 also reports 0 for larger values).
	if size.CmpInt64(math.MaxInt64) >= 0 {
		return Allocation{}, fmt.Errorf("%w: size %s does not fit in an int64 of bytes", ErrOverflow, size.String())
	}
	bytes := size.Value()
	per := unit.Bytes()
	units := bytes / per
	if bytes%per != 0 {
		units++
	}
	if units > math.MaxInt64/per {
		return Allocation{}, fmt.Errorf("%w: size %s rounded up to whole %s is more than an int64 of bytes holds",
			ErrOverflow, size.String(), unit)
	}
	return Allocation{Units: units, Unit: unit}, nil
}
