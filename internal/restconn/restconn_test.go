/*
Copyright 2026 The Spark Operator Authors.
SPDX-License-Identifier: Apache-2.0
Licensed under the Apache License, Version 2.0 (the "License"); you may not use this file except in
compliance with the License. A copy is available at http://www.apache.org/licenses/LICENSE-2.0.
*/

package restconn

import (
	"testing"

	"k8s.io/client-go/rest"
)

// TestOwnSharesNoTransport: client-go hands two clients of one configuration the same
// transport (one connection); Own never does, and leaves the configuration as it was.
func TestOwnSharesNoTransport(t *testing.T) {
	cfg := &rest.Config{Host: "https://127.0.0.1:6443", TLSClientConfig: rest.TLSClientConfig{Insecure: true}}
	shared1, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	shared2, err := rest.HTTPClientFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if shared1.Transport != shared2.Transport {
		t.Fatal("client-go no longer shares transports: Own is not needed")
	}
	own1, err := Own(cfg)
	if err != nil {
		t.Fatal(err)
	}
	own2, err := Own(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if own1.Transport == own2.Transport || own1.Transport == shared1.Transport {
		t.Error("Own returned a transport another client has")
	}
	if cfg.Dial != nil {
		t.Error("Own changed the configuration it was given")
	}
}
