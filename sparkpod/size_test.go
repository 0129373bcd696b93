/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package sparkpod

import "testing"

func TestParseMiB(t *testing.T) {
	tests := []struct {
		in   string
		want int64
		err  bool
	}{
		{in: "512m", want: 512}, {in: "512MB", want: 512}, {in: " 1g ", want: 1024}, {in: "2G", want: 2048},
		{in: "2gb", want: 2048}, {in: "1024k", want: 1}, {in: "1500k", want: 1}, {in: "1023k", want: 0},
		{in: "384", want: 384}, {in: "1t", want: 1 << 20}, {in: "1p", want: 1 << 30},
		{in: "1048576b", want: 1}, {in: "3145727b", want: 2},
		{in: "8191p", want: 8191 << 30}, {in: "8192p", err: true}, {in: "99999999999999999999", err: true},
		{in: "", err: true}, {in: "m", err: true}, {in: "1q", err: true}, {in: "1.5g", err: true},
		{in: "-1g", err: true}, {in: "1 g", err: true}, {in: "1gib", err: true},
	}
	for _, tt := range tests {
		got, err := ParseMiB(tt.in)
		if (err != nil) != tt.err || got != tt.want {
			t.Errorf("ParseMiB(%q) = %d, %v; want %d, error %v", tt.in, got, err, tt.want, tt.err)
		}
	}
}
