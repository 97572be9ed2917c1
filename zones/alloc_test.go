package zones

import (
	"errors"
	"math"
	"math/big"
	"strconv"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/resource"
	volumehelpers "k8s.io/cloud-provider/volume/helpers"
)

func TestRoundUp(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		size      string
		unit      Unit
		wantUnits int64
		wantQty   string // the allocated size as a Quantity
		wantStr   string
		wantErr   error
	}{
		{name: "default unit is GiB", size: "1500Mi", unit: 0, wantUnits: 2, wantQty: "2Gi", wantStr: "2GiB"},
		{name: "exact GiB", size: "1Gi", unit: GiB, wantUnits: 1, wantQty: "1Gi", wantStr: "1GiB"},
		{name: "one byte over", size: "1073741825", unit: GiB, wantUnits: 2, wantQty: "2Gi", wantStr: "2GiB"},
		{name: "decimal request in GiB", size: "1G", unit: GiB, wantUnits: 1, wantQty: "1Gi", wantStr: "1GiB"},
		{name: "MiB", size: "1500Mi", unit: MiB, wantUnits: 1500, wantQty: "1500Mi", wantStr: "1500MiB"},
		{name: "MiB from decimal", size: "1G", unit: MiB, wantUnits: 954, wantQty: "954Mi", wantStr: "954MiB"},
		{name: "GB", size: "1Gi", unit: GB, wantUnits: 2, wantQty: "2G", wantStr: "2GB"},
		{name: "GB exact", size: "3G", unit: GB, wantUnits: 3, wantQty: "3G", wantStr: "3GB"},
		{name: "MB", size: "1Mi", unit: MB, wantUnits: 2, wantQty: "2M", wantStr: "2MB"},
		{name: "TiB", size: "1025Gi", unit: TiB, wantUnits: 2, wantQty: "2Ti", wantStr: "2TiB"},
		{name: "bytes", size: "1234", unit: Byte, wantUnits: 1234, wantQty: "1234", wantStr: "1234B"},
		{name: "custom unit", size: "10000", unit: 4096, wantUnits: 3, wantQty: "12Ki", wantStr: "3x4096B"},
		{name: "fractional byte rounds up", size: "1500m", unit: Byte, wantUnits: 2, wantQty: "2", wantStr: "2B"},
		{name: "zero", size: "0", unit: GiB, wantUnits: 0, wantQty: "0", wantStr: "0GiB"},
		{name: "largest GiB count", size: strconv.FormatInt(math.MaxInt64/(1<<30)*(1<<30), 10), unit: GiB,
			wantUnits: math.MaxInt64 / (1 << 30), wantQty: "8589934591Gi", wantStr: "8589934591GiB"},
		{name: "negative", size: "-1Gi", unit: GiB, wantErr: ErrInvalidSize},
		{name: "negative unit", size: "1Gi", unit: -1, wantErr: ErrInvalidSize},
		{name: "too large for int64", size: "9223372036854775807", unit: Byte, wantErr: ErrOverflow},
		{name: "far too large", size: "16Ei", unit: GiB, wantErr: ErrOverflow},
		{name: "rounded up size too large", size: "9223372036854775000", unit: GiB, wantErr: ErrOverflow},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			size := resource.MustParse(tc.size)
			got, err := RoundUp(size, tc.unit)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("RoundUp(%s, %v) = %v, %v, want error %v", tc.size, tc.unit, got, err, tc.wantErr)
				}
				if tc.unit >= 0 && !strings.Contains(err.Error(), size.String()) {
					t.Errorf("RoundUp(%s) error %q does not name the size", tc.size, err)
				}
				return
			}
			if err != nil {
				t.Fatalf("RoundUp(%s, %v) error: %v", tc.size, tc.unit, err)
			}
			if got.Units != tc.wantUnits {
				t.Errorf("RoundUp(%s, %v).Units = %d, want %d", tc.size, tc.unit, got.Units, tc.wantUnits)
			}
			if got.Unit == 0 {
				t.Errorf("RoundUp(%s, %v).Unit = 0, want the unit really used", tc.size, tc.unit)
			}
			q := got.Quantity()
			if q.String() != tc.wantQty {
				t.Errorf("RoundUp(%s, %v).Quantity() = %s, want %s", tc.size, tc.unit, q.String(), tc.wantQty)
			}
			if got.String() != tc.wantStr {
				t.Errorf("RoundUp(%s, %v).String() = %q, want %q", tc.size, tc.unit, got.String(), tc.wantStr)
			}
			if q.Cmp(size) < 0 {
				t.Errorf("RoundUp(%s, %v) allocated %s, less than requested", tc.size, tc.unit, q.String())
			}
			if got.Bytes() != q.Value() {
				t.Errorf("Bytes() = %d, Quantity() = %d", got.Bytes(), q.Value())
			}
		})
	}
}

func TestAllocationInt32(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		a       Allocation
		want    int32
		wantErr bool
	}{
		{name: "small", a: Allocation{Units: 16, Unit: GiB}, want: 16},
		{name: "largest", a: Allocation{Units: math.MaxInt32, Unit: GiB}, want: math.MaxInt32},
		{name: "too large", a: Allocation{Units: math.MaxInt32 + 1, Unit: GiB}, wantErr: true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got, err := tc.a.Int32()
			if tc.wantErr {
				if !errors.Is(err, ErrOverflow) {
					t.Fatalf("Int32() = %d, %v, want ErrOverflow", got, err)
				}
				return
			}
			if err != nil || got != tc.want {
				t.Fatalf("Int32() = %d, %v, want %d", got, err, tc.want)
			}
		})
	}
}

func TestUnit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		u     Unit
		bytes int64
		name  string
	}{
		{0, 1 << 30, "GiB"}, {Byte, 1, "B"}, {KB, 1000, "KB"}, {KiB, 1024, "KiB"}, {MB, 1e6, "MB"},
		{MiB, 1 << 20, "MiB"}, {GB, 1e9, "GB"}, {GiB, 1 << 30, "GiB"}, {TB, 1e12, "TB"}, {TiB, 1 << 40, "TiB"},
		{512, 512, "512B"},
	} {
		if tc.u.Bytes() != tc.bytes || tc.u.String() != tc.name {
			t.Errorf("Unit(%d): Bytes() = %d, String() = %q, want %d, %q", int64(tc.u), tc.u.Bytes(), tc.u.String(), tc.bytes, tc.name)
		}
	}
}

// TestRoundUpMatchesCloudProvider compares RoundUp with cloud-provider's
// RoundUpTo* helpers on random sizes of every magnitude and format. They
// must agree on the unit count wherever the helper succeeds and the
// allocated size fits an int64; RoundUp refuses exactly the rest.
func TestRoundUpMatchesCloudProvider(t *testing.T) {
	t.Parallel()
	rng, seed := testRand(t)
	helpers := []struct {
		unit Unit
		fn   func(resource.Quantity) (int64, error)
	}{
		{GiB, volumehelpers.RoundUpToGiB}, {MiB, volumehelpers.RoundUpToMiB}, {MB, volumehelpers.RoundUpToMB},
		{KiB, volumehelpers.RoundUpToKiB}, {KB, volumehelpers.RoundUpToKB}, {Byte, volumehelpers.RoundUpToB},
	}
	formats := []resource.Format{resource.BinarySI, resource.DecimalSI, resource.DecimalExponent}
	maxBytes := new(big.Int).SetInt64(math.MaxInt64)
	for i := range 5000 {
		var size resource.Quantity
		switch rng.IntN(4) {
		case 0: // any int64 magnitude
			size = *resource.NewQuantity(rng.Int64N(math.MaxInt64)>>rng.IntN(63), formats[rng.IntN(len(formats))])
		case 1: // near a unit boundary
			h := helpers[rng.IntN(len(helpers))]
			size = *resource.NewQuantity(int64(h.unit)*rng.Int64N(1<<20)+rng.Int64N(3)-1, formats[rng.IntN(len(formats))])
		case 2: // milli-units: fractional bytes
			size = *resource.NewMilliQuantity(rng.Int64N(1<<40), resource.DecimalSI)
		default: // near and beyond the int64 limit
			size = *resource.NewQuantity(math.MaxInt64-rng.Int64N(1<<32), resource.DecimalSI)
			if rng.IntN(2) == 0 {
				size.Add(*resource.NewQuantity(rng.Int64N(1<<40), resource.DecimalSI))
			}
		}
		if size.Sign() < 0 {
			continue
		}
		for _, h := range helpers {
			want, wantErr := h.fn(size)
			got, err := RoundUp(size, h.unit)
			fits := wantErr == nil && new(big.Int).Mul(big.NewInt(want), big.NewInt(int64(h.unit))).Cmp(maxBytes) <= 0
			switch {
			case fits:
				if err != nil || got.Units != want || got.Unit != h.unit {
					t.Fatalf("seed %d case %d: RoundUp(%s, %s) = %v, %v; helper = %d", seed, i, size.String(), h.unit, got, err, want)
				}
			case !errors.Is(err, ErrOverflow):
				t.Fatalf("seed %d case %d: RoundUp(%s, %s) = %v, %v, want ErrOverflow (helper %d, %v)", seed, i, size.String(), h.unit, got, err, want, wantErr)
			}
		}
		if got, err := RoundUp(size, GiB); err == nil {
			want, wantErr := volumehelpers.RoundUpToGiBInt32(size)
			got32, err := got.Int32()
			if (err != nil) != (wantErr != nil) || (err == nil && got32 != want) {
				t.Fatalf("seed %d case %d: Int32 of %s = %d, %v; RoundUpToGiBInt32 = %d, %v", seed, i, size.String(), got32, err, want, wantErr)
			}
		}
	}
}
