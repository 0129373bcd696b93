/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package gang

import (
	"sync"
	"time"
)

// followUp asks for a cycle at a later time, for work a cycle held back (a write paced, a
// reason not due yet): with or without an event between, that cycle does it. Only the soonest
// cycle asked for is remembered: once it came, one asked for later may be asked for again (a
// cycle more, at worst).
type followUp struct {
	mu sync.Mutex
	// at is when the cycle asked for comes (zero: none).
	at time.Time
	// afterFunc runs f after d (time.AfterFunc when nil; tests set it).
	afterFunc func(d time.Duration, f func())
}

// after asks for a cycle wait after now, unless one is asked for by then already.
func (p *followUp) after(now time.Time, wait time.Duration, trigger func()) {
	at := now.Add(wait)
	p.mu.Lock()
	if !p.at.IsZero() && !at.Before(p.at) {
		p.mu.Unlock()
		return
	}
	p.at = at
	p.mu.Unlock()
	after := p.afterFunc
	if after == nil {
		after = func(d time.Duration, f func()) { time.AfterFunc(d, f) }
	}
	after(wait, func() {
		p.mu.Lock()
		if p.at.Equal(at) {
			p.at = time.Time{}
		}
		p.mu.Unlock()
		trigger()
	})
}
