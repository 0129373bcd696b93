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

// sizeUnits are Spark's binary size suffixes in MiB (JavaUtils.byteStringAs): "k", "m", "g",
// "t", "p", each optionally followed by "b".
var sizeUnits = map[byte]float64{'k': 1.0 / 1024, 'm': 1, 'g': 1024, 't': 1024 * 1024, 'p': 1024 * 1024 * 1024}

// ParseMiB parses a Spark size ("512m", "2g", "1024k", "1t"; MiB when it has no unit) into
// MiB, rounding a fraction of a MiB up, as Spark does for memory settings. Sizes that do not
// fit in an int64 of bytes are refused rather than wrapped.
func ParseMiB(s string) (int64, error) {
	v := strings.ToLower(strings.TrimSpace(s))
	v = strings.TrimSuffix(v, "b")
	mult := 1.0
	if n := len(v); n > 0 {
		if m, ok := sizeUnits[v[n-1]]; ok {
			mult, v = m, v[:n-1]
		}
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a Spark memory size such as 512m or 2g", s)
	}
	mib := math.Ceil(float64(n) * mult)
	if mib > float64(math.MaxInt64>>20) {
		return 0, fmt.Errorf("%q is larger than any memory size Kubernetes can express", s)
	}
	return int64(mib), nil
}
