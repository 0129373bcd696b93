/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package cluster

import (
	"context"
	"sync/atomic"

	"k8s.io/apimachinery/pkg/runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
)

// WriteCounter is a client that counts the requests it sends that write objects (create,
// update, patch, apply, delete; status writes go through Status() and are not counted), for
// tests that require a steady state to cost no write. It is safe for concurrent use.
type WriteCounter struct {
	client.Client
	n atomic.Int32
}

// CountWrites wraps c.
func CountWrites(c client.Client) *WriteCounter { return &WriteCounter{Client: c} }

// Writes is how many writes were sent since the counter was made or last Reset.
func (c *WriteCounter) Writes() int { return int(c.n.Load()) }

// Reset starts the count again from zero.
func (c *WriteCounter) Reset() { c.n.Store(0) }

func (c *WriteCounter) Create(ctx context.Context, obj client.Object, opts ...client.CreateOption) error {
	c.n.Add(1)
	return c.Client.Create(ctx, obj, opts...)
}

func (c *WriteCounter) Update(ctx context.Context, obj client.Object, opts ...client.UpdateOption) error {
	c.n.Add(1)
	return c.Client.Update(ctx, obj, opts...)
}

func (c *WriteCounter) Patch(ctx context.Context, obj client.Object, patch client.Patch, opts ...client.PatchOption) error {
	c.n.Add(1)
	return c.Client.Patch(ctx, obj, patch, opts...)
}

func (c *WriteCounter) Apply(ctx context.Context, obj runtime.ApplyConfiguration, opts ...client.ApplyOption) error {
	c.n.Add(1)
	return c.Client.Apply(ctx, obj, opts...)
}

func (c *WriteCounter) Delete(ctx context.Context, obj client.Object, opts ...client.DeleteOption) error {
	c.n.Add(1)
	return c.Client.Delete(ctx, obj, opts...)
}
