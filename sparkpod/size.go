/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeShift is log2 of each of Spark's size suffixes in bytes (JavaUtils.byteSuffixes).
var sizeShift = map[string]uint{
	"b": 0, "k": 10, "kb": 10, "m": 20, "mb": 20, "g": 30, "gb": 30, "t": 40, "tb": 40, "p": 50, "pb": 50,
}

// ParseMiB parses a Spark size ("512m", "2g", "1024k", "1t"; MiB when it has no unit) into
// MiB as Spark reads memory settings (JavaUtils.byteStringAs with MiB): a whole number with an
// optional suffix, case-insensitive, converted down to whole MiB. Sizes that do not fit in an
// int64 of bytes are refused rather than wrapped.
func ParseMiB(s string) (int64, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	i := strings.IndexFunc(v, func(r rune) bool { return r < '0' || r > '9' })
	digits, suffix := v, ""
	if i >= 0 {
		digits, suffix = v[:i], v[i:]
	}
	shift, ok := sizeShift[suffix]
	if suffix == "" {
		shift, ok = 20, true
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || !ok {
		return 0, fmt.Errorf("%q is not a Spark memory size such as 512m or 2g", s)
	}
	if shift > 20 && n > math.MaxInt64>>shift || shift <= 20 && n>>(20-shift) > math.MaxInt64>>20 {
		return 0, fmt.Errorf("%q is larger than any memory size Kubernetes can express", s)
	}
	if shift < 20 {
		return n >> (20 - shift), nil
	}
	return n << (shift - 20), nil
}
